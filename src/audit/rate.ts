/** Jobs per second over `ms` milliseconds, rounded; a run too short to time counts as 1 µs. */
export function jobsPerSec(jobs: number, ms: number): number {
  return Math.round(jobs / (Math.max(ms, 0.001) / 1000));
}

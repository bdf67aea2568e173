/**
 * Progress for long runs, on stderr and only on a terminal (a pipe or a CI log gets nothing): one
 * line rewritten in place, saying how many expired leases are still in `active`, read from the
 * server once a second. Quiet for the first second, so short runs print nothing.
 */
import type { Redis } from 'ioredis';

export type ProgressWriter = (text: string) => void;

const EVERY_MS = 1000;

/** The line shown while a race runs. */
export function progressLine(label: string, left: number, jobs: number): string {
  const done = Math.max(0, jobs - left);
  const percent = jobs > 0 ? Math.floor((100 * done) / jobs) : 100;
  return `${label}: ${done}/${jobs} leases reclaimed (${percent}%)`;
}

/**
 * Polls `active` until stopped; stopping clears the line if one was shown. `live` jobs hold valid
 * leases in `active` the whole run and are not counted as left to reclaim.
 */
export function watchProgress(write: ProgressWriter, redis: Redis, active: string, label: string, jobs: number, live: number): () => void {
  let shown = false;
  let busy = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    redis
      .zcard(active)
      .then((left) => {
        if (stopped) return;
        write(`\r\x1b[2K${progressLine(label, Math.max(0, left - live), jobs)}`);
        shown = true;
      })
      .catch(() => {})
      .finally(() => (busy = false));
  }, EVERY_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
    if (shown) write('\r\x1b[2K');
  };
}

/**
 * One summed row per mode (per mode and trial, with --trials) when several queues ran at once:
 * counts and jobs add up; the wall time is the longest queue's (they ran side by side), so jobs/s
 * is all jobs over that; latencies are the worst queue's, since percentiles of separate runs do
 * not add.
 */
import { ANOMALIES } from './audit.js';
import type { RunResult } from './run.js';

const SUMMED = [
  'jobs',
  'sweepers',
  'recoveries',
  ...ANOMALIES,
  'jobsRecoveredMoreThanOnce',
  'unacknowledgedMoves',
  'roundTrips',
  'sweeps',
  'retries',
  'noscriptFallbacks',
] as const satisfies readonly (keyof RunResult)[];

const WORST = ['callMsP50', 'callMsP99', 'callMsMax', 'serverCallMsP99'] as const satisfies readonly (keyof RunResult)[];

function worst(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? Math.max(...known) : null;
}

/** The totals row of every mode (and trial) present in `runs`, in order of first appearance. */
export function totalsPerMode(runs: readonly RunResult[]): RunResult[] {
  const groups = new Map<string, RunResult[]>();
  for (const run of runs) {
    const key = `${run.mode}\u0000${run.trial}`;
    const group = groups.get(key);
    if (group) group.push(run);
    else groups.set(key, [run]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0] as RunResult;
    const sums = Object.fromEntries(SUMMED.map((field) => [field, group.reduce((sum, run) => sum + run[field], 0)]));
    const worsts = Object.fromEntries(WORST.map((field) => [field, worst(group.map((run) => run[field]))]));
    const wallMs = Math.max(...group.map((run) => run.wallMs));
    return {
      ...first,
      ...sums,
      ...worsts,
      queue: `${group.length} queue${group.length === 1 ? '' : 's'}`,
      node: [...new Set(group.map((run) => run.node).filter((n): n is string => n !== undefined))].join(','),
      wallMs,
      jobsPerSec: Math.round((sums.jobs ?? 0) / (Math.max(wallMs, 0.001) / 1000)),
      cutShort: group.some((run) => run.cutShort),
    } as RunResult;
  });
}

/**
 * One summed row per mode (per mode and trial, with --trials) when several queues ran at once:
 * counts and jobs add up (observer samples, worker executions and fault counts too, so that a
 * summed anomaly sits beside the sums it came from; a count no queue measured stays null); the
 * most entries of one job in pending is the largest queue's; the sweepers, workers and live jobs add
 * up (all that raced at once), the other settings are the first queue's; the server's µs per job is
 * over all the queues' jobs; the
 * wall time is the longest queue's (they ran side by side), so jobs/s is all jobs over that;
 * latencies are the worst queue's, since percentiles of separate runs do not add.
 */
import { FIGURES, jobsPerSec, jobsRaced, type LapsedLockFigures, type RunResult } from '../shared/model.js';

/** Counts of the run beside its figures (FIGURES, every one of which is summed too). */
const SUMMED = [
  'jobs',
  'sweepers',
  'jobsRecoveredMoreThanOnce',
  'duplicatePendingAtEnd',
  'roundTrips',
  'sweeps',
  'live',
] as const satisfies readonly (keyof RunResult)[];

/** Counts present only with some flags (--workers, --cycles, --observe): summed where present. */
const SUMMED_IF_PRESENT = [
  'executions',
  'workerNoscriptFallbacks',
  'releaserNoscriptFallbacks',
  'observerNoscriptFallbacks',
] as const satisfies readonly (keyof RunResult)[];

/** Counts some runs do not measure (null): summed over the queues that did. */
const SUMMED_IF_MEASURED = ['forgottenStallCount', 'overcountedStallCount'] as const satisfies readonly (keyof RunResult)[];

const WORST = ['callMsP50', 'callMsP99', 'callMsMax', 'serverCallMsP99'] as const satisfies readonly (keyof RunResult)[];

function sumIfPresent(values: readonly (number | undefined)[]): number | undefined {
  const known = values.filter((v): v is number => v !== undefined);
  return known.length > 0 ? known.reduce((sum, v) => sum + v, 0) : undefined;
}

/** What the faults did, field by field over the queues that had any. */
function sumFaultCounts(counts: readonly RunResult['faultCounts'][]): RunResult['faultCounts'] {
  const known = counts.filter((c): c is NonNullable<RunResult['faultCounts']> => c !== undefined);
  const first = known[0];
  if (!first) return undefined;
  const keys = Object.keys(first) as (keyof typeof first)[];
  return Object.fromEntries(keys.map((key) => [key, known.reduce((sum, c) => sum + c[key], 0)])) as unknown as RunResult['faultCounts'];
}

/**
 * A figure over the queues: the sum of those that measured it; where none did, what the first
 * says (null, not measured, or absent for a flag not given).
 */
function sumFigure(values: readonly (number | null | undefined)[]): number | null | undefined {
  const known = values.filter((v): v is number => typeof v === 'number');
  return known.length > 0 ? known.reduce((sum, v) => sum + v, 0) : values[0];
}

function sumIfMeasured(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? known.reduce((sum, v) => sum + v, 0) : null;
}

function worst(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length > 0 ? Math.max(...known) : null;
}

/**
 * The server's µs per job over the queues: every queue's server time over all their jobs, when
 * each measured its own (a cluster's queues, each on its own node; on one server --queues leaves
 * each null, their script time being shared); null when one did not, absent when none was asked.
 */
function serverUsOverall(group: readonly RunResult[]): number | null | undefined {
  if (group.every((run) => run.serverUsPerJob === undefined)) return undefined;
  let usec = 0;
  let jobs = 0;
  for (const run of group) {
    if (typeof run.serverUsPerJob !== 'number') return null;
    usec += run.serverUsPerJob * jobsRaced(run);
    jobs += jobsRaced(run);
  }
  return jobs > 0 ? Math.round((usec / jobs) * 1000) / 1000 : null;
}

/** --fault lapsed-lock's figures over several queues: each count summed, the library's words the first run's that has any. Pure. */
export function sumLapsedLock(all: readonly (LapsedLockFigures | undefined)[]): LapsedLockFigures | undefined {
  const figures = all.filter((f): f is LapsedLockFigures => f !== undefined);
  const [first] = figures;
  if (!first) return undefined;
  const sum = (field: 'lapsedJobs' | 'recovered' | 'executedTwice' | 'lateCompletionsRefused' | 'lateCompletionsAccepted' | 'secondRunsRefused'): number =>
    figures.reduce((total, f) => total + f[field], 0);
  return {
    ...first,
    lapsedJobs: sum('lapsedJobs'),
    recovered: sum('recovered'),
    executedTwice: sum('executedTwice'),
    lateCompletionsRefused: sum('lateCompletionsRefused'),
    lateCompletionsAccepted: sum('lateCompletionsAccepted'),
    secondRunsRefused: sum('secondRunsRefused'),
    refusal: figures.find((f) => f.refusal !== null)?.refusal ?? null,
  };
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
    const figures = Object.fromEntries(
      FIGURES.map((figure) => [
        figure.field,
        sumFigure(group.map((run) => (run as unknown as Readonly<Record<string, number | null | undefined>>)[figure.field])),
      ]),
    );
    const sums = Object.fromEntries(SUMMED.map((field) => [field, group.reduce((sum, run) => sum + run[field], 0)]));
    const present = Object.fromEntries(SUMMED_IF_PRESENT.map((field) => [field, sumIfPresent(group.map((run) => run[field]))]));
    const measured = Object.fromEntries(SUMMED_IF_MEASURED.map((field) => [field, sumIfMeasured(group.map((run) => run[field]))]));
    const worsts = Object.fromEntries(WORST.map((field) => [field, worst(group.map((run) => run[field]))]));
    const wallMs = Math.max(...group.map((run) => run.wallMs));
    return {
      ...first,
      ...figures,
      ...sums,
      ...present,
      ...measured,
      mostPendingEntries: Math.max(...group.map((run) => run.mostPendingEntries)),
      // One job's commands belong to its own queue's row, and so do its phases: queues run side by side.
      example: null,
      phasesMs: undefined,
      faultCounts: sumFaultCounts(group.map((run) => run.faultCounts)),
      ...(first.lapsedLock ? { lapsedLock: sumLapsedLock(group.map((run) => run.lapsedLock)) } : {}),
      ...worsts,
      serverUsPerJob: serverUsOverall(group),
      // Every queue's workers ran at once, as its sweepers did.
      consequences: { ...first.consequences, workers: group.reduce((sum, run) => sum + run.consequences.workers, 0) },
      queue: `${group.length} queue${group.length === 1 ? '' : 's'}`,
      node: [...new Set(group.map((run) => run.node).filter((n): n is string => n !== undefined))].join(','),
      wallMs,
      jobsPerSec: jobsPerSec(
        group.reduce((sum, run) => sum + jobsRaced(run), 0),
        wallMs,
      ),
      cutShort: group.some((run) => run.cutShort),
    } as RunResult;
  });
}

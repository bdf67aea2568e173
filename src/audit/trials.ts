/**
 * The arithmetic of --trials: per mode, how often the race showed (the reproduction rate) and the
 * spread (min / median / max) of every anomaly count and of the throughput. A count no trial
 * measured (double executions without workers, say) has no spread: null. Pure functions, so the
 * statistics are tested directly.
 */
import { isClean } from './rules.js';
import { ANOMALIES, type Anomaly, type AuditCounts } from '../shared/model.js';

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

/** Min, median and max; the median of an even count is the mean of the middle two. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new Error('spread of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  return { min: sorted[0] ?? 0, median, max: sorted[sorted.length - 1] ?? 0 };
}

/** The share of trials that showed at least one anomaly, 0 to 1. */
export function reproductionRate(dirty: number, trials: number): number {
  if (trials <= 0) throw new Error('a rate over no trials');
  return dirty / trials;
}

/** The spread of the values measured; null when none was. */
function spreadOfMeasured(values: readonly (number | null)[]): Spread | null {
  const measured = values.filter((v): v is number => v !== null);
  return measured.length > 0 ? spread(measured) : null;
}

/** What a trial contributes: its mode, its counts and its throughput. */
export type TrialRun = Pick<AuditCounts, Anomaly> & { readonly mode: string; readonly jobsPerSec: number };

export type TrialSummary = {
  readonly mode: string;
  readonly trials: number;
  /** Trials with at least one anomaly. */
  readonly reproduced: number;
  readonly reproductionRate: number;
  readonly jobsPerSec: Spread;
} & { readonly [name in Anomaly]: Spread | null };

/** One summary per mode, in the order the modes first ran. */
export function summarizeTrials(runs: readonly TrialRun[]): TrialSummary[] {
  const byMode = new Map<string, TrialRun[]>();
  for (const run of runs) {
    const list = byMode.get(run.mode);
    if (list) list.push(run);
    else byMode.set(run.mode, [run]);
  }
  return [...byMode].map(([mode, list]) => {
    const reproduced = list.filter((run) => !isClean(run)).length;
    const anomalies = Object.fromEntries(ANOMALIES.map((name) => [name, spreadOfMeasured(list.map((run) => run[name]))])) as {
      [name in Anomaly]: Spread | null;
    };
    return {
      mode,
      trials: list.length,
      reproduced,
      reproductionRate: reproductionRate(reproduced, list.length),
      // A whole number of jobs per second, as each run's: the median of an even count is rounded.
      jobsPerSec: roundedMedian(spread(list.map((run) => run.jobsPerSec))),
      ...anomalies,
    };
  });
}

/** The spread with its median rounded to a whole number (two trials' median may fall between two). */
function roundedMedian(figures: Spread): Spread {
  return { ...figures, median: Math.round(figures.median) };
}

/**
 * The JSON objects the pages are drawn from, as `--json` prints them. The page reads only these,
 * so what a reader sees and the data block embedded beside it cannot disagree.
 */
import { ANOMALIES, type Anomaly, type FigureSources, type InterleavingExample, type Reply } from '../model.js';

export interface ServerJson {
  readonly kind: string;
  readonly version: string;
  /** Already redacted: a password never reaches the JSON. */
  readonly url: string;
  /** A cluster's primaries (`host:port`). */
  readonly primaries?: readonly string[];
}

export interface RunJson {
  readonly mode: string;
  /** Present when the run is one of several trials of its mode. */
  readonly trial?: number;
  readonly queue: string;
  /** `host:port` of the node the queue lived on (with --queues or a cluster: every run's own). */
  readonly node?: string | null;
  readonly sweepers: number;
  readonly jobs: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly recoveries: number;
  readonly doubleRecoveries: number;
  readonly duplicatePending: number;
  readonly lostIncrements: number;
  readonly extraIncrements: number;
  readonly lostJobs: number;
  readonly misplaced: number;
  readonly unreclaimed: number;
  /**
   * Anomaly counts that only some runs measure (live leases, user scripts, workers, cycles,
   * observer): null where the run did not measure it.
   */
  readonly stolenLeases?: number | null;
  readonly misreported?: number | null;
  readonly forgottenStalls?: number | null;
  readonly doubleExecutions?: number | null;
  readonly deadLetterEscapes?: number;
  readonly windowInNeither?: number | null;
  readonly windowInBoth?: number | null;
  readonly wallMs: number;
  readonly jobsPerSec: number;
  readonly roundTrips?: number;
  readonly sweeps?: number;
  readonly cutShort?: boolean;
  /** Where each anomaly figure comes from. */
  readonly sources?: FigureSources;
  /** A loop run's doubly recovered job, command by command. */
  readonly example?: InterleavingExample | null;
}

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

/** One mode's summary over its trials; each anomaly count has a Spread under its own name. */
export interface TrialSummaryJson {
  readonly mode: string;
  readonly trials: number;
  /** Share of the mode's trials that showed at least one anomaly, 0 to 1. */
  readonly reproductionRate: number;
  readonly jobsPerSec: Spread;
  readonly [count: string]: unknown;
}

export interface RaceReportJson {
  readonly server: ServerJson;
  readonly runs: readonly RunJson[];
  /** With --queues or a cluster: one summed row per mode (and trial). */
  readonly totals?: readonly RunJson[];
  readonly trials?: readonly TrialSummaryJson[];
}

export interface StepJson {
  readonly sweep: string;
  readonly step: string;
  readonly commands: readonly (readonly string[])[];
  readonly replies: readonly Reply[];
}

export interface ReplayJson {
  readonly mode: string;
  readonly queue: string;
  readonly jobId: string;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly schedule: readonly string[];
  readonly steps: readonly StepJson[];
  readonly readout: {
    readonly recoverCount: number;
    readonly pendingEntries: number;
    readonly stalled: number | null;
    readonly expectedStalled: number;
    readonly lostIncrements: number;
    readonly extraIncrements: number;
    readonly endedIn: readonly string[];
  };
}

export interface ReplaysJson {
  readonly server: ServerJson;
  readonly replays: readonly ReplayJson[];
}

export interface CounterJson {
  readonly server: ServerJson;
  readonly counter: string;
  readonly queue: string;
  readonly jobId: string;
  readonly before: number;
  readonly after: number;
  readonly steps: readonly StepJson[];
  readonly readout: { readonly expected: number; readonly reached: number; readonly lost: number; readonly extra: number };
}

export type ExplainReportJson = ReplaysJson | CounterJson;

export function isSpread(value: unknown): value is Spread {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.min === 'number' && typeof v.median === 'number' && typeof v.max === 'number';
}

/** The anomaly counts the report carries: every one some run (or trial summary) measured. */
export function reportedAnomalies(rows: readonly object[]): Anomaly[] {
  return ANOMALIES.filter((name) => rows.some((row) => name in row && (row as Record<string, unknown>)[name] !== undefined && (row as Record<string, unknown>)[name] !== null));
}

/** A run's count; null where the run did not measure it. */
export function anomalyOf(run: RunJson, name: Anomaly): number | null {
  return run[name] ?? null;
}

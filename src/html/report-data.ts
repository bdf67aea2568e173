/**
 * The JSON objects the pages are drawn from, as `--json` prints them. The page reads only these,
 * so what a reader sees and the data block embedded beside it cannot disagree.
 */
import type { Reply } from '../explain/wire.js';
import { ANOMALIES } from '../model.js';
import type { LatencyReport } from '../server/latency-proxy.js';

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
  /** Anomaly counts that only some runs report (live leases, user scripts, workers, cycles, observer). */
  readonly stolenLeases?: number;
  readonly misreported?: number;
  readonly doubleExecutions?: number;
  readonly deadLetterEscapes?: number;
  readonly windowInNeither?: number;
  readonly windowInBoth?: number;
  readonly wallMs: number;
  readonly jobsPerSec: number;
  readonly roundTrips?: number;
  readonly sweeps?: number;
  readonly cutShort?: boolean;
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
  /** With --latency: asked for and measured through the proxy. */
  readonly latency?: LatencyReport;
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
    readonly lostIncrements: number;
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
  readonly readout: { readonly expected: number; readonly reached: number; readonly lost: number };
}

export type ExplainReportJson = ReplaysJson | CounterJson;

export function isSpread(value: unknown): value is Spread {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.min === 'number' && typeof v.median === 'number' && typeof v.max === 'number';
}

type Anomaly = (typeof ANOMALIES)[number];

/** The anomaly counts the report carries: every one some run (or trial summary) has a value for. */
export function reportedAnomalies(rows: readonly object[]): Anomaly[] {
  return ANOMALIES.filter((name) => rows.some((row) => name in row && (row as Record<string, unknown>)[name] !== undefined));
}

/** A run's count; 0 where the run does not report it. */
export function anomalyOf(run: RunJson, name: Anomaly): number {
  return run[name] ?? 0;
}

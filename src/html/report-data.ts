/**
 * The JSON objects the pages are drawn from, as `--json` prints them. The page reads only these,
 * so what a reader sees and the data block embedded beside it cannot disagree.
 */
import type { Spread } from '../audit/trials.js';
import { ANOMALIES, type Anomaly, type Reply, type ShrunkWitness } from '../shared/model.js';
import type { JsonHeader, RunJson as ReportRunJson, ServerJson } from '../report/json.js';
import type { LatencyReport } from '../server/latency-proxy.js';

/**
 * What the page reads of a run: the report's RunJson (report/json.ts), with the fields that not
 * every run carries (or that pages of older reports lack) optional. The report's own JSON is
 * assignable to it as it is, so producer and page are tied by the types, not by a cast.
 */
export type RunJson = Pick<ReportRunJson, PageRunFields> &
  Partial<Omit<ReportRunJson, PageRunFields | 'mode' | 'node'>> & {
    readonly mode: string;
    readonly node?: string | null;
  };

type PageRunFields =
  | 'queue'
  | 'sweepers'
  | 'jobs'
  | 'batch'
  | 'maxStalled'
  | 'stalledBefore'
  | 'recoveries'
  | 'doubleRecoveries'
  | 'duplicatePending'
  | 'lostIncrements'
  | 'extraIncrements'
  | 'lostJobs'
  | 'misplaced'
  | 'unreclaimed'
  | 'wallMs'
  | 'jobsPerSec';

/** One mode's summary over its trials; each anomaly count has a Spread under its own name. */
export interface TrialSummaryJson {
  readonly mode: string;
  readonly trials: number;
  /** Share of the mode's trials that showed at least one anomaly, 0 to 1. */
  readonly reproductionRate: number;
  readonly jobsPerSec: Spread;
  readonly [count: string]: unknown;
}

/** The race report as the page reads it; ReportJson (report/json.ts) is assignable to it. */
export interface RaceReportJson extends Partial<JsonHeader> {
  readonly server: ServerJson;
  /** With --latency: asked for and measured through the proxy. */
  readonly latency?: LatencyReport;
  readonly runs: readonly RunJson[];
  /** With --queues or a cluster: one summed row per mode (and trial). */
  readonly totals?: readonly RunJson[];
  readonly trials?: readonly TrialSummaryJson[];
  /** With --shrink, when a loop run found an anomaly. */
  readonly shrink?: ShrunkWitness;
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
    readonly realStalled: number;
    readonly lostIncrements: number;
    readonly extraIncrements: number;
    readonly overcountedStalls: number;
    readonly endedIn: readonly string[];
  };
}

export interface ReplaysJson extends JsonHeader {
  readonly server: ServerJson;
  readonly replays: readonly ReplayJson[];
}

export interface CounterJson extends JsonHeader {
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
  return ANOMALIES.filter((name) =>
    rows.some((row) => name in row && (row as Record<string, unknown>)[name] !== undefined && (row as Record<string, unknown>)[name] !== null),
  );
}

/** A run's count; null where the run did not measure it. */
export function anomalyOf(run: RunJson, name: Anomaly): number | null {
  return run[name] ?? null;
}

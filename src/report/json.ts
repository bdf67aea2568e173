/**
 * The report JSON: its shape as types (the contract `--json` prints, the HTML page embeds and
 * reads, and the tests check), and the one function that makes it from a run's results. Fields are
 * only ever added, never renamed or removed.
 */
import type { TrialSummary } from '../audit/trials.js';
import type { EmbeddedFate, ServerInfo } from '../server/connection.js';
import type { Mode, PendingKind, RunResult } from '../model.js';
import { consequenceFields, type ConsequenceJson } from './consequences.js';

/** What a report is made of: the server, every run, and the summaries some flags add. */
export interface RaceReport {
  readonly server: ServerInfo & { readonly url: string };
  readonly runs: readonly RunResult[];
  /** Per-mode summaries, present when --trials was given. */
  readonly trials?: readonly TrialSummary[];
  /**
   * One summed row per mode (see totals.ts), present with several queues per mode or a cluster:
   * then the table also names each queue's node.
   */
  readonly totals?: readonly RunResult[];
  /** The cluster's primaries (`host:port`), when the server is a cluster. */
  readonly primaries?: readonly string[];
  /** Set when the server was the tool's own: stopped at the end of the run, or kept by --keep. */
  readonly embedded?: EmbeddedFate;
}

export interface ServerJson {
  readonly kind: string;
  readonly version: string;
  /** Already redacted: a password never reaches the JSON. */
  readonly url: string;
  /** A cluster's primaries (`host:port`). */
  readonly primaries?: readonly string[];
}

/** One run (one mode, one trial, one queue) as the JSON carries it. */
export interface RunJson extends ConsequenceJson {
  readonly mode: Mode;
  readonly queue: string;
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
  readonly wallMs: number;
  readonly jobsPerSec: number;
  readonly roundTrips: number;
  readonly sweeps: number;
  readonly cutShort: boolean;
  readonly trial: number;
  readonly pending: PendingKind;
  readonly live: number;
  readonly maxSweeps: number;
  readonly processes: boolean;
  readonly retries: number;
  readonly stolenLeases: number;
  readonly misreported: number;
  readonly callMsP50: number | null;
  readonly callMsP99: number | null;
  readonly callMsMax: number | null;
  readonly serverCallMsP99: number | null;
  /** `host:port` of the node the queue lived on (with --queues or a cluster); null otherwise. */
  readonly node: string | null;
}

export interface ReportJson {
  readonly server: ServerJson;
  readonly runs: readonly RunJson[];
  /** With --queues or a cluster: one summed row per mode (and trial). */
  readonly totals?: readonly RunJson[];
  readonly trials?: readonly TrialSummary[];
}


export function reportJson(report: RaceReport): ReportJson {
  return {
    server: { kind: report.server.kind, version: report.server.version, url: report.server.url, ...(report.primaries ? { primaries: report.primaries } : {}) },
    runs: report.runs.map(runJson),
    ...(report.totals ? { totals: report.totals.map(runJson) } : {}),
    ...(report.trials ? { trials: report.trials } : {}),
  };
}

function runJson(run: RunResult): RunJson {
  return {
    mode: run.mode,
    queue: run.queue,
    sweepers: run.sweepers,
    jobs: run.jobs,
    batch: run.batch,
    maxStalled: run.maxStalled,
    stalledBefore: run.stalledBefore,
    recoveries: run.recoveries,
    doubleRecoveries: run.doubleRecoveries,
    duplicatePending: run.duplicatePending,
    lostIncrements: run.lostIncrements,
    extraIncrements: run.extraIncrements,
    lostJobs: run.lostJobs,
    misplaced: run.misplaced,
    unreclaimed: run.unreclaimed,
    wallMs: run.wallMs,
    jobsPerSec: run.jobsPerSec,
    roundTrips: run.roundTrips,
    sweeps: run.sweeps,
    cutShort: run.cutShort,
    trial: run.trial,
    pending: run.pending,
    live: run.live,
    maxSweeps: run.maxSweeps,
    processes: run.processes,
    retries: run.retries,
    stolenLeases: run.stolenLeases,
    misreported: run.misreported,
    ...consequenceFields(run),
    callMsP50: run.callMsP50,
    callMsP99: run.callMsP99,
    callMsMax: run.callMsMax,
    serverCallMsP99: run.serverCallMsP99,
    node: run.node ?? null,
  };
}

/**
 * The report JSON: its shape as types (the contract `--json` prints, the HTML page embeds and
 * reads, and the tests check), and the one function that makes it from a run's results. Fields are
 * only ever added, never renamed or removed.
 */
import { anomalyTotal, isClean } from '../audit/rules.js';
import type { TrialSummary } from '../audit/trials.js';
import type { EmbeddedFate, ServerInfo } from '../server/connection.js';
import {
  FIGURES,
  type FailoverFigures,
  type LapsedLockFigures,
  type FigureSources,
  type InterleavingExample,
  type Mode,
  type Outcome,
  type PhasesMs,
  type RunSetup,
  type RunResult,
  type ShrunkWitness,
} from '../shared/model.js';
import type { LatencyReport } from '../server/latency-proxy.js';
import { LIBRARIES, libraryOf } from '../libraries/table.js';
import { consequenceFields, type ConsequenceJson } from './consequences.js';
import { jsonHeader, type JsonHeader } from './json-header.js';
import type { RunMiss, Verdict } from './verdict.js';

export { JSON_SCHEMA, jsonHeader, type JsonHeader } from './json-header.js';

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
  /** How the runs measured up to --expect, when it was given. */
  readonly verdict?: Verdict;
  /** With --latency: the round-trip time asked for and measured through the proxy. */
  readonly latency?: LatencyReport;
  /** Set when the server was the tool's own: stopped at the end of the run, or kept by --keep. */
  readonly embedded?: EmbeddedFate;
  /** --seed: the seed the race's turns were chosen with. */
  readonly seed?: number;
  /** --shrink: the seeded run's anomaly, shrunk to a witness explain replays. */
  readonly shrink?: ShrunkWitness;
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
export interface RunJson extends ConsequenceJson, Omit<RunSetup, 'batch' | 'maxStalled'> {
  /** Null for a library's run: its own recovery takes no batch from the tool. */
  readonly batch: number | null;
  /** Null for a run of a library that keeps no stall limit (node-resque, Bee-Queue). */
  readonly maxStalled: number | null;
  readonly mode: Mode;
  readonly queue: string;
  /** True exactly when every anomaly figure is 0. */
  readonly clean: boolean;
  /**
   * The sum of the anomaly figures (ANOMALIES), so a script need not know their names: 0 exactly
   * when the run is clean. The figures overlap (one job recovered twice is a double recovery, a
   * duplicate entry and an over-counted stall), so above 0 it is a sum of overlapping counts, not
   * a number of jobs or of events.
   */
  readonly anomalies: number;
  readonly recoveries: number;
  readonly doubleRecoveries: number;
  /** Jobs moved more often than they stalled: the readout's "recovered N jobs more than once". */
  readonly jobsRecoveredMoreThanOnce: number;
  readonly duplicatePending: number;
  readonly lostIncrements: number | null;
  readonly extraIncrements: number | null;
  /** Jobs whose counter ended above the stalls they really had, and those extra counts together. */
  readonly overcountedStalls: number | null;
  readonly overcountedStallCount: number | null;
  readonly lostJobs: number;
  readonly misplaced: number;
  readonly unreclaimed: number;
  /** Jobs in dead whose real stalls stayed below max-stalled. */
  readonly deadLetteredEarly: number | null;
  readonly wallMs: number;
  readonly jobsPerSec: number;
  readonly roundTrips: number;
  readonly sweeps: number;
  readonly cutShort: boolean;
  readonly retries: number;
  /** Null where not measured: no live jobs; a strategy whose record is not cross-checked (only user scripts are). */
  readonly stolenLeases: number | null;
  readonly misreported: number | null;
  /** Entries of pending, active and dead naming no job of the run; null for a queue library's run. */
  readonly strayEntries: number | null;
  /** With --cycles: jobs whose counter ended below the stalls they truly had, and those stalls; null otherwise. */
  readonly forgottenStalls: number | null;
  readonly forgottenStallCount: number | null;
  /** The most entries one job had in pending: it would run that many times. */
  readonly mostPendingEntries: number;
  readonly callMsP50: number | null;
  readonly callMsP99: number | null;
  readonly callMsMax: number | null;
  readonly serverCallMsP99: number | null;
  /** The server's time in script calls during the race per job (µs); null where not measured. */
  readonly serverUsPerJob: number | null;
  /** Where the run's time went (ms): claim, seed, race, audit, clean; null for a library's run and a totals row. */
  readonly phasesMs: PhasesMs | null;
  /** `host:port` of the node the queue lived on (with --queues or a cluster); null otherwise. */
  readonly node: string | null;
  /** Where each anomaly figure comes from: server, sweepers, or one against the other; null where not measured. */
  readonly sources: FigureSources;
  /** A loop run's job recovered more than once, command by command in the server's order; null otherwise. */
  readonly example: InterleavingExample | null;
  /** A library mode's run (--lib): the library and the version of it found in the user's project. */
  readonly library?: { readonly name: string; readonly version: string };
  /** With --fault failover: what the drill found (docs/failover.md). */
  readonly failover?: FailoverFigures;
  /** With --fault lapsed-lock: what the lapsed locks did (docs/libraries.md). */
  readonly lapsedLock?: LapsedLockFigures;
}

/** One mode's verdict; the mode is its key in VerdictJson.modes. */
export interface ModeVerdictJson {
  readonly expected: Outcome;
  readonly pass: boolean;
  readonly runs: number;
  readonly misses: readonly RunMiss[];
}

/** The verdict with its modes keyed by name, so a script reads `.verdict.modes.loop.pass`. */
export interface VerdictJson {
  readonly expect: string;
  readonly pass: boolean;
  readonly modes: Readonly<Partial<Record<Mode, ModeVerdictJson>>>;
}

export interface ReportJson extends JsonHeader {
  readonly server: ServerJson;
  /** With --latency; absent when the race went to the server directly. */
  readonly latency?: LatencyReport;
  readonly runs: readonly RunJson[];
  /** With --queues or a cluster: one summed row per mode (and trial). */
  readonly totals?: readonly RunJson[];
  readonly trials?: readonly TrialSummary[];
  /** With --expect. */
  readonly verdict?: VerdictJson;
  readonly seed?: number;
  readonly shrink?: ShrunkWitness;
}

export function reportJson(report: RaceReport): ReportJson {
  return {
    ...jsonHeader(),
    server: { kind: report.server.kind, version: report.server.version, url: report.server.url, ...(report.primaries ? { primaries: report.primaries } : {}) },
    ...(report.latency ? { latency: report.latency } : {}),
    runs: report.runs.map(runJson),
    ...(report.totals ? { totals: report.totals.map(runJson) } : {}),
    ...(report.trials ? { trials: report.trials } : {}),
    ...(report.verdict ? { verdict: verdictJson(report.verdict) } : {}),
    ...(report.seed !== undefined ? { seed: report.seed } : {}),
    ...(report.shrink ? { shrink: report.shrink } : {}),
  };
}

export function runJson(run: RunResult): RunJson {
  const json: RunJson = {
    mode: run.mode,
    queue: run.queue,
    sweepers: run.sweepers,
    jobs: run.jobs,
    // Not a setting the run did not use: a library's own recovery reads no batch, and node-resque
    // and Bee-Queue count no stalls towards a limit.
    ...librarySettings(run),
    stalledBefore: run.stalledBefore,
    clean: isClean(run),
    anomalies: anomalyTotal(run),
    recoveries: run.recoveries,
    doubleRecoveries: run.doubleRecoveries,
    jobsRecoveredMoreThanOnce: run.jobsRecoveredMoreThanOnce,
    duplicatePending: run.duplicatePending,
    lostIncrements: run.lostIncrements,
    extraIncrements: run.extraIncrements,
    overcountedStalls: run.overcountedStalls,
    overcountedStallCount: run.overcountedStallCount,
    lostJobs: run.lostJobs,
    misplaced: run.misplaced,
    unreclaimed: run.unreclaimed,
    deadLetteredEarly: run.deadLetteredEarly,
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
    strayEntries: run.strayEntries,
    forgottenStalls: run.forgottenStalls,
    forgottenStallCount: run.forgottenStallCount,
    mostPendingEntries: run.mostPendingEntries,
    ...consequenceFields(run),
    callMsP50: run.callMsP50,
    callMsP99: run.callMsP99,
    callMsMax: run.callMsMax,
    serverCallMsP99: run.serverCallMsP99,
    serverUsPerJob: run.serverUsPerJob ?? null,
    phasesMs: run.phasesMs ?? null,
    node: run.node ?? null,
    sources: run.sources,
    example: run.example,
    ...(run.library ? { library: run.library } : {}),
    ...(run.failover ? { failover: run.failover } : {}),
    ...(run.lapsedLock ? { lapsedLock: run.lapsedLock } : {}),
  };
  return { ...json, ...figuresNotNamed(run, json) };
}

/** The run's --batch and --max-stalled, each null where the library it ran takes none from the tool. */
function librarySettings(run: RunResult): Pick<RunJson, 'batch' | 'maxStalled'> {
  const library = libraryOf(run.mode);
  if (!library) return { batch: run.batch, maxStalled: run.maxStalled };
  return { batch: null, maxStalled: LIBRARIES[library].noStallLimit !== undefined ? null : run.maxStalled };
}

/** Any figure of FIGURES the fields above do not name (there is none today), so that a new figure reaches the JSON. */
function figuresNotNamed(run: RunResult, json: RunJson): Record<string, number | null> {
  const fields = run as unknown as Readonly<Record<string, number | null | undefined>>;
  const unnamed = FIGURES.filter((figure) => !(figure.field in json) && fields[figure.field] !== undefined);
  return Object.fromEntries(unnamed.map((figure) => [figure.field, fields[figure.field] ?? null]));
}

function verdictJson(verdict: Verdict): VerdictJson {
  return { expect: verdict.expect, pass: verdict.pass, modes: Object.fromEntries(verdict.modes.map(({ mode, ...rest }) => [mode, rest])) };
}

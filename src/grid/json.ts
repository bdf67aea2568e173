/**
 * The grid's JSON: its shape as types (what `emq-race grid --json` prints and the grid page embeds
 * and draws its charts from), and the functions that make it from the cells' reports. Every cell
 * carries its runs exactly as the race's own JSON has them, so any figure of the grid can be
 * checked against the runs it was summed from. Fields are only ever added, never renamed or removed.
 */
import { anomalyTotal } from '../audit/rules.js';
import { jsonHeader, runJson, type JsonHeader, type RunJson, type ServerJson } from '../report/json.js';
import type { LatencyReport } from '../server/latency-proxy.js';
import { jobsPerSec, jobsRaced, type Anomaly, type AuditCounts, type Mode, type RunResult } from '../shared/model.js';

/** One axis: the race flag it varies (its long name without the dashes) and the values, in order. */
export interface GridAxisJson {
  readonly flag: string;
  readonly values: readonly number[];
}

/** One mode in one cell: its trials summed into the grid's headline figures. */
export interface GridModeCellJson {
  readonly mode: Mode;
  readonly trials: number;
  /** Jobs each trial seeded for this mode (a round-trip mode runs on --loop-jobs). */
  readonly jobs: number;
  /** Double recoveries over every trial (with --queues, over every queue too). */
  readonly doubleRecoveries: number;
  /** The headline anomaly rate: double recoveries per 1,000 jobs seeded, over all trials, to 0.01. */
  readonly doubleRecoveriesPer1000: number;
  /** Every anomaly figure summed over every trial: 0 exactly when every trial was clean. */
  readonly anomalies: number;
  /** Jobs over wall-clock time, all trials together (Σ jobs / Σ seconds), whole jobs per second. */
  readonly jobsPerSec: number;
  /** Trials with at least one anomaly, and their share of the trials (0 to 1): the reproduction rate. */
  readonly racedTrials: number;
  readonly reproductionRate: number;
  /**
   * The most jobs per second the cell's round trip and the server's own time allow (raceBoundMs),
   * over all trials; null where either is not measured: a cell straight to the server (no round
   * trip measured through the proxy), a mode that calls no script once per sweep.
   */
  readonly boundJobsPerSec: number | null;
  /** jobsPerSec ÷ boundJobsPerSec to 0.01: how close the race came to its bound; null with the bound. */
  readonly overBound: number | null;
}

/** One point of the grid: the axes' values, the latency measured there, each mode's figures, every run. */
export interface GridCellJson {
  /** The cell's place in the order the grid ran them, from 0. */
  readonly index: number;
  /** Each axis's flag → this cell's value. */
  readonly at: Readonly<Record<string, number>>;
  /** The round trip measured through the proxy; null where the race went to the server directly. */
  readonly latency: LatencyReport | null;
  readonly modes: readonly GridModeCellJson[];
  /** The cell's runs as the race's --json prints them (mode × trial × queue). */
  readonly runs: readonly RunJson[];
  /** Wall-clock time of the whole cell: claim, seed, race, audit and clean-up of every run. */
  readonly wallMs: number;
}

export interface GridJson extends JsonHeader {
  readonly kind: 'grid';
  /** False when the grid was stopped (Ctrl-C, a failure) before its last cell: cells has those that finished. */
  readonly complete: boolean;
  readonly server: ServerJson;
  readonly axes: readonly GridAxisJson[];
  readonly modes: readonly Mode[];
  readonly trials: number;
  /** Cells the grid was to run: the product of the axes' lengths. */
  readonly plannedCells: number;
  /** The cells that finished, in the order they ran. */
  readonly cells: readonly GridCellJson[];
  readonly elapsedMs: number;
  /** Why the grid stopped before its last cell (the exit code and the error line); absent when complete. */
  readonly stopped?: { readonly exit: number; readonly message: string };
}

/** What the sums need of a run: a RunResult, or a RunJson read back, will do. */
export type CellRun = Pick<RunResult, 'mode' | 'jobs' | 'wallMs' | 'doubleRecoveries' | 'trial'> &
  Pick<AuditCounts, Anomaly> &
  Partial<Pick<RunResult, 'sweepers' | 'batch' | 'serverUsPerJob' | 'cutShort'>>;

/** The jobs a cell's run counts for its pace: jobsRaced, a run without `cutShort` taken as run to its end. */
const racedIn = (run: CellRun): number => jobsRaced({ jobs: run.jobs, unreclaimed: run.unreclaimed, cutShort: run.cutShort ?? false });

/**
 * The shortest a one-call race can take (ms): each sweeper makes its share of the calls one after
 * another, each a round trip plus the server's time for a batch, unless the server's one thread is
 * the limit (every job's server time end to end); then each sweeper's last call, which finds
 * nothing, costs one more round trip, unless the race was cut short (`emptyCall` false: its
 * sweepers stopped at their sweep limit without it). `serverUsPerJob` is the server's measured
 * time per job. Pure.
 */
export function raceBoundMs(jobs: number, sweepers: number, batch: number, rttMs: number, serverUsPerJob: number, emptyCall = true): number {
  const calls = Math.ceil(jobs / batch);
  const perSweeper = Math.ceil(calls / Math.max(1, sweepers));
  const callMs = rttMs + (Math.min(batch, jobs) * serverUsPerJob) / 1000;
  return Math.max(perSweeper * callMs, (jobs * serverUsPerJob) / 1000) + (emptyCall ? rttMs : 0);
}

/** The bound of a mode's runs in a cell, as jobs per second over all of them; null where a run lacks a figure. */
function boundJobsPerSec(runs: readonly CellRun[], rttMs: number | undefined): number | null {
  if (rttMs === undefined || runs.length === 0) return null;
  let jobs = 0;
  let ms = 0;
  for (const run of runs) {
    if (run.serverUsPerJob == null || run.sweepers === undefined || run.batch === undefined) return null;
    jobs += racedIn(run);
    ms += raceBoundMs(racedIn(run), run.sweepers, run.batch, rttMs, run.serverUsPerJob, !run.cutShort);
  }
  return jobsPerSec(jobs, ms);
}

/**
 * One mode's trials in one cell, summed. `runs` are the mode's rows, one per trial (with several
 * queues, the per-trial sums). Pure.
 */
export function modeCell(mode: Mode, runs: readonly CellRun[], rttMs?: number): GridModeCellJson {
  const mine = runs.filter((run) => run.mode === mode);
  if (mine.length === 0) throw new Error(`no run of ${mode} in the cell`);
  const jobs = mine.reduce((sum, run) => sum + run.jobs, 0);
  const wallMs = mine.reduce((sum, run) => sum + run.wallMs, 0);
  const doubleRecoveries = mine.reduce((sum, run) => sum + run.doubleRecoveries, 0);
  const anomalies = mine.map((run) => anomalyTotal(run));
  const trials = new Set(mine.map((run) => run.trial)).size;
  const racedTrials = new Set(mine.filter((_, i) => (anomalies[i] ?? 0) > 0).map((run) => run.trial)).size;
  const bound = boundJobsPerSec(mine, rttMs);
  // A run its sweep limit cut short counts the leases it reclaimed, as its own jobs/s does.
  const achieved = jobsPerSec(
    mine.reduce((sum, run) => sum + racedIn(run), 0),
    wallMs,
  );
  return {
    mode,
    trials,
    jobs: mine[0]?.jobs ?? 0,
    doubleRecoveries,
    doubleRecoveriesPer1000: Math.round((doubleRecoveries / Math.max(jobs, 1)) * 1000 * 100) / 100,
    anomalies: anomalies.reduce((sum, n) => sum + n, 0),
    jobsPerSec: achieved,
    racedTrials,
    reproductionRate: racedTrials / trials,
    boundJobsPerSec: bound,
    overBound: bound ? Math.round((achieved / bound) * 100) / 100 : null,
  };
}

/** What a cell's race left for the grid: the report's runs (and per-trial sums with several queues). */
export interface CellRace {
  readonly runs: readonly RunResult[];
  /** One summed row per mode and trial, with several queues per mode; else absent. */
  readonly totals?: readonly RunResult[] | undefined;
  readonly latency?: LatencyReport | undefined;
}

export function gridCell(index: number, at: Readonly<Record<string, number>>, modes: readonly Mode[], race: CellRace, wallMs: number): GridCellJson {
  const rows = race.totals ?? race.runs;
  const ran = modes.filter((mode) => rows.some((run) => run.mode === mode));
  // The bound takes the round trip measured through the proxy: the race's connections' own. A
  // trial summed over several queues has none: its queues' sweepers share one server's thread,
  // or race apart on several nodes, and the one-queue bound holds for neither.
  const rttMs = race.totals ? undefined : race.latency?.measuredRttMs.median;
  return {
    index,
    at,
    latency: race.latency ?? null,
    modes: ran.map((mode) => modeCell(mode, rows, rttMs)),
    runs: race.runs.map(runJson),
    wallMs: Math.round(wallMs),
  };
}

export function gridJson(fields: Omit<GridJson, keyof JsonHeader | 'kind'>): GridJson {
  return { ...jsonHeader(), kind: 'grid', ...fields };
}

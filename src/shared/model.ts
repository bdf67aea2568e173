/**
 * The program's words, shared by every layer: the modes and pending kinds, the limits of a run's
 * parameters, what a run is asked to do (RaceOptions for a command, ModeRun for one mode on one
 * queue) and what it found (RunResult), the consequences a run may add, and the Io seam every
 * output goes through. Types and constants only (and two bits of arithmetic: a rate and a
 * percentile): this module imports nothing of the tool's, so any folder may import it without
 * making a circle.
 */
import type { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface IntLimit {
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

export const LIMITS = {
  jobs: { min: 1, max: 10_000_000, default: 1000 },
  sweepers: { min: 1, max: 256, default: 2 },
  // The sweep script passes a batch's ids to RPUSH and ZADD through Lua's unpack(), which
  // refuses more than about 8,000 values; ZADD takes two per job, so a batch stays well below 4,000.
  batch: { min: 1, max: 3000, default: 100 },
  maxStalled: { min: 1, max: 1_000_000, default: 3 },
  stalledBefore: { min: 0, max: 999_999, default: 0 },
  probeDelay: { min: 0, max: 60_000, default: 0 },
  workers: { min: 0, max: 256, default: 0 },
  cycles: { min: 1, max: 100, default: 1 },
  maxSweeps: { min: 1, max: 100_000_000, default: 0 },
  live: { min: 0, max: 10_000_000, default: 0 },
  interval: { min: 0, max: 60_000, default: 0 },
  jitter: { min: 0, max: 60_000, default: 0 },
  trials: { min: 1, max: 10_000, default: 1 },
  failoverAfter: { min: 1, max: 1_000_000, default: 5 },
  failoverCalls: { min: 0, max: 10_000, default: 2 },
  waitReplicas: { min: 1, max: 1, default: 1 },
  waitTimeout: { min: 1, max: 60_000, default: 500 },
  // Delay on the replication link, each way, in whole ms: far below the 10 s the drill waits for the replica to catch up.
  replicaLag: { min: 0, max: 1000, default: 0 },
  loopJobs: { min: 1, max: 10_000_000, default: 100_000 },
  // Round-trip time added by the latency proxy, in ms; fractions of a millisecond are allowed. At
  // most a second each: delay and jitter together stay far below the 10 s a connection waits for
  // a reply before it counts the server as stopped (ANSWER_TIMEOUT_MS in server/connection.ts).
  latency: { min: 0, max: 1000, default: 0 },
  latencyJitter: { min: 0, max: 1000, default: 0 },
  queues: { min: 1, max: 64, default: 1 },
  embeddedCluster: { min: 3, max: 9, default: 3 },
  seed: { min: 0, max: 4_294_967_295, default: 0 },
} as const satisfies Record<string, IntLimit>;

export const MODES = [
  'atomic',
  'loop',
  'watch',
  'claim',
  'function',
  'script',
  'bullmq',
  'bullmq-naive',
  'bullmq-guarded',
  'node-resque',
  'node-resque-naive',
  'node-resque-guarded',
  'bee-queue',
  'bee-queue-naive',
  'bee-queue-guarded',
] as const;

export type Mode = (typeof MODES)[number];

/**
 * The queue libraries a race can take its recovery from (--lib): the user's own installed copy,
 * never one of ours. Each is a folder of src/libraries/ and an entry in its table.
 */
export const LIBRARY_NAMES = ['bullmq', 'node-resque', 'bee-queue'] as const;

export type LibraryName = (typeof LIBRARY_NAMES)[number];

/** A library as found in the user's project: its package's version and the file `require` gives. */
export interface FoundLibrary {
  readonly name: LibraryName;
  /** The flag that asked for it (`--lib bullmq`, or `--mode bullmq-naive`), which a refusal of it names. */
  readonly asked: string;
  readonly version: string;
  /** The package's main file, resolved from the project's folder as its own `require` would. */
  readonly entry: string;
}

/** Where recovered jobs go: a list (RPUSH, duplicates visible) or a sorted set (ZADD, as EchoMQ does). */
export const PENDING_KINDS = ['list', 'zset'] as const;

export type PendingKind = (typeof PENDING_KINDS)[number];

/** What --expect can ask of a mode's runs: none shows an anomaly, or every one shows at least one. */
export const OUTCOMES = ['clean', 'race'] as const;

export type Outcome = (typeof OUTCOMES)[number];

/** One outcome and the --expect term it came from (for the message when two terms disagree). */
export interface ExpectedOutcome {
  readonly outcome: Outcome;
  readonly term: string;
}

/**
 * What --expect asks, every term merged: a mode's runs are judged by `modes[mode]`, else by
 * `others`, else not at all. A mode in `modes` was named (MODE=OUTCOME, or the loop by `race`) and
 * must run.
 */
export interface Expectation {
  /** The terms as given, in order and without repeats: joined by commas they parse back to this. */
  readonly terms: readonly string[];
  readonly modes: Readonly<Partial<Record<Mode, ExpectedOutcome>>>;
  /** Set by `clean` and `race`: every mode not named must be clean. */
  readonly others?: ExpectedOutcome;
}

/**
 * What sizes a race and its every run: the sweepers, the jobs and the batch each sweep takes, and
 * the stall counter's limit and the stalls each job starts with.
 */
export interface RaceSize {
  readonly sweepers: number;
  readonly jobs: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
}

export interface RaceOptions extends RaceSize {
  readonly modes: readonly Mode[];
  readonly probeDelayMs: number;
  /** The base queue name; with several modes each gets `NAME-mode`. */
  readonly queue: string | undefined;
  readonly keep: boolean;
  readonly json: boolean;
  readonly expect: Expectation | undefined;
  /** --fault, --workers, --cycles, --observe, --allow-server-wide (checked in consequences/plan.ts). */
  readonly consequences?: ConsequenceOptions;
  /** The user's sweep script (a path), for the script mode. */
  readonly script?: string | undefined;
  readonly pending?: PendingKind;
  /** Sweeps per sweeper before it stops; undefined for the default (defaultMaxSweeps). */
  readonly maxSweeps?: number | undefined;
  /** Jobs seeded with valid leases; undefined for the default (10% of jobs). */
  readonly live?: number | undefined;
  readonly intervalMs?: number;
  readonly jitterMs?: number;
  readonly processes?: boolean;
  readonly csv?: boolean;
  readonly trials?: number;
  /** --latency and --latency-jitter; undefined when the race connects to the server directly. */
  readonly latency?: LatencyAsked | undefined;
  /** --lib and --lib-from: the library whose modes run, and the folder its package is resolved from. */
  /** `asked`: the flag that asked for it, as its refusals name it (`--lib bullmq`, or `--mode bullmq-naive`). */
  readonly library?: { readonly name: LibraryName; readonly from: string; readonly asked: string } | undefined;
  /** --seed: one command in flight at a time, the turns chosen by a generator seeded with it. */
  readonly seed?: number | undefined;
}

/** Round-trip time the latency proxy adds to the race's connections, in ms: delay, plus 0 to jitter at random. */
export interface LatencyAsked {
  readonly delayMs: number;
  readonly jitterMs: number;
}

/** The default number of live leases: a tenth of the expired ones, rounded down. */
export function defaultLive(jobs: number): number {
  return Math.floor(jobs / 10);
}

export const FAULTS = ['sweeper-crash', 'script-flush', 'client-kill', 'failover', 'lapsed-lock'] as const;

export type FaultName = (typeof FAULTS)[number];

export interface ConsequenceOptions {
  readonly faults: readonly FaultName[];
  readonly workers: number;
  readonly cycles: number;
  readonly observe: boolean;
  readonly allowServerWide: boolean;
  /** --fault failover's schedule (--failover-after, --failover-calls, --wait-replicas). */
  readonly failover?: FailoverSettings;
}

/** The failover drill's schedule: see docs/failover.md. */
export interface FailoverSettings {
  /** The link to the replica is cut after this many answered sweep calls. */
  readonly after: number;
  /** Sweep calls let through between the cut and the failover. */
  readonly calls: number;
  /** --wait-replicas N:TIMEOUT_MS: a WAIT after each sweep call that moved jobs. */
  readonly waitReplicas?: { readonly replicas: number; readonly timeoutMs: number };
  /** --replica-lag MS: what the replication link's proxy holds each chunk, each way. */
  readonly replicaLagMs?: number;
  /** --sentinel: an embedded Sentinel promotes the replica after the primary's kill. */
  readonly sentinel?: boolean;
}

/** What a failover run found, each figure with where it comes from (docs/failover.md). */
export interface FailoverFigures {
  readonly after: number;
  /** --failover-calls: the sweep calls the drill lets through between the cut and the failover. */
  readonly calls: number;
  /** Moves the sweepers had acknowledged (confirmed by WAIT, with --wait-replicas) that the new primary does not hold: server+sweepers. */
  readonly ackedMovesLost: number;
  /** The drill's own count: jobs moved by the calls acknowledged after the cut; null for modes whose sweep is many round trips. */
  readonly predictedLoss: number | null;
  /** Jobs the sweepers moved before the failover and again after it: sweepers. */
  readonly jobsRecoveredTwice: number;
  /** Moves, confirmed or not, that the new primary's stalled counters do not show: server+sweepers. */
  readonly counterIncrementsLost: number;
  /** Jobs a worker took before the failover and a worker took again after it (run twice): workers; null without --workers. */
  readonly jobsRunTwice: number | null;
  /** Sweep calls acknowledged before the cut: `after`, more when calls in flight at the k-th finished first, fewer when the sweeps ran dry. */
  readonly callsBeforeCut: number;
  /** Sweep calls answered between the cut and the failover. */
  readonly callsAfterCut: number;
  /** Jobs moved by calls whose WAIT timed out short of its replicas. */
  readonly unconfirmedMoves: number;
  readonly waitTimeouts: number;
  /**
   * WAIT's replies as they came (--wait-replicas; empty without it): how many WAITs reported each
   * count of replicas reached, fewest first. Those short of `waitReplicas.replicas` are the timeouts.
   */
  readonly waitReplies: readonly { readonly replicas: number; readonly waits: number }[];
  readonly waitReplicas: { readonly replicas: number; readonly timeoutMs: number } | null;
  /** --replica-lag: ms the replication link held each chunk, each way (0 without it). */
  readonly replicaLagMs: number;
  /** --keep: the promoted replica left running with the run's keys (url and pid); null when none was kept. */
  readonly keptServer: { readonly url: string; readonly pid: number } | null;
  /**
   * With --wait-replicas: the companion run without WAIT (same mode, jobs and schedule, a fresh
   * pair), run just `before` or `after` this one: its jobs/s and its acknowledged moves lost. Null without WAIT.
   */
  readonly withoutWait: { readonly jobsPerSec: number; readonly ackedMovesLost: number; readonly order: 'before' | 'after' } | null;
  /** Who promoted the replica: the tool (REPLICAOF NO ONE), or an embedded Sentinel (--sentinel). */
  readonly promotedBy: 'tool' | 'sentinel';
  readonly sources: {
    readonly ackedMovesLost: 'server+sweepers';
    readonly predictedLoss: 'sweepers';
    readonly jobsRecoveredTwice: 'sweepers';
    readonly counterIncrementsLost: 'server+sweepers';
    readonly jobsRunTwice: 'workers';
  };
}
/**
 * What a --fault lapsed-lock run found (a library whose workers hold locks, docs/libraries.md):
 * live workers whose locks lapsed while they still ran their jobs, the library's check that handed
 * the jobs on, a second worker that ran them again, and the first worker's late completions.
 */
export interface LapsedLockFigures {
  /** Jobs the first worker was still running when their locks lapsed (its lock renewal stopped). */
  readonly lapsedJobs: number;
  /** Jobs the check moved back to wait, by the callers' records: sweepers. */
  readonly recovered: number;
  /** Jobs whose handler ran more than once (the tool's handlers count each run in the job's hash): server. */
  readonly executedTwice: number;
  /** The first worker's completions the library refused once it finished: workers. */
  readonly lateCompletionsRefused: number;
  /** Its completions the library accepted all the same (a job completed twice): workers. */
  readonly lateCompletionsAccepted: number;
  /** Jobs a completion of the second worker was refused for: two takes of one job from two entries in wait: workers. */
  readonly secondRunsRefused: number;
  /** The library's words for the first refusal, as the worker reported it; null with none. */
  readonly refusal: string | null;
  readonly sources: {
    readonly recovered: 'sweepers';
    readonly executedTwice: 'server';
    readonly lateCompletionsRefused: 'workers';
    readonly lateCompletionsAccepted: 'workers';
    readonly secondRunsRefused: 'workers';
  };
}

export interface Consequences {
  /** Faults that apply to this run's mode. */
  readonly faults: readonly FaultName[];
  readonly workers: number;
  readonly cycles: number;
  readonly observe: boolean;
  /** One line for each requested fault that cannot reach this mode. */
  readonly notes: readonly string[];
  /** With --fault failover: the drill's schedule. */
  readonly failover?: FailoverSettings;
}

export const NO_CONSEQUENCES: Consequences = { faults: [], workers: 0, cycles: 1, observe: false, notes: [] };

export interface Cadence {
  /** Pause between one sweeper's sweeps, in ms. */
  readonly intervalMs: number;
  /** Up to this many ms more, drawn afresh per sweeper before its first sweep and per sweep. */
  readonly jitterMs: number;
}

export const BACK_TO_BACK: Cadence = { intervalMs: 0, jitterMs: 0 };

/** The progress line of one command: every race it runs polls its own queue and shows on it. */
export interface ProgressBoard {
  /**
   * Polls `active` until the returned function is called. `live` jobs hold valid leases in
   * `active` the whole run and are not counted as left to reclaim. `stage`, read at each poll,
   * says what the race waits on, if anything (a failover drill's step).
   */
  watch(redis: Redis, active: string, mode: string, queue: string, jobs: number, live: number, stage?: () => string | undefined): () => void;
  /** Shows a queue being seeded until `stop`: `seeded` adds the jobs of each batch as it lands. */
  seeding(mode: string, queue: string, jobs: number): { seeded(count: number): void; stop(): void };
}

export interface AuditCounts {
  readonly recoveries: number;
  readonly doubleRecoveries: number;
  readonly duplicatePending: number;
  /**
   * Duplicate entries the server's final state shows in pending. Equal to duplicatePending but
   * under --cycles, where duplicatePending also counts those the re-leaser took back out.
   */
  readonly duplicatePendingAtEnd: number;
  /** The most entries one job had in pending (at the end, or when a re-lease took them): it would run that many times. */
  readonly mostPendingEntries: number;
  /**
   * The source page's "lost increment": recoveries the counter does not show, Σ max(0, moves(j) −
   * counter rise(j)). Two sweeps read 0, both write 1: one increment lost.
   */
  readonly lostIncrements: number | null;
  /** Counter rises no sweeper recorded; null, with lostIncrements, where the queue keeps no counter to set the moves against. */
  readonly extraIncrements: number | null;
  /**
   * Jobs whose counter ended below the number of times they truly stalled (stalled-before, plus the
   * seeded stall, plus one per re-lease); null where the run does not know the true count (without
   * --cycles).
   */
  readonly forgottenStalls: number | null;
  /** Those jobs' stalls the counter does not show, all together; null with forgottenStalls. */
  readonly forgottenStallCount: number | null;
  readonly lostJobs: number;
  readonly misplaced: number;
  readonly unreclaimed: number;
  /** Job executions beyond the first, by workers: Σ max(0, runs(j) − 1); null without workers. */
  readonly doubleExecutions: number | null;
  /**
   * Jobs whose true stall count reached max-stalled yet that stalled again, that a worker ran
   * afterwards, or that a sweep took and left out of dead (a job no sweep took is unreclaimed, not
   * escaped); null where the queue dead-letters nothing by its stalls.
   */
  readonly deadLetterEscapes: number | null;
  /**
   * Jobs whose counter ended above the stalls they really had (stalled-before, plus the seeded
   * stall, plus one per re-lease with --cycles): one stall counted twice, the direction of the
   * corruption that lost increments alone do not show. Null where the queue keeps no stall count per job.
   */
  readonly overcountedStalls: number | null;
  /** Those jobs' counts beyond their real stalls, all together; null with overcountedStalls. */
  readonly overcountedStallCount: number | null;
  /** Jobs in dead whose real stalls stayed below max-stalled: healthy jobs dead-lettered early; null with deadLetterEscapes. */
  readonly deadLetteredEarly: number | null;
  /** Observer samples that found a job in no place / in two places at once; null without the observer. */
  readonly windowInNeither: number | null;
  readonly windowInBoth: number | null;
  /** Moves the server shows (job out of active, counter up) that no sweeper heard back: not anomalies. */
  readonly unacknowledgedMoves: number;
  /** Live jobs (valid leases) that a sweep moved or counted: work taken from a busy worker; null with no live jobs. */
  readonly stolenLeases: number | null;
  /** Where a strategy's own record disagrees with the server; null where not checked (only user scripts are). */
  readonly misreported: number | null;
  /**
   * Entries of pending, active and dead that name no job of the run (`0200` for job 200, a word
   * that is no id, an id past the last job): only the sweepers write there, so each is one they
   * wrote wrong. Null where not read (a queue library's run).
   */
  readonly strayEntries: number | null;
  /** Jobs moved more than once: the readout's "recovered N jobs twice". Not an anomaly of its own. */
  readonly jobsRecoveredMoreThanOnce: number;
}

/**
 * When the runs table shows a figure's column (none given: always): with a flag's consequence
 * (--cycles, --workers, --observe, a fault), when the run measured it (not null), when it is not 0,
 * or for a mode whose own column it is (`ownColumn` in the strategy table). Any one suffices.
 */
export type ShownWhen = 'cycles' | 'workers' | 'observe' | 'faults' | 'measured' | 'not-zero' | 'own-column';

/**
 * One figure a run reports: everything the table, the trials table, the totals, the CSV, the JSON
 * and the HTML page need to know to show it. They all read FIGURES; none of them names a figure.
 */
export interface Figure {
  /** Its name in RunResult, in the JSON and as the CSV's column. */
  readonly field: string;
  /** The table's heading, `\n` where it breaks; its words (the break taken out) label it everywhere else. */
  readonly heading: string;
  /** Every clean run has it at 0 (or null, not measured); it counts in the JSON's `anomalies`. */
  readonly anomaly: boolean;
  /** Where it comes from when measured (the run may say otherwise, see audit/sources.ts); named under the table. */
  readonly source?: FigureSource;
  /** A row of the default table; an anomaly without one is summed there into "other anomalies". */
  readonly headline: boolean;
  /** An anomaly the trials table always shows; the others only where some trial counted one. */
  readonly trialsAlways?: boolean;
  readonly shownWhen?: readonly ShownWhen[];
  /**
   * Where the runs table puts it: the race's own counts first, then the figures a mode is chosen
   * for, then those a flag is chosen for; in FIGURES order within each.
   */
  readonly section: 'race' | 'mode' | 'flag';
}

/**
 * The figures, in the order of the CSV's, the JSON's and the page's anomalies. Every figure is a
 * count: a mode's queues add up (report/totals.ts), a null (not measured) stays null.
 */
const SHIPPED_FIGURES = [
  { field: 'recoveries', heading: 'recoveries', anomaly: false, source: 'sweepers', headline: true, section: 'race' },
  { field: 'doubleRecoveries', heading: 'double\nrecoveries', anomaly: true, source: 'sweepers', headline: true, trialsAlways: true, section: 'race' },
  { field: 'duplicatePending', heading: 'duplicate\npending', anomaly: true, source: 'server', headline: true, trialsAlways: true, section: 'race' },
  { field: 'lostIncrements', heading: 'lost\nincrements', anomaly: true, source: 'server+sweepers', headline: true, trialsAlways: true, section: 'race' },
  { field: 'extraIncrements', heading: 'extra\nincrements', anomaly: true, source: 'server+sweepers', headline: false, trialsAlways: true, section: 'race' },
  { field: 'forgottenStalls', heading: 'forgotten\nstalls', anomaly: true, source: 'server+releaser', headline: true, shownWhen: ['cycles'], section: 'race' },
  { field: 'overcountedStalls', heading: 'over-counted\nstalls', anomaly: true, source: 'server', headline: true, trialsAlways: true, section: 'race' },
  { field: 'lostJobs', heading: 'lost\njobs', anomaly: true, source: 'server', headline: true, trialsAlways: true, section: 'race' },
  { field: 'misplaced', heading: 'misplaced', anomaly: true, source: 'server', headline: false, trialsAlways: true, section: 'race' },
  { field: 'unreclaimed', heading: 'unreclaimed', anomaly: true, source: 'server', headline: false, trialsAlways: true, section: 'race' },
  { field: 'strayEntries', heading: 'stray\nentries', anomaly: true, source: 'server', headline: false, shownWhen: ['not-zero'], section: 'race' },
  { field: 'unacknowledgedMoves', heading: 'unacked\nmoves', anomaly: false, headline: true, shownWhen: ['faults', 'not-zero'], section: 'flag' },
  { field: 'noscriptFallbacks', heading: 'noscript\nfallbacks', anomaly: false, headline: true, shownWhen: ['faults', 'not-zero'], section: 'flag' },
  {
    field: 'doubleExecutions',
    heading: 'double\nexecutions',
    anomaly: true,
    source: 'server',
    headline: true,
    shownWhen: ['workers', 'measured'],
    section: 'flag',
  },
  {
    field: 'deadLetterEscapes',
    heading: 'dead-letter\nescapes',
    anomaly: true,
    source: 'server',
    headline: true,
    shownWhen: ['cycles', 'not-zero'],
    section: 'flag',
  },
  { field: 'deadLetteredEarly', heading: 'dead-lettered\nearly', anomaly: true, source: 'server', headline: true, trialsAlways: true, section: 'race' },
  { field: 'windowInNeither', heading: 'window in\nneither', anomaly: true, source: 'observer', headline: true, shownWhen: ['observe'], section: 'flag' },
  { field: 'windowInBoth', heading: 'window in\nboth', anomaly: true, source: 'observer', headline: true, shownWhen: ['observe'], section: 'flag' },
  { field: 'samples', heading: 'samples', anomaly: false, headline: false, shownWhen: ['observe'], section: 'flag' },
  { field: 'stolenLeases', heading: 'stolen\nleases', anomaly: true, source: 'server+sweepers', headline: false, shownWhen: ['measured'], section: 'mode' },
  {
    field: 'misreported',
    heading: 'mis-\nreported',
    anomaly: true,
    source: 'server+sweepers',
    headline: true,
    shownWhen: ['own-column', 'measured'],
    section: 'mode',
  },
  { field: 'retries', heading: 'retries', anomaly: false, headline: true, shownWhen: ['own-column', 'not-zero'], section: 'mode' },
] as const satisfies readonly (Figure & { readonly field: keyof RunResult })[];

/** The anomaly counts: every one must be 0 (or not measured, null) for a run to be clean. */
export type Anomaly = Extract<(typeof SHIPPED_FIGURES)[number], { readonly anomaly: true }>['field'];

/** The table of figures (see Figure). Only registerFigure adds to it. */
export const FIGURES: readonly Figure[] = [...SHIPPED_FIGURES];

/** The anomalies' names, in FIGURES order. */
export const ANOMALIES: readonly Anomaly[] = FIGURES.filter((figure) => figure.anomaly).map((figure) => figure.field as Anomaly);

/**
 * For tests only: adds a figure (one a test defines, whose field its own RunResults carry) to
 * FIGURES, and to ANOMALIES if it is one, to prove that every reader takes its figures from the
 * table. Returns the function that takes it out again.
 */
export function registerFigure(figure: Figure): () => void {
  const figures = FIGURES as Figure[];
  const anomalies = ANOMALIES as string[];
  figures.push(figure);
  if (figure.anomaly) anomalies.push(figure.field);
  return () => {
    figures.splice(figures.indexOf(figure), 1);
    if (figure.anomaly) anomalies.splice(anomalies.indexOf(figure.field), 1);
  };
}

/**
 * What a queue calls its own parts, for the report's labels and sentences: the model queue's words
 * (MODEL_QUEUE_WORDS), or a library's (its entry in libraries/table.ts), which the report reads
 * through the strategy table (`queueWords` in sweepers/strategies.ts). The figures keep their
 * names (the JSON's fields); only what a person reads follows the queue.
 */
export interface QueueWords {
  /** The list a recovered job goes back on, where each entry of a job is a run of it. */
  readonly pending: string;
  /** Where a job that stalled too often is sent. */
  readonly dead: string;
  /**
   * Where the queue does not send such a job to `dead` at once, what it does instead, for the
   * readout: "{verb} N healthy jobs {to}" for a job dead-lettered early, "stalled N+ times, {notIn}"
   * for one that escaped (BullMQ marks the job to fail, `defa`, and fails it when a worker next takes
   * it). Unset: "sent N healthy jobs to {dead}", "not in {dead}".
   */
  readonly deadLetter?: { readonly verb: string; readonly to: string; readonly notIn: string };
  /**
   * What a job's entries in `pending` come to, before "N times" in the readout: unset, "that would
   * run up to" (each entry a run). BullMQ's are takes, since a take of a job marked to fail (`defa`)
   * fails it without running it.
   */
  readonly entriesAre?: string;
  /** Headings of FIGURES that name the model queue's parts, in this queue's words (`\n` where they break). */
  readonly headings: Readonly<Partial<Record<Figure['field'], string>>>;
  /** What a run raced, for the page's lede: what was seeded, and who recovered it (lower case: it may follow another queue's). */
  readonly race: string;
  /** A clean run, said of every job it recovered. */
  readonly recoveredOnce: string;
  /** Where a lost job is not, as "lost N jobs (…)". */
  readonly nowhere: string;
  /** A job no caller recovered, as "left N …": one and many. */
  readonly unreclaimed: { readonly one: string; readonly many: string };
  /** The counter a recovery raises; null where the queue keeps none (its counter figures are null, and nothing is said of them). */
  readonly counter: {
    /** A clean run, said of its counter after "and". */
    readonly counted: string;
    /** One increment of it, as "lost N …s". */
    readonly increment: string;
    /** What a lost increment is, in brackets; null: the model queue's, which depends on the run (report/report.ts). */
    readonly lost: string | null;
    /** A rise of it that no caller recorded, as "counted N … that …": one, many and what follows. */
    readonly extra: { readonly one: string; readonly many: string; readonly after: string };
  } | null;
}

/** The model queue's words: what the report has always said. */
export const MODEL_QUEUE_WORDS: QueueWords = {
  pending: 'pending',
  dead: 'dead',
  headings: {},
  race: 'expired leases seeded on a live server, swept by concurrent sweepers (one atomic script, or a loop of round trips)',
  recoveredOnce: 'every expired lease was reclaimed exactly once',
  nowhere: 'in no set at all',
  unreclaimed: { one: 'expired lease unreclaimed', many: 'expired leases unreclaimed' },
  counter: {
    counted: 'every stall was counted',
    increment: 'stall-counter increment',
    lost: null,
    extra: { one: 'stall', many: 'stalls', after: 'that no sweep recorded' },
  },
};

/**
 * Where a figure comes from: the server's state read after the race (what anyone can check on the
 * kept keys with --keep), the sweepers' own records of what they moved, both set against each
 * other, the server set against the re-leaser's record of the stalls it caused (--cycles), or the
 * observer's samples of the server taken during the race (--observe), which the final state no
 * longer shows, or the workers' own record of their takes (--fault failover --workers, whose
 * promoted replica lacks the old primary's last `runs` increments).
 */
export type FigureSource = 'server' | 'sweepers' | 'server+sweepers' | 'server+releaser' | 'observer' | 'workers';

/** The figures whose source a run states: every anomaly, the recoveries, and the forgotten stalls' total. */
export type SourcedFigure = Anomaly | 'recoveries' | 'forgottenStallCount' | 'overcountedStallCount';

/** Each figure's source; null where the run did not measure it. */
export type FigureSources = { readonly [name in SourcedFigure]: FigureSource | null };

/** A RESP reply as ioredis returns it: integers as numbers, bulk strings, nil, arrays. */
export type Reply = string | number | null | Reply[];

/** One command a sweeper sent for a job, with the server's reply (undefined: none came back). */
export interface SweeperCommand {
  /** The sweeper, numbered from 1. */
  readonly sweeper: number;
  /** The command as its arguments, the name first. */
  readonly command: readonly string[];
  readonly reply: Reply | undefined;
}

/**
 * One job of a run, every command the sweepers sent for it, in the order the server ran them as
 * far as the replies prove it. `proven` is false when they do not: the commands are then in the
 * order they were sent, and that order is not evidence.
 */
/** One seeded run the shrinking made, and whether the anomaly it keeps came up in it. */
export interface ShrinkStep {
  /** What the run tried: half the jobs, one sweeper fewer, or one job and two sweeps under another seed. */
  readonly stage: 'jobs' | 'sweepers' | 'one-job';
  readonly jobs: number;
  readonly sweepers: number;
  readonly seed: number;
  readonly found: boolean;
}

/** --shrink: a seeded run's anomaly, brought down to one job, two sweeps and the fewest switches. */
export interface ShrunkWitness {
  readonly mode: Mode;
  /** The audit's figure the shrinking kept above zero at every step. */
  readonly anomaly: Anomaly;
  /** The class the audit gives the witness's one job. */
  readonly outcome: string;
  /** The seeded run it started from. */
  readonly from: Omit<ShrinkStep, 'found' | 'stage'>;
  /** Every run made, in order: fewer jobs, then fewer sweepers, then one job and two sweeps. */
  readonly steps: readonly ShrinkStep[];
  /** Changes of sweep in the witness; null when no one-job run kept the anomaly. */
  readonly switches: number | null;
  /** The witness's round trips, as SWEEP:command; null when none was found. */
  readonly schedule: string | null;
  /** The explain line that replays it; null when none was found or explain cannot replay it. */
  readonly command: string | null;
}

export interface InterleavingExample {
  readonly job: string;
  readonly commands: readonly SweeperCommand[];
  readonly proven: boolean;
  /** What in the replies fixes the order, in a few words each. */
  readonly evidence: readonly string[];
  /**
   * One command was in flight at a time (--seed): the commands stand in the order their replies
   * came back, which is the order the server ran them in, whatever the replies prove besides.
   */
  readonly serial?: true;
}

export interface FaultCounts {
  /** Sweepers whose socket was destroyed at their crash point. */
  readonly crashes: number;
  /** Sweeps that ended with a call sent and no reply: the tool cannot know whether it ran. */
  readonly lostReplies: number;
  /** Times a killed sweeper connection came back. */
  readonly reconnects: number;
}

/**
 * The sweep calls that may have run without their reply reaching the tool (a reply lost to a killed
 * connection, a sweeper crashed), as the audit reconciles them: the job a round-trip sweeper held
 * at each (one entry per call; a job can appear more than once), and the calls that held none,
 * whose jobs the server chose (a one-call sweep's) or that changed no job (a round trip's detect).
 */
export interface CallDoubts {
  readonly held: readonly number[];
  readonly blindCalls: number;
}

export interface ChaosCounts {
  readonly scriptFlushes: number;
  readonly clientKills: number;
}

export interface ModeRun extends RaceSize {
  readonly mode: Mode;
  /**
   * The flag that set `jobs` where it is not --jobs, as a refusal of the run's size names it: a
   * round-trip mode's `--loop-jobs`, or in a grid the axis (`--vary jobs`, `--vary loop-jobs`).
   */
  readonly jobsFlag?: JobsFlag;
  readonly queue: string;
  readonly probeDelayMs: number;
  readonly keep: boolean;
  /** Faults, workers, cycles, observer; absent for the plain race. */
  readonly consequences?: Consequences;
  /** The rest defaults to the foundation's behaviour: a list, no live jobs, back to back, one process. */
  readonly pending?: PendingKind;
  readonly live?: number;
  readonly maxSweeps?: number;
  readonly cadence?: Cadence;
  readonly processes?: boolean;
  /** The script mode's source, already loaded by SCRIPT LOAD. */
  readonly userScript?: string;
  /** Which of several trials this is (1-based). */
  readonly trial?: number;
  /**
   * Read the server's LATENCY HISTOGRAM around the race for serverCallMsP99: 'required' (asked
   * for with --server-stats: a refusal is the run's error) or 'if-available' (the tool's own
   * server: the figure is left out where the server cannot give it).
   */
  readonly serverStats?: 'required' | 'if-available';
  /** The progress line for long runs (on a terminal's stderr), shared by the races run side by side. */
  readonly progress?: ProgressBoard;
  /**
   * Where the run says what it could not undo and the user must (a library or keys left on the
   * server), one line each; the command line binds it to stderr. Unset, such lines go nowhere.
   */
  readonly warn?: (line: string) => void;
  /** A library mode's package, as found in the user's project (--lib). */
  readonly library?: FoundLibrary;
  /** --seed: the race's turns chosen by a scheduler seeded with it. */
  readonly seed?: number;
}

/** How one run was set up beyond its size, as its result and its JSON both carry it. */
export interface RunSetup extends RaceSize {
  readonly trial: number;
  readonly pending: PendingKind;
  readonly live: number;
  readonly maxSweeps: number;
  readonly processes: boolean;
}

export interface RunResult extends AuditCounts, RunSetup {
  readonly mode: Mode;
  readonly queue: string;
  readonly wallMs: number;
  readonly jobsPerSec: number;
  /** Commands the sweepers sent, all together. */
  readonly roundTrips: number;
  readonly sweeps: number;
  /** A sweeper hit its sweep budget before a sweep found nothing. */
  readonly cutShort: boolean;
  readonly consequences: Consequences;
  /**
   * The NOSCRIPT replies to the sweepers' EVALSHA calls, each of which made the sweeper re-send the
   * script as EVAL (not the tool's own calls: its heartbeat's, the seeding's, the audit's). Not the
   * EVALs the server ran: one sent on a connection killed meanwhile may never have reached it.
   */
  readonly noscriptFallbacks: number;
  /**
   * The same of the workers' script calls (a take from a sorted set, every finish), of the
   * re-leaser's and of the observer's, each by its own count; undefined for one the run did not
   * have (no --workers, no --cycles, no --observe).
   */
  readonly workerNoscriptFallbacks: number | undefined;
  readonly releaserNoscriptFallbacks: number | undefined;
  readonly observerNoscriptFallbacks: number | undefined;
  /** Observer samples (jobs checked); undefined without --observe. */
  readonly samples: number | undefined;
  /** What the faults did; undefined without --fault. */
  readonly faultCounts: (FaultCounts & ChaosCounts) | undefined;
  /** Jobs the workers took, a job taken twice counted twice; undefined without --workers. */
  readonly executions: number | undefined;
  /** What the failover drill found; absent without --fault failover. */
  readonly failover?: FailoverFigures;
  /** What the lapsed locks did; absent without --fault lapsed-lock. */
  readonly lapsedLock?: LapsedLockFigures;
  /** Attempts repeated because WATCH saw a change (watch mode; 0 elsewhere). */
  readonly retries: number;
  /** The function mode's library, when --keep left it on the server. */
  readonly keptLibrary?: string;
  /** Per-call time of one-call-per-sweep strategies as the client saw it (ms); null for round-trip modes and with --processes. */
  readonly callMsP50: number | null;
  readonly callMsP99: number | null;
  readonly callMsMax: number | null;
  /** p99 of the server's own time per script call during the race (ms, power-of-two resolution); null when not measured. */
  readonly serverCallMsP99: number | null;
  /**
   * The server's own time in script calls during the race per expired job (µs, INFO commandstats
   * read before and after the race; the run's heartbeat calls fall inside it too, a few per
   * second); null when not measured. What the sweep script costs, without the client's share.
   */
  readonly serverUsPerJob?: number | null;
  /** Where the run's time went, phase by phase (PhasesMs); absent for a library's run and for a totals row. */
  readonly phasesMs?: PhasesMs;
  /** The server (`host:port`) the queue lived on; set by the caller that placed the queue. */
  readonly node?: string;
  /** Where each anomaly figure comes from. */
  readonly sources: FigureSources;
  /** A loop run's doubly recovered job, command by command; null for other runs, or none in the sample. */
  readonly example: InterleavingExample | null;
  /** A library mode's run: the library and the version of it that ran. */
  readonly library?: { readonly name: LibraryName; readonly version: string };
}

/** The flag, without its dashes, that set a run's jobs; `axis`: a grid's `--vary` set it, one value per cell. */
export interface JobsFlag {
  readonly flag: 'jobs' | 'loop-jobs';
  readonly axis: boolean;
}

/**
 * Wall time of each phase of one run, in ms: the claim of the queue; the seeding (with the sweep
 * script loaded); the race (the sweepers' connections, the race and its consequences); the audit
 * (the keys confirmed, the server read back and judged); and the clean-up (the heartbeat stopped,
 * the keys confirmed a last time and deleted: known before the report is made, since a run returns
 * only once its keys are gone; about nothing with --keep).
 */
export interface PhasesMs {
  readonly claim: number;
  readonly seed: number;
  readonly race: number;
  readonly audit: number;
  readonly clean: number;
}

const PACKAGE = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  version: string;
  dependencies?: Record<string, string>;
};
export const VERSION = PACKAGE.version;
/** The packages the tool itself depends on (ioredis, commander, …): code of theirs that throws runs on the tool's behalf. */
export const OWN_DEPENDENCIES: ReadonlySet<string> = new Set(Object.keys(PACKAGE.dependencies ?? {}));
/** The folder the tool is installed in (its package.json's), with a trailing separator. */
export const TOOL_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  readonly stdoutIsTty: boolean;
  /** On a terminal, progress rewrites one line in place; elsewhere it prints a plain line now and then. */
  readonly stderrIsTty?: boolean;
  /** The terminal's width, where stdout (stderr) is a terminal; else $COLUMNS or 80 (see text.ts). */
  readonly stdoutColumns?: number;
  readonly stderrColumns?: number;
  /** Whether a question can be asked (clean --all without --yes). */
  readonly stdinIsTty?: boolean;
  /** Asks a yes/no question on the terminal; absent where nobody can answer. `signal` withdraws it. */
  readonly confirm?: (question: string, signal?: AbortSignal) => Promise<boolean>;
  /**
   * Ends the process at once with `code` (a third signal), once the command line has said its last
   * words: under --json, the error object `message` makes; absent, the process simply exits.
   */
  readonly leave?: (code: number, message: string) => void;
}

/**
 * The jobs a run's jobs/s counts: every expired job seeded, which a race that runs to its end
 * reclaims; a race its sweepers' limit cut short (--max-sweeps) counts only the leases it did
 * reclaim, so that stopping early does not read as speed.
 */
export function jobsRaced(run: Pick<RunResult, 'jobs' | 'unreclaimed' | 'cutShort'>): number {
  return run.cutShort ? Math.max(0, run.jobs - run.unreclaimed) : run.jobs;
}

/**
 * A race's wall time as its run reports it, to 0.1 ms, and its jobs/s made from that same figure,
 * so that jobs ÷ wallMs, a grid cell's or a reader's, gives it back exactly: made from the
 * unrounded time, a race of 1.6 ms read 3% apart in the two. Pure.
 */
export function raceTiming(run: Pick<RunResult, 'jobs' | 'unreclaimed' | 'cutShort'>, ms: number): Pick<RunResult, 'wallMs' | 'jobsPerSec'> {
  const wallMs = Math.round(ms * 10) / 10;
  return { wallMs, jobsPerSec: jobsPerSec(jobsRaced(run), wallMs) };
}

/** Jobs per second over `ms` milliseconds, rounded; a run too short to time counts as 1 µs. */
export function jobsPerSec(jobs: number, ms: number): number {
  return Math.round(jobs / (Math.max(ms, 0.001) / 1000));
}

/**
 * The nearest-rank percentile (p in 0..100) of values already sorted ascending: the smallest value
 * with at least p% of all values at or below it. NaN for no values.
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? Number.NaN;
}

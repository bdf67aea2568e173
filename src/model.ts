/**
 * The program's words, shared by every layer: the modes and pending kinds, the limits of a run's
 * parameters, what a run is asked to do (RaceOptions for a command, ModeRun for one mode on one
 * queue) and what it found (RunResult), the consequences a run may add, and the Io seam every
 * output goes through. Types and constants only (and one line of arithmetic): this module imports
 * nothing of the tool's, so any folder may import it without making a circle.
 */
import type { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';

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
  loopJobs: { min: 1, max: 10_000_000, default: 100_000 },
  queues: { min: 1, max: 64, default: 1 },
  embeddedCluster: { min: 3, max: 9, default: 3 },
} as const satisfies Record<string, IntLimit>;

export const MODES = ['atomic', 'loop', 'watch', 'claim', 'function', 'script'] as const;

export type Mode = (typeof MODES)[number];

/** What `--mode` accepts beyond a single mode. `all` leaves out script (it needs --script). */
export const MODE_SETS: Record<string, readonly Mode[]> = {
  both: ['atomic', 'loop'],
  all: ['atomic', 'loop', 'watch', 'claim', 'function'],
};

/** Where recovered jobs go: a list (RPUSH, duplicates visible) or a sorted set (ZADD, as EchoMQ does). */
export const PENDING_KINDS = ['list', 'zset'] as const;

export type PendingKind = (typeof PENDING_KINDS)[number];

export const EXPECTATIONS = ['clean', 'race'] as const;

export type Expectation = (typeof EXPECTATIONS)[number];

export interface RaceOptions {
  readonly modes: readonly Mode[];
  readonly jobs: number;
  readonly sweepers: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
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
}

/** The default number of live leases: a tenth of the expired ones, rounded down. */
export function defaultLive(jobs: number): number {
  return Math.floor(jobs / 10);
}

export const FAULTS = ['sweeper-crash', 'script-flush', 'client-kill'] as const;

export type FaultName = (typeof FAULTS)[number];

export interface ConsequenceOptions {
  readonly faults: readonly FaultName[];
  readonly workers: number;
  readonly cycles: number;
  readonly observe: boolean;
  readonly allowServerWide: boolean;
}

/** What a run adds to the plain race; the defaults are the plain race. */
export interface Consequences {
  /** Faults that apply to this run's mode. */
  readonly faults: readonly FaultName[];
  readonly workers: number;
  readonly cycles: number;
  readonly observe: boolean;
  /** One line for each requested fault that cannot reach this mode. */
  readonly notes: readonly string[];
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
   * `active` the whole run and are not counted as left to reclaim.
   */
  watch(redis: Redis, active: string, mode: string, queue: string, jobs: number, live: number): () => void;
}

export interface AuditCounts {
  readonly recoveries: number;
  readonly doubleRecoveries: number;
  readonly duplicatePending: number;
  readonly lostIncrements: number;
  readonly extraIncrements: number;
  readonly lostJobs: number;
  readonly misplaced: number;
  readonly unreclaimed: number;
  /** Job executions beyond the first, by workers: Σ max(0, runs(j) − 1). */
  readonly doubleExecutions: number;
  /** Jobs whose true stall count reached max-stalled but that are not in dead. */
  readonly deadLetterEscapes: number;
  /** Observer samples that found a job in no place / in two places at once (set by the run). */
  readonly windowInNeither: number;
  readonly windowInBoth: number;
  /** Moves the server shows (job out of active, counter up) that no sweeper heard back: not anomalies. */
  readonly unacknowledgedMoves: number;
  /** Live jobs (valid leases) that a sweep moved or counted: work taken from a busy worker. */
  readonly stolenLeases: number;
  /** Where a strategy's own record disagrees with the server (checked for user scripts). */
  readonly misreported: number;
  /** Jobs moved more than once: the readout's "recovered N jobs twice". Not an anomaly of its own. */
  readonly jobsRecoveredMoreThanOnce: number;
}

/** The anomaly counts: every one must be 0 for a run to be clean. */
export const ANOMALIES = [
  'doubleRecoveries',
  'duplicatePending',
  'lostIncrements',
  'extraIncrements',
  'lostJobs',
  'misplaced',
  'unreclaimed',
  'doubleExecutions',
  'deadLetterEscapes',
  'windowInNeither',
  'windowInBoth',
  'stolenLeases',
  'misreported',
] as const satisfies readonly (keyof AuditCounts)[];

export interface FaultCounts {
  /** Sweepers whose socket was destroyed at their crash point. */
  readonly crashes: number;
  /** Sweeps that ended with a call sent and no reply: the tool cannot know whether it ran. */
  readonly lostReplies: number;
  /** Times a killed sweeper connection came back. */
  readonly reconnects: number;
}

export interface ChaosCounts {
  readonly scriptFlushes: number;
  readonly clientKills: number;
}

export interface ModeRun {
  readonly mode: Mode;
  readonly queue: string;
  readonly jobs: number;
  readonly sweepers: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
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
}

export interface RunResult extends AuditCounts {
  readonly mode: Mode;
  readonly queue: string;
  readonly sweepers: number;
  readonly jobs: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly wallMs: number;
  readonly jobsPerSec: number;
  /** Commands the sweepers sent, all together. */
  readonly roundTrips: number;
  readonly sweeps: number;
  /** A sweeper hit its sweep budget before a sweep found nothing. */
  readonly cutShort: boolean;
  readonly consequences: Consequences;
  /** EVALSHA calls that fell back to EVAL after NOSCRIPT. */
  readonly noscriptFallbacks: number;
  /** Observer samples (jobs checked); undefined without --observe. */
  readonly samples: number | undefined;
  /** What the faults did; undefined without --fault. */
  readonly faultCounts: (FaultCounts & ChaosCounts) | undefined;
  /** Jobs the workers took, a job taken twice counted twice; undefined without --workers. */
  readonly executions: number | undefined;
  readonly trial: number;
  readonly pending: PendingKind;
  readonly live: number;
  readonly maxSweeps: number;
  readonly processes: boolean;
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
  /** The server (`host:port`) the queue lived on; set by the caller that placed the queue. */
  readonly node?: string;
}

export const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

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
  /** Asks a yes/no question on the terminal; absent where nobody can answer. */
  readonly confirm?: (question: string) => Promise<boolean>;
}

/** Jobs per second over `ms` milliseconds, rounded; a run too short to time counts as 1 µs. */
export function jobsPerSec(jobs: number, ms: number): number {
  return Math.round(jobs / (Math.max(ms, 0.001) / 1000));
}

/**
 * Defaults, limits and the validating parsers behind every flag. Each parser throws a usage error
 * that names the flag and what it accepts, so commander's callers never see a NaN.
 */
import { randomBytes } from 'node:crypto';
import { usageError } from './errors.js';
import type { ConsequenceOptions } from './consequence-options.js';
import { QUEUE_NAME } from './keys.js';

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

/** Modes whose sweep is a round trip per command: slow by nature, so they run on --loop-jobs jobs. */
const ROUND_TRIP_MODES: readonly Mode[] = ['loop', 'watch', 'claim'];

/** The jobs a mode runs on: --jobs, or for a round-trip mode the smaller of --jobs and --loop-jobs. */
export function jobsForMode(mode: Mode, jobs: number, loopJobs: number): number {
  return ROUND_TRIP_MODES.includes(mode) ? Math.min(jobs, loopJobs) : jobs;
}

export const EXPECTATIONS = ['clean', 'race'] as const;
export type Expectation = (typeof EXPECTATIONS)[number];

/** A whole number within limits, or a usage error naming the flag. */
export function parseIntFlag(flag: string, limit: { min: number; max: number }, raw: string): number {
  const text = raw.trim();
  if (!/^[+-]?\d+$/.test(text)) {
    throw usageError(`${flag}: ${JSON.stringify(raw)} is not a whole number; expected ${limit.min} to ${limit.max}`);
  }
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < limit.min || value > limit.max) {
    throw usageError(`${flag}: ${text} is out of range; expected ${limit.min} to ${limit.max}`);
  }
  return value;
}

/** A commander argument parser for an integer flag. */
export const intFlag = (flag: string, limit: { min: number; max: number }) => (raw: string): number =>
  parseIntFlag(flag, limit, raw);

export function parseModes(raw: string): Mode[] {
  const set = MODE_SETS[raw];
  if (set) return [...set];
  const modes: Mode[] = [];
  for (const part of raw.split(',').map((p) => p.trim())) {
    if (!(MODES as readonly string[]).includes(part)) {
      throw usageError(`--mode: ${JSON.stringify(part)} is not a mode; expected one of ${[...MODES, ...Object.keys(MODE_SETS)].join(', ')}`);
    }
    if (!modes.includes(part as Mode)) modes.push(part as Mode);
  }
  return modes;
}

/** --script alone runs the script mode; with --mode, the script mode joins the modes given. */
export function modesWithScript(modes: readonly Mode[], script: string | undefined, modeGiven: boolean): Mode[] {
  if (script === undefined) return [...modes];
  if (!modeGiven) return ['script'];
  return modes.includes('script') ? [...modes] : [...modes, 'script'];
}

export function parseExpectation(raw: string): Expectation {
  if (!(EXPECTATIONS as readonly string[]).includes(raw)) {
    throw usageError(`--expect: ${JSON.stringify(raw)} is not an expectation; expected clean or race`);
  }
  return raw as Expectation;
}

export function parsePendingKind(raw: string): PendingKind {
  if (!(PENDING_KINDS as readonly string[]).includes(raw)) {
    throw usageError(`--pending: ${JSON.stringify(raw)} is not a pending type; expected list or zset`);
  }
  return raw as PendingKind;
}

export function parseQueueName(raw: string): string {
  // `--queue --help` would otherwise run on a queue named "--help": a value that looks like an
  // option is a missing value.
  if (raw.startsWith('-')) {
    throw usageError(`--queue: ${JSON.stringify(raw)} looks like an option, not a queue name; give the name right after --queue (it may not start with '-')`);
  }
  if (!QUEUE_NAME.test(raw) || raw.length > 100) {
    throw usageError(
      `--queue: ${JSON.stringify(raw)} is not a valid queue name; use 1 to 100 letters, digits, '-' or '_' (no braces, glob characters or spaces)`,
    );
  }
  return raw;
}

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
  /** --fault, --workers, --cycles, --observe, --allow-server-wide (checked in consequence-options.ts). */
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

/** Checks that concern several flags at once. */
export function checkRaceOptions(options: RaceOptions): void {
  if (options.stalledBefore >= options.maxStalled) {
    throw usageError(
      `--stalled-before: ${options.stalledBefore} must be below --max-stalled (${options.maxStalled}); at ${options.maxStalled - 1} the first recovery already dead-letters the job`,
    );
  }
  if (options.modes.includes('script') && options.script === undefined) {
    throw usageError('--mode script: needs --script FILE.lua, the sweep script to test');
  }
  if (options.csv && options.json) {
    throw usageError('--csv and --json: pick one output format');
  }
  if (options.expect === 'race' && !options.modes.includes('loop')) {
    throw usageError('--expect race: needs a loop run (--mode loop or both), since only the loop can race');
  }
}

/** The default queue name: `race-` and 8 random hex characters. */
export function randomQueueName(): string {
  return `race-${randomBytes(4).toString('hex')}`;
}

/**
 * What every sweeping strategy shares: the context it runs in and the one call the race makes.
 */
import type { Redis } from 'ioredis';
import type { SweeperFaults } from '../consequences/faults/sweeper-faults.js';
import type { LatencyLog } from '../server/call-latency.js';
import type { QueueKeys } from '../queue/keys.js';
import type { MoveLog } from './move-log.js';
import type { ServerClock } from '../server/clock.js';
import type { PendingKind } from '../shared/model.js';

export interface SweeperContext {
  readonly redis: Redis;
  readonly keys: QueueKeys;
  readonly clock: ServerClock;
  readonly batch: number;
  readonly maxStalled: number;
  readonly probeDelayMs: number;
  readonly signal: AbortSignal;
  /** Fault hooks to call at the strategy's crash point (see src/faults/sweeper-faults.ts). */
  readonly faults?: SweeperFaults | undefined;
  /** What pending is: a list (RPUSH, the default) or a sorted set (ZADD 0). */
  readonly pending?: PendingKind;
  /** The script mode's Lua source (already checked to compile by SCRIPT LOAD). */
  readonly userScript?: string;
  /** The function mode's FCALL name, loaded for this run. */
  readonly functionName?: string;
  /** Per-job command logs for a few jobs, for the report's example (the loop keeps them). */
  readonly sample?: SweeperSample | undefined;
}

export interface Sweeper {
  /** One sweep of at most `batch` jobs; resolves to how many expired ids it detected. */
  sweep(): Promise<number>;
  /** Every job this sweeper moved, and where to when the strategy knows. */
  readonly record: MoveLog;
  /** Commands this sweeper has sent: its round trips. */
  readonly commands: number;
  /** Script strategies: calls that fell back from EVALSHA to EVAL on NOSCRIPT. */
  readonly noscriptFallbacks?: number;
  /** Attempts it had to repeat (a WATCH that saw a change); absent where a strategy never retries. */
  readonly retries?: number;
  /** Returned ids that are no job id at all (a script's return values that cannot be right). */
  readonly strayIds?: number;
  /** For strategies whose sweep is one server call: how long each call took, as the client saw it. */
  readonly latency?: LatencyLog;
}

export type SweeperFactory = (context: SweeperContext) => Sweeper;

/** What one sweeper sees of the run's per-job command logs (see command-sample.ts). */
export interface SweeperSample {
  /** The runner for commands about job `id`: logging when the job is sampled, `exec` itself otherwise. */
  execFor(id: string, exec: Exec): Exec;
  /** This sweeper is about to take an entry out of pending (RPUSH's replies then stop being a clock). */
  notePendingRemoval(): void;
}

/** A command runner that counts what it sends, for strategies that speak raw commands. */
export type Exec = (command: string, ...args: (string | number)[]) => Promise<unknown>;

export function countingExec(redis: Redis): { exec: Exec; count: () => number } {
  let sent = 0;
  return {
    exec: (command, ...args) => {
      sent++;
      return redis.call(command, ...args);
    },
    count: () => sent,
  };
}

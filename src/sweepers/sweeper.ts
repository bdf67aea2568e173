/**
 * What every sweeping strategy shares: the context it runs in and the one call the race makes.
 */
import type { Redis } from 'ioredis';
import type { LatencyLog } from '../call-latency.js';
import type { QueueKeys } from '../keys.js';
import { MoveLog } from '../move-log.js';
import type { ServerClock } from '../server-clock.js';

export interface SweeperContext {
  readonly redis: Redis;
  readonly keys: QueueKeys;
  readonly clock: ServerClock;
  readonly batch: number;
  readonly maxStalled: number;
  readonly probeDelayMs: number;
  readonly signal: AbortSignal;
}

export interface Sweeper {
  /** One sweep of at most `batch` jobs; resolves to how many expired ids it detected. */
  sweep(): Promise<number>;
  /** Every job this sweeper moved, and where to when the strategy knows. */
  readonly record: MoveLog;
  /** Commands this sweeper has sent: its round trips. */
  readonly commands: number;
  /** For strategies whose sweep is one server call: how long each call took, as the client saw it. */
  readonly latency?: LatencyLog;
}

export type SweeperFactory = (context: SweeperContext) => Sweeper;

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

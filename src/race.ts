/**
 * Runs N sweepers against one queue, all released together from one barrier, each on its own
 * connection, each sweeping until a sweep detects nothing (or its sweep budget runs out).
 */
import type { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import type { LatencyLog } from './call-latency.js';
import type { QueueKeys } from './keys.js';
import type { MoveLog } from './move-log.js';
import type { ServerClock } from './server-clock.js';
import type { SweeperFactory } from './sweepers/sweeper.js';

export interface RaceSetup {
  readonly connections: readonly Redis[];
  readonly factory: SweeperFactory;
  readonly keys: QueueKeys;
  readonly clock: ServerClock;
  readonly batch: number;
  readonly maxStalled: number;
  readonly probeDelayMs: number;
  /** Sweeps each sweeper may make before it stops: a bound, so a broken strategy cannot spin. */
  readonly maxSweeps: number;
  readonly signal: AbortSignal;
}

export interface RaceResult {
  readonly wallMs: number;
  readonly records: readonly MoveLog[];
  /** Per-call durations of the sweepers that make one server call per sweep. */
  readonly latencies: readonly LatencyLog[];
  /** Commands sent by all sweepers together. */
  readonly commands: number;
  readonly sweeps: number;
  /** True when a sweeper stopped on its sweep budget rather than on an empty sweep. */
  readonly cutShort: boolean;
}

/** Enough sweeps for a correct strategy at any size, with room for sweeps that find others' jobs. */
export function defaultMaxSweeps(jobs: number, batch: number): number {
  return 10 * Math.ceil(jobs / batch) + 10;
}

export async function race(setup: RaceSetup): Promise<RaceResult> {
  // One failing sweeper (a lost server) stops the others rather than leaving them mid-race.
  const stop = new AbortController();
  const signal = AbortSignal.any([setup.signal, stop.signal]);
  const sweepers = setup.connections.map((redis) =>
    setup.factory({ redis, keys: setup.keys, clock: setup.clock, batch: setup.batch, maxStalled: setup.maxStalled, probeDelayMs: setup.probeDelayMs, signal }),
  );

  let release!: () => void;
  const barrier = new Promise<void>((resolve) => (release = resolve));
  let sweeps = 0;
  let cutShort = false;
  const runs = sweepers.map(async (sweeper) => {
    await barrier;
    try {
      for (let n = 0; ; n++) {
        if (signal.aborted) return;
        if (n === setup.maxSweeps) {
          cutShort = true;
          return;
        }
        sweeps++;
        if ((await sweeper.sweep()) === 0) return;
      }
    } catch (err) {
      stop.abort();
      throw err;
    }
  });

  const started = performance.now();
  release();
  const settled = await Promise.allSettled(runs);
  const wallMs = performance.now() - started;
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return {
    wallMs,
    records: sweepers.map((s) => s.record),
    latencies: sweepers.flatMap((s) => (s.latency ? [s.latency] : [])),
    commands: sweepers.reduce((sum, s) => sum + s.commands, 0),
    sweeps,
    cutShort,
  };
}

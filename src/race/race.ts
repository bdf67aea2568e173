/**
 * Runs N sweepers against one queue, all released together from one barrier, each on its own
 * connection, each sweeping until a sweep detects nothing (or its sweep budget runs out).
 */
import type { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import type { LatencyLog } from '../server/call-latency.js';
import type { QueueKeys } from '../queue/keys.js';
import type { FaultPlan } from '../consequences/faults/sweeper-faults.js';
import type { CommandSample } from '../sweepers/command-sample.js';
import type { MoveLog } from '../sweepers/move-log.js';
import type { ServerClock } from '../server/clock.js';
import { sweepUntilDone } from './sweeper-life.js';
import { gatedConnection } from './gated-connection.js';
import type { SeededScheduler } from './seeded-scheduler.js';
import type { Sweeper, SweeperContext, SweeperFactory } from '../sweepers/sweeper.js';
import { BACK_TO_BACK, LIMITS, type Cadence } from '../shared/model.js';

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
  /** Injected faults: hooks for the sweepers, and what a sweeper does when its connection goes. */
  readonly faults?: FaultPlan | undefined;
  /** Sweeps back to back unless given. */
  readonly cadence?: Cadence;
  /** What some strategies need beyond the common context: pending's type, a script, a function. */
  readonly extras?: Pick<SweeperContext, 'pending' | 'userScript' | 'functionName'>;
  /** Per-job command logs of a few jobs, shared by the sweepers (the loop keeps them). */
  readonly sample?: CommandSample | undefined;
  /** --seed: one command in flight at a time, the next sweeper chosen by the seeded scheduler. */
  readonly scheduler?: SeededScheduler | undefined;
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
  /** NOSCRIPT replies that made a sweeper fall back to EVAL, over all sweepers (lua/cached-script.ts: not the EVALs the server ran). */
  readonly noscriptFallbacks: number;
  /** Attempts repeated (WATCH saw a change), all sweepers together. */
  readonly retries: number;
  /** Returned ids that were no job id at all. */
  readonly strayIds: number;
}

/**
 * Enough sweeps for a correct strategy at any size, with room for sweeps that find others' jobs.
 * With --cycles the re-leaser hands jobs back while the sweepers run, and a sweep may find as few
 * as one (at 300 jobs and 3 cycles, one run in six to twelve had a sweeper reach its 40): room for
 * every return of every job swept alone, within the flag's own limit. Pure.
 */
export function defaultMaxSweeps(jobs: number, batch: number, cycles = 1): number {
  const swept = 10 * Math.ceil(jobs / batch) + 10;
  return cycles > 1 ? Math.min(LIMITS.maxSweeps.max, Math.max(swept, jobs * cycles + 10)) : swept;
}

export async function race(setup: RaceSetup): Promise<RaceResult> {
  // One failing sweeper (a lost server) stops the others rather than leaving them mid-race.
  const stop = new AbortController();
  const signal = AbortSignal.any([setup.signal, stop.signal]);
  const { scheduler } = setup;
  // A stopped run must not leave sweepers waiting for turns that will never come.
  if (scheduler) signal.addEventListener('abort', () => scheduler.fail(signal.reason), { once: true });
  const sweepers = setup.connections.map((redis, index) =>
    setup.factory({
      // Without a seed the sweepers hold the connections themselves: nothing is added per command.
      redis: scheduler ? gatedConnection(redis, { turn: (label) => scheduler.turn(index, label), done: () => scheduler.done() }) : redis,
      keys: setup.keys,
      clock: setup.clock,
      batch: setup.batch,
      maxStalled: setup.maxStalled,
      probeDelayMs: setup.probeDelayMs,
      signal,
      faults: setup.faults?.forSweeper(index, redis),
      sample: setup.sample?.forSweeper(index),
      ...setup.extras,
    }),
  );

  let release!: () => void;
  const barrier = new Promise<void>((resolve) => (release = resolve));
  let sweeps = 0;
  let cutShort = false;
  // The first failure is the cause; the others are sweepers it stopped (aborted sleeps, closed sockets).
  let firstError: unknown;
  let failedOnce = false;
  const runs = sweepers.map(async (sweeper, index) => {
    await barrier;
    try {
      const connection = setup.connections[index];
      const faults = setup.faults;
      // The job the failed sweep held, if any, is let go either way: the next sweep starts afresh.
      const recover = faults && connection ? (err: unknown) => faults.recover(index, connection, err, signal, sweeper.record.takeHeld()) : undefined;
      const outcome = await sweepUntilDone(
        scheduler ? numberedSweeps(sweeper, scheduler, index) : sweeper,
        setup.maxSweeps,
        setup.cadence ?? BACK_TO_BACK,
        signal,
        Math.random,
        recover,
      );
      sweeps += outcome.sweeps;
      if (outcome.cutShort) cutShort = true;
      scheduler?.stop(index);
    } catch (err) {
      scheduler?.fail(err);
      if (!failedOnce) {
        failedOnce = true;
        firstError = err;
      }
      stop.abort();
      throw err;
    }
  });

  const started = performance.now();
  release();
  await Promise.allSettled(runs);
  const wallMs = performance.now() - started;
  if (failedOnce) throw firstError;
  return {
    wallMs,
    records: sweepers.map((s) => s.record),
    latencies: sweepers.flatMap((s) => (s.latency ? [s.latency] : [])),
    commands: sweepers.reduce((sum, s) => sum + s.commands, 0),
    sweeps,
    cutShort,
    noscriptFallbacks: sweepers.reduce((sum, s) => sum + (s.noscriptFallbacks ?? 0), 0),
    retries: sweepers.reduce((sum, s) => sum + (s.retries ?? 0), 0),
    strayIds: sweepers.reduce((sum, s) => sum + (s.strayIds ?? 0), 0),
  };
}

/** The sweeper, telling the scheduler where each of its sweeps begins. */
function numberedSweeps(sweeper: Sweeper, scheduler: SeededScheduler, index: number): Sweeper {
  return Object.create(sweeper, {
    sweep: {
      value: () => {
        scheduler.beginSweep(index);
        return sweeper.sweep();
      },
    },
  }) as Sweeper;
}

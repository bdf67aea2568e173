/**
 * A run's sweep rounds with everything around them: the faults (hooks in the sweepers, a chaos
 * connection), the workers, the observer, and the re-leasing between `--cycles`. With none of
 * these it is exactly one race.
 */
import type { Redis } from 'ioredis';
import { CycleTally, addWindows, type WindowCounts } from '../audit/consequence-rules.js';
import { movesPerJob } from '../audit/rules.js';
import type { LatencyLog } from '../server/call-latency.js';
import { CommandSample } from '../sweepers/command-sample.js';
import type { ServerTarget } from '../server/connection.js';
import { expiredLeases, startReleaser, type Releaser } from '../consequences/cycles.js';
import { startChaos } from '../consequences/faults/chaos.js';
import { FaultPlan } from '../consequences/faults/sweeper-faults.js';
import type { FailoverDrill } from './failover-drill.js';
import type { QueueKeys } from '../queue/keys.js';
import { startObserver, type Observer } from '../consequences/observer.js';
import { preloadConsequenceScripts } from '../lua/consequence-scripts.js';
import { race, type RaceResult, type RaceSetup } from './race.js';
import { SeededScheduler } from './seeded-scheduler.js';
import type { ServerClock } from '../server/clock.js';
import type { SweeperFactory } from '../sweepers/sweeper.js';
import { startWorkers, type WorkerPool, type WorkerTakes } from '../consequences/workers.js';
import type { CallDoubts, ChaosCounts, FaultCounts, Cadence, Consequences } from '../shared/model.js';

export interface RoundsSetup {
  /** The server as the race's connections reach it: through the latency proxy with --latency. */
  readonly target: ServerTarget;
  readonly admin: Redis;
  readonly connections: readonly Redis[];
  readonly factory: SweeperFactory;
  readonly keys: QueueKeys;
  readonly clock: ServerClock;
  readonly jobs: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly probeDelayMs: number;
  readonly maxSweeps: number;
  readonly signal: AbortSignal;
  readonly consequences: Consequences;
  /** Job ids the tally covers: the expired jobs and the live ones after them. */
  readonly tracked?: number;
  readonly cadence?: Cadence;
  readonly extras?: RaceSetup['extras'];
  /** --fault failover: the drill's gate around every sweep call. */
  readonly drill?: FailoverDrill;
  /** Runs one race some other way (sweepers in child processes); faults do not reach those. */
  readonly runOnce?: () => Promise<RaceResult>;
  /** --seed: the race's turns chosen by a scheduler seeded with it (race/seeded-scheduler.ts). */
  readonly seed?: number | undefined;
  /** Hears each round's workers' stage (WorkerPool.stage) as they start, and undefined as they stop: the progress line's. */
  readonly onWorkers?: (stage: (() => string | undefined) | undefined) => void;
}

export interface RoundsResult {
  readonly wallMs: number;
  readonly commands: number;
  readonly sweeps: number;
  readonly cutShort: boolean;
  readonly noscriptFallbacks: number;
  readonly tally: CycleTally;
  readonly windows: WindowCounts | undefined;
  readonly faultCounts: (FaultCounts & ChaosCounts) | undefined;
  readonly executions: number | undefined;
  /**
   * The EVAL fallbacks after NOSCRIPT of the workers', the re-leaser's and the observer's own
   * script calls, over every round, by their own counts; undefined for one the run did not have.
   */
  readonly workerNoscriptFallbacks: number | undefined;
  readonly releaserNoscriptFallbacks: number | undefined;
  readonly observerNoscriptFallbacks: number | undefined;
  /** With workers and a failover drill: the workers' own record of their takes on either side of it. */
  readonly workerTakes: WorkerTakes | undefined;
  /** The calls a fault left in doubt; undefined without sweeper faults. */
  readonly doubts: CallDoubts | undefined;
  readonly retries: number;
  readonly strayIds: number;
  /** Per-call times of the one-call strategies, over every round. */
  readonly latencies: readonly LatencyLog[];
  /**
   * Per-job command logs of a few jobs, for the report's example; undefined where none are kept:
   * with --cycles (a re-leased job's commands would mix its stalls) or sweepers in child processes.
   */
  readonly sample: CommandSample | undefined;
}

export async function raceRounds(setup: RoundsSetup): Promise<RoundsResult> {
  const { consequences: c, keys, signal } = setup;
  const plan = c.faults.length > 0 ? new FaultPlan(c.faults, setup.target.display) : undefined;
  if (plan) for (const [index, redis] of setup.connections.entries()) await plan.register(index, redis);

  const pending = setup.extras?.pending ?? 'list';
  await preloadConsequenceScripts(setup.admin, { workers: c.workers > 0, zsetPending: pending === 'zset', releaser: c.cycles > 1, observer: c.observe });
  const tally = new CycleTally(setup.tracked ?? setup.jobs);
  let windows: WindowCounts | undefined = c.observe ? { samples: 0, windowInNeither: 0, windowInBoth: 0 } : undefined;
  let chaosCounts: ChaosCounts = { scriptFlushes: 0, clientKills: 0 };
  let totals = NO_ROUNDS;
  let executions: number | undefined;
  let workerNoscriptFallbacks: number | undefined;
  let releaserNoscriptFallbacks: number | undefined;
  let observerNoscriptFallbacks: number | undefined;
  let workerTakes: WorkerTakes | undefined;
  // Under --seed one command is in flight at a time, and the replies come in the server's order.
  const sample = c.cycles === 1 && !setup.runOnce ? new CommandSample(setup.jobs, undefined, setup.seed !== undefined ? 'replied' : 'sent') : undefined;

  // With cycles, leases made after the sweepers stopped need another round; a few per cycle suffice.
  const maxRounds = c.cycles > 1 ? 4 * c.cycles + 4 : 1;
  for (let round = 1; round <= maxRounds; round++) {
    signal.throwIfAborted();
    let observer: Observer | undefined;
    let workers: WorkerPool | undefined;
    let releaser: Releaser | undefined;
    try {
      if (c.observe) observer = await startObserver(setup.target, keys, pending);
      if (c.workers > 0) {
        // Through the same target as the sweepers: a failover carries them over with the rest.
        const drill = setup.drill;
        const across = drill && { side: () => drill.side(), tracked: setup.tracked ?? setup.jobs };
        const pool = await startWorkers(setup.target, keys, c.workers, signal, pending, across);
        workers = pool;
        drill?.attachWorkers(pool);
        setup.onWorkers?.(() => pool.stage());
      }
      if (c.cycles > 1) releaser = await startReleaser(setup.target, keys, c.cycles, tally, pending, signal);
      const chaos = plan ? await startChaos(setup.target, c.faults, plan) : undefined;
      let result;
      try {
        result = setup.runOnce
          ? await setup.runOnce()
          : await race({
              connections: setup.connections,
              factory: setup.drill ? setup.drill.wrap(setup.factory) : setup.factory,
              keys,
              clock: setup.clock,
              batch: setup.batch,
              maxStalled: setup.maxStalled,
              probeDelayMs: setup.probeDelayMs,
              maxSweeps: setup.maxSweeps,
              signal,
              faults: plan,
              sample,
              ...(setup.seed !== undefined ? { scheduler: new SeededScheduler(setup.connections.length, setup.seed) } : {}),
              ...(setup.cadence ? { cadence: setup.cadence } : {}),
              ...(setup.extras ? { extras: setup.extras } : {}),
            });
      } finally {
        const blows = await chaos?.stop();
        if (blows) chaosCounts = { scriptFlushes: chaosCounts.scriptFlushes + blows.scriptFlushes, clientKills: chaosCounts.clientKills + blows.clientKills };
      }
      if (releaser) {
        await releaser.finish();
        releaserNoscriptFallbacks = (releaserNoscriptFallbacks ?? 0) + releaser.noscriptFallbacks;
      }
      if (workers) {
        const done = await workers.finish();
        executions = (executions ?? 0) + done.executions;
        workerNoscriptFallbacks = (workerNoscriptFallbacks ?? 0) + done.noscriptFallbacks;
        // A drill runs one round (it goes with no --cycles): its takes are that round's.
        workerTakes = done.takes;
      }
      if (observer && windows) {
        windows = addWindows(windows, await observer.stop());
        observerNoscriptFallbacks = (observerNoscriptFallbacks ?? 0) + observer.noscriptFallbacks;
        observer = undefined;
      }
      const counted = movesPerJob(tally.jobs, result.records);
      tally.addMoves(counted.moves);
      // An id above the run's jobs is a returned value that names no job: counted with the stray ones.
      totals = addRound(totals, { ...result, strayIds: result.strayIds + counted.beyond });
    } finally {
      releaser?.close();
      workers?.close();
      if (workers) setup.onWorkers?.(undefined);
      await observer?.stop().catch(() => undefined);
    }
    if (c.cycles === 1 || (await expiredLeases(setup.admin, keys)) === 0) break;
  }

  return {
    ...totals,
    tally,
    windows,
    faultCounts: plan ? { ...plan.counts, ...chaosCounts } : undefined,
    executions,
    workerNoscriptFallbacks,
    releaserNoscriptFallbacks,
    observerNoscriptFallbacks,
    workerTakes,
    doubts: plan?.doubts,
    sample,
  };
}

/** What the rounds of one run add up to, round by round. */
export type RoundTotals = Pick<RoundsResult, 'wallMs' | 'commands' | 'sweeps' | 'cutShort' | 'noscriptFallbacks' | 'retries' | 'strayIds' | 'latencies'>;

export const NO_ROUNDS: RoundTotals = { wallMs: 0, commands: 0, sweeps: 0, cutShort: false, noscriptFallbacks: 0, retries: 0, strayIds: 0, latencies: [] };

/** The totals after one more round: sums, except that a run is cut short if any round was. Pure. */
export function addRound(totals: RoundTotals, round: Pick<RaceResult, keyof RoundTotals>): RoundTotals {
  return {
    wallMs: totals.wallMs + round.wallMs,
    commands: totals.commands + round.commands,
    sweeps: totals.sweeps + round.sweeps,
    cutShort: totals.cutShort || round.cutShort,
    noscriptFallbacks: totals.noscriptFallbacks + round.noscriptFallbacks,
    retries: totals.retries + round.retries,
    strayIds: totals.strayIds + round.strayIds,
    latencies: [...totals.latencies, ...round.latencies],
  };
}

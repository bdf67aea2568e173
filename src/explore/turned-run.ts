/**
 * One execution on the server: two sweeps of a mode, each running the strategy's own sweeper (the
 * code the race runs) on its own connection, with every round trip it sends held until the
 * conductor gives it the turn. The connection each sweeper gets sends `call`, `evalsha`, `eval` and
 * a MULTI's `exec` through the conductor, so a turn is one round trip whatever the strategy; a
 * MULTI/EXEC is one turn, as it is one round trip. Then the job is read back from the server.
 */
import type { Redis } from 'ioredis';
import type { Stage } from '../explain/stage.js';
import type { Mode } from '../shared/model.js';
import type { QueueKeys } from '../queue/keys.js';
import type { ServerClock } from '../server/clock.js';
import { gatedConnection } from '../race/gated-connection.js';
import { loadSweeper } from '../sweepers/strategies.js';
import { Conductor, EXPLORE_SWEEPS, type ExploreSweep, type TraceTurn } from './conductor.js';
import type { JobFacts } from './outcome.js';

export interface TurnedRun {
  readonly trace: TraceTurn[];
  readonly facts: JobFacts;
  /** Moves of the job the two sweepers recorded, by their own account. */
  readonly moves: number;
}

/** The job as the server holds it now, read in one round trip: nothing writes the queue meanwhile. */
export async function readFacts(admin: Redis, keys: QueueKeys, jobId: string, clock: ServerClock): Promise<JobFacts> {
  const replies =
    (await admin
      .pipeline()
      .lrange(keys.pending, 0, -1)
      .zscore(keys.active, jobId)
      .zscore(keys.dead, jobId)
      .hmget(keys.job(jobId), 'stalled', 'state')
      .exec()) ?? [];
  const [pendingReply, activeScore, deadScore, fields] = replies.map(([err, reply]) => {
    if (err) throw err;
    return reply;
  });
  // The queue is the run's own: pending holds two entries at most.
  const pending = pendingReply as string[];
  const [stalled, state] = fields as (string | null)[];
  return {
    pendingEntries: pending.filter((id) => id === jobId).length,
    inActive: activeScore !== null,
    activeExpired: activeScore !== null && Number(activeScore) <= clock.now(),
    inDead: deadScore !== null,
    stalled: stalled === null || stalled === undefined ? null : Number(stalled),
    state: state ?? null,
  };
}

export interface TurnedPlan {
  readonly mode: Mode;
  readonly batch: number;
  readonly maxStalled: number;
  /** The function mode's FCALL name, loaded for the exploration. */
  readonly functionName?: string;
}

/**
 * Sweeps A and B of the plan's mode on the stage's job (and C, on a third connection, when given
 * one), `prefix` deciding the first turns.
 */
export async function runTurned(
  stage: Stage,
  plan: TurnedPlan,
  prefix: readonly ExploreSweep[],
  connections: readonly Redis[] = stage.connections,
): Promise<TurnedRun> {
  const factory = await loadSweeper(plan.mode);
  const names = EXPLORE_SWEEPS.slice(0, connections.length);
  const conductor = new Conductor(names, prefix);
  const moves = new Uint32Array(2);
  const sweep = async (name: ExploreSweep, index: number): Promise<void> => {
    try {
      const sweeper = factory({
        redis: gatedConnection(connections[index] as Redis, { turn: (label) => conductor.turn(name, label), done: () => conductor.done() }),
        keys: stage.keys,
        clock: stage.clock,
        batch: plan.batch,
        maxStalled: plan.maxStalled,
        probeDelayMs: 0,
        signal: stage.signal,
        pending: 'list',
        ...(plan.functionName !== undefined ? { functionName: plan.functionName } : {}),
      });
      // One sweep each, as explain's: a sweep that finds nothing stops there.
      await sweeper.sweep();
      sweeper.record.countInto(moves);
      conductor.stop(name);
    } catch (err) {
      conductor.fail(err);
      throw err;
    }
  };
  const settled = await Promise.allSettled(names.map((name, index) => sweep(name, index)));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  const facts = await readFacts(stage.admin, stage.keys, stage.jobId, stage.clock);
  return { trace: conductor.trace, facts, moves: moves[1] ?? 0 };
}

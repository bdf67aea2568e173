/**
 * The ground every replay runs on: a queue of its own, claimed like the main command claims one
 * (the same marker, heartbeat and cleanup: queue/claimed-run.ts), holding one job whose lease has
 * expired, and two connections, one per sweep. Afterwards the queue's keys are deleted by name,
 * unless --keep says otherwise or a third Ctrl-C leaves at once.
 *
 * An exploration makes a thousand executions or more, each on the same ground: it claims the
 * queue, opens the connections and measures the clock once (onStages), and between two executions
 * deletes by name the keys one can write and seeds the job again, so that each starts from the
 * state a fresh queue starts from.
 */
import type { Redis } from 'ioredis';
import { onClaimedQueue } from '../queue/claimed-run.js';
import type { Interrupts } from '../shared/interrupt.js';
import { queueKeys, structureKeys, type QueueKeys } from '../queue/keys.js';
import { seedJobs } from '../queue/seed.js';
import { measureServerClock, type ServerClock } from '../server/clock.js';
import { connect } from '../server/connection.js';
import type { Session } from '../server/session.js';

/** The replay's one job, J: the seed numbers jobs from 1. */
const JOB_ID = '1';

export interface Stage {
  readonly keys: QueueKeys;
  /** The admin connection: seeding, script loading and the readout. */
  readonly admin: Redis;
  /** Sweep A's connection and sweep B's. */
  readonly connections: readonly [Redis, Redis];
  readonly clock: ServerClock;
  readonly jobId: string;
  readonly stalledBefore: number;
  readonly signal: AbortSignal;
}

export interface StagePlan {
  readonly queue: string;
  readonly stalledBefore: number;
  readonly keep: boolean;
  /** Where a replay says what it could not undo (keys left on the server); unset, nowhere. */
  readonly warn?: (line: string) => void;
}

/** One claimed queue, its connections and its clock, for one execution after another. */
export interface Stages {
  /** The id of the claim the queue is held under: what names anything the work makes beside its keys (a function library), so that `clean` finds it. */
  readonly runId: string;
  /**
   * Runs `body` on the job as a fresh queue holds it: the keys the execution before could have
   * written deleted by name, the job seeded again. Like a run of its own, its result is not
   * returned once a signal came or the queue's keys vanished meanwhile.
   */
  next<T>(body: (stage: Stage) => Promise<T>): Promise<T>;
}

/**
 * The keys an execution on one job can write besides the claim's own (marker and heartbeat): the
 * queue's structures and the job's hash, each under the queue's prefix.
 */
function executionKeys(keys: QueueKeys): string[] {
  return [...structureKeys(keys).filter((key) => key !== keys.heartbeat), keys.job(JOB_ID)];
}

export async function onStages<T>(session: Session, plan: StagePlan, interrupts: Interrupts, body: (stages: Stages) => Promise<T>): Promise<T> {
  const { admin, target } = session;
  const keys = queueKeys(plan.queue);
  const claim = { admin, target, keys, jobs: 1, keep: plan.keep, ...(plan.warn ? { warn: plan.warn } : {}) };
  return onClaimedQueue(claim, interrupts, async ({ runId, signal, confirmKeys }) => {
    const connections: Redis[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        signal.throwIfAborted();
        connections.push(await connect(target));
      }
      const clock = await measureServerClock(admin);
      const [a, b] = connections as [Redis, Redis];
      const reset = executionKeys(keys);
      const stage: Stage = { keys, admin, connections: [a, b], clock, jobId: JOB_ID, stalledBefore: plan.stalledBefore, signal };
      // The claim found the queue empty: the first execution has nothing to delete.
      let written = false;
      const next = async <R>(run: (stage: Stage) => Promise<R>): Promise<R> => {
        signal.throwIfAborted();
        if (written) await admin.unlink(...reset);
        written = true;
        // The lease's deadline set by the clock the sweeps read: the server's, measured once.
        await seedJobs(admin, keys, { jobs: 1, runId, stalledBefore: plan.stalledBefore, serverNowMs: clock.now() }, signal);
        const result = await run(stage);
        signal.throwIfAborted();
        await confirmKeys();
        return result;
      };
      return await body({ runId, next });
    } finally {
      for (const redis of connections) redis.disconnect();
    }
  });
}

/** One replay on a queue of its own. */
export async function onStage<T>(session: Session, plan: StagePlan, interrupts: Interrupts, body: (stage: Stage) => Promise<T>): Promise<T> {
  return onStages(session, plan, interrupts, (stages) => stages.next(body));
}

/**
 * The ground every replay runs on: a queue of its own, claimed like the main command claims one
 * (the same marker, heartbeat and cleanup: queue/claimed-run.ts), holding one job whose lease has
 * expired, and two connections, one per sweep. Afterwards the queue's keys are deleted by name,
 * unless --keep says otherwise or a third Ctrl-C leaves at once.
 */
import type { Redis } from 'ioredis';
import { onClaimedQueue } from '../queue/claimed-run.js';
import type { Interrupts } from '../interrupt.js';
import { queueKeys, type QueueKeys } from '../queue/keys.js';
import { seedJobs } from '../queue/seed.js';
import { measureServerClock, serverTimeMs, type ServerClock } from '../server/clock.js';
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

export async function onStage<T>(session: Session, plan: StagePlan, interrupts: Interrupts, body: (stage: Stage) => Promise<T>): Promise<T> {
  const { admin, target } = session;
  const keys = queueKeys(plan.queue);
  const claim = { admin, where: target.display, keys, jobs: 1, keep: plan.keep, ...(plan.warn ? { warn: plan.warn } : {}) };
  return onClaimedQueue(claim, interrupts, async ({ runId, signal }) => {
    const connections: Redis[] = [];
    try {
      await seedJobs(admin, keys, { jobs: 1, runId, stalledBefore: plan.stalledBefore, serverNowMs: await serverTimeMs(admin) }, signal);
      for (let i = 0; i < 2; i++) {
        signal.throwIfAborted();
        connections.push(await connect(target));
      }
      const clock = await measureServerClock(admin);
      const [a, b] = connections as [Redis, Redis];
      return await body({ keys, admin, connections: [a, b], clock, jobId: JOB_ID, stalledBefore: plan.stalledBefore, signal });
    } finally {
      for (const redis of connections) redis.disconnect();
    }
  });
}

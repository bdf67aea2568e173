/**
 * Workers that consume `pending` while the sweepers run, so that a duplicate entry becomes what it
 * costs a real queue: the same job executed twice. Each worker takes a job with LMOVE into the
 * run's `running` list (ZPOPMIN and the push in one script, src/lua/take-job.lua, when pending is a
 * sorted set: either way the job is never in neither place), "executes" it by counting the run in
 * the job's hash (`runs`), then finishes it in one MULTI (`state done`, out of `running`). Workers
 * stop once the sweepers are done and pending is drained, finishing every job they took.
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { callTakeJob } from '../lua/consequence-scripts.js';
import { connect, type ServerTarget } from '../server/connection.js';
import { openEach } from '../server/slices.js';
import type { QueueKeys } from '../queue/keys.js';
import type { PendingKind } from '../shared/model.js';

/** How long an idle worker waits before looking at an empty pending list again. */
const IDLE_MS = 1;

export interface WorkerCounts {
  /** Jobs taken from pending, over all workers (a job taken twice counts twice). */
  readonly executions: number;
}

export interface WorkerPool {
  /** Tells the workers the sweepers are done; resolves once pending is drained and every job finished. */
  finish(): Promise<WorkerCounts>;
  /** Closes the workers' connections (after finish, or on the way out of a failed run). */
  close(): void;
}

export async function startWorkers(target: ServerTarget, keys: QueueKeys, count: number, signal: AbortSignal, pending: PendingKind): Promise<WorkerPool> {
  const connections: Redis[] = [];
  try {
    await openEach(count, () => connect(target), signal, connections);
  } catch (err) {
    for (const redis of connections) redis.disconnect();
    throw err;
  }

  let sweepersDone = false;
  let executions = 0;
  const failures: unknown[] = [];

  const take: (redis: Redis) => Promise<string | null> =
    pending === 'zset' ? (redis) => callTakeJob(redis, keys.pending, keys.running) : (redis) => redis.lmove(keys.pending, keys.running, 'LEFT', 'RIGHT');

  const work = async (redis: Redis): Promise<void> => {
    for (;;) {
      signal.throwIfAborted();
      // Read before the take: once the sweepers are done, an empty pending stays empty.
      const lastLook = sweepersDone;
      const id = await take(redis);
      if (id === null) {
        if (lastLook || failures.length > 0) return;
        await sleep(IDLE_MS);
        continue;
      }
      executions++;
      await redis.hincrby(keys.job(id), 'runs', 1);
      const finished = await redis.multi().hset(keys.job(id), 'state', 'done').lrem(keys.running, 1, id).exec();
      for (const [err] of finished ?? []) if (err) throw err;
    }
  };
  const running = connections.map((redis) =>
    work(redis).catch((err: unknown) => {
      failures.push(err);
    }),
  );

  return {
    async finish() {
      sweepersDone = true;
      await Promise.all(running);
      if (failures.length > 0) throw failures[0];
      return { executions };
    },
    close() {
      sweepersDone = true;
      for (const redis of connections) redis.disconnect();
    },
  };
}

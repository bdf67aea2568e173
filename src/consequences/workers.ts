/**
 * Workers that consume `pending` while the sweepers run, so that a duplicate entry becomes what it
 * costs a real queue: the same job executed twice. Each worker takes a job with LMOVE into the
 * run's `running` list (ZPOPMIN and the push in one script, src/lua/take-job.lua, when pending is a
 * sorted set: either way the job is never in neither place), "executes" it by counting the run in
 * the job's hash (`runs`), then finishes it in one script call (`state done`, out of `running`,
 * src/lua/finish-job.lua). Workers stop once the sweepers are done and pending is drained,
 * finishing every job they took.
 *
 * Every command a worker sends is one command, answered before the next is sent: what the failover
 * drill's switch proxy needs to know a connection has nothing unanswered (switch-proxy.ts `quiet`).
 * A pipeline or MULTI ... EXEC is several commands in one write, whose first reply would make the
 * connection look answered while the rest are still due, and whose tail could be carried to the
 * new primary without its head.
 */
import type { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FailoverSides } from '../audit/failover-rules.js';
import type { FallbackCount } from '../lua/cached-script.js';
import { callFinishJob, callTakeJob } from '../lua/consequence-scripts.js';
import { connect, type ServerTarget } from '../server/connection.js';
import { FROZEN_MS } from '../server/frozen.js';
import { openEach } from '../server/slices.js';
import { serverError } from '../shared/errors.js';
import { groupThousands } from '../shared/text.js';
import type { QueueKeys } from '../queue/keys.js';
import type { PendingKind } from '../shared/model.js';

/** How long an idle worker waits before looking at an empty pending list again. */
const IDLE_MS = 1;

/**
 * How long `idle` waits after the workers' last take before it gives up: a worker stuck, not a
 * pending list still draining. Longer than a connection's own timeout (10 s, connection.ts), so
 * that a server that stopped answering is said as such by the worker it stalled, not as this wait.
 */
const IDLE_STALL_MS = 30_000;

/** Which server answered a take, by the failover drill's word: the old primary, or the promoted replica. */
export type TakeSide = 'before' | 'after';

/** The workers' own record of every take, per job id: answered before the failover, and after it. */
export type WorkerTakes = FailoverSides;

export interface WorkerCounts {
  /** Jobs taken from pending, over all workers (a job taken twice counts twice). */
  readonly executions: number;
  /** With a failover drill: each job's takes on either side of it; undefined otherwise. */
  readonly takes: WorkerTakes | undefined;
  /** NOSCRIPT replies to the workers' script calls (a take from a sorted set, every finish), each re-sent as EVAL. */
  readonly noscriptFallbacks: number;
}

/** --fault failover: the drill's word on which side of the failover a reply came from, and the job ids it tracks. */
export interface WorkersAcrossFailover {
  /** Read as each take's reply is handled; 'after' from the moment the promoted replica may answer. */
  side(): TakeSide;
  readonly tracked: number;
}

export interface WorkerPool {
  /**
   * Resolves once every worker, with a take sent after this call, found pending empty, so holds no
   * job: with nothing more pushed meanwhile (the failover drill's gate shut), every job pending
   * held has been taken and finished. Rejects with a worker's failure, on `signal`, or when no job
   * was taken for a while.
   */
  idle(signal: AbortSignal): Promise<void>;
  /** Tells the workers the sweepers are done; resolves once pending is drained and every job finished. */
  finish(): Promise<WorkerCounts>;
  /** Closes the workers' connections (after finish, or on the way out of a failed run). */
  close(): void;
  /**
   * For the progress line, once the sweepers are done and the workers still run what pending
   * holds (the line's count of leases reclaimed stands at its end meanwhile): the jobs taken so far.
   */
  stage(): string | undefined;
}

export async function startWorkers(
  target: ServerTarget,
  keys: QueueKeys,
  count: number,
  signal: AbortSignal,
  pending: PendingKind,
  failover?: WorkersAcrossFailover,
): Promise<WorkerPool> {
  const connections: Redis[] = [];
  try {
    await openEach(count, () => connect(target), signal, connections);
  } catch (err) {
    for (const redis of connections) redis.disconnect();
    throw err;
  }

  let sweepersDone = false;
  let executions = 0;
  const fallbacks: FallbackCount = { noscriptFallbacks: 0 };
  const failures: unknown[] = [];
  const takes: WorkerTakes | undefined = failover && { before: new Uint32Array(failover.tracked + 1), after: new Uint32Array(failover.tracked + 1) };
  // idle(): the asks so far, and for each worker the latest ask that preceded a take that came back empty.
  let asks = 0;
  const emptySince = connections.map(() => 0);
  let lastTake = performance.now();

  const take: (redis: Redis) => Promise<string | null> =
    pending === 'zset'
      ? (redis) => callTakeJob(redis, keys.pending, keys.running, fallbacks)
      : (redis) => redis.lmove(keys.pending, keys.running, 'LEFT', 'RIGHT');

  const work = async (redis: Redis, index: number): Promise<void> => {
    for (;;) {
      signal.throwIfAborted();
      // Read before the take: once the sweepers are done, an empty pending stays empty.
      const lastLook = sweepersDone;
      const ask = asks;
      const id = await take(redis);
      if (id === null) {
        emptySince[index] = ask;
        if (lastLook || failures.length > 0) return;
        await sleep(IDLE_MS);
        continue;
      }
      executions++;
      lastTake = performance.now();
      if (takes) {
        // Read as the reply is handled: the drill turns to 'after' before any connection can reach
        // the promoted replica, so a take it answered is never counted before.
        // Only an id as the tool writes it: a stray entry `0200` (a user's script) is no take of job 200.
        const n = Number(id);
        const into = failover?.side() === 'after' ? takes.after : takes.before;
        if (String(n) === id && Number.isInteger(n) && n > 0 && n < into.length) into[n] = (into[n] ?? 0) + 1;
      }
      await redis.hincrby(keys.job(id), 'runs', 1);
      await callFinishJob(redis, keys.job(id), keys.running, id, fallbacks);
    }
  };
  const running = connections.map((redis, index) =>
    work(redis, index).catch((err: unknown) => {
      failures.push(err);
    }),
  );

  return {
    async idle(waitSignal) {
      const ask = ++asks;
      let since = performance.now();
      let looked = since;
      for (;;) {
        if (failures.length > 0) throw failures[0];
        if (emptySince.every((seen) => seen >= ask)) return;
        waitSignal.throwIfAborted();
        const now = performance.now();
        // Time the process stood still (Ctrl-Z, SIGSTOP) proves nothing of the workers: the wait
        // starts again, as every wait of the tool's does (frozen.ts).
        if (now - looked >= FROZEN_MS) since = now;
        looked = now;
        if (now - Math.max(since, lastTake) > IDLE_STALL_MS) {
          throw serverError(`--fault failover: the workers had not all found pending empty ${IDLE_STALL_MS / 1000} s after their last take`);
        }
        await sleep(IDLE_MS);
      }
    },
    async finish() {
      sweepersDone = true;
      await Promise.all(running);
      if (failures.length > 0) throw failures[0];
      return { executions, takes, noscriptFallbacks: fallbacks.noscriptFallbacks };
    },
    close() {
      sweepersDone = true;
      for (const redis of connections) redis.disconnect();
    },
    stage() {
      return sweepersDone ? `sweeps done, the workers running the jobs: ${groupThousands(executions)} taken` : undefined;
    },
  };
}

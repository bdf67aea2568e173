/**
 * Reads a queue's state back from the server into a JobSnapshot, streaming: the pending list (or
 * sorted set), the running list, both sorted sets and every job hash are read in bounded slices by
 * small scripts (src/lua/audit-members.lua, src/lua/audit-jobs.lua) that answer with one integer
 * per job or member, several calls in flight at once, straight into typed arrays sized by the job
 * count. No string or object per job is built, so a million jobs cost a few bytes each in the
 * client; only runs with workers also read each job's `runs` counter, with a pipelined HGET per
 * job. Nothing else writes to the queue while this runs, so index ranges are stable.
 */
import type { Redis } from 'ioredis';
import { blankSnapshot, type JobSnapshot } from './rules.js';
import { callAuditJobs, callAuditMembers } from '../lua/bulk-scripts.js';
import { serverError } from '../shared/errors.js';
import type { QueueKeys } from '../queue/keys.js';
import { forEachSliceId, seedSlices, sliceSize } from '../queue/seed.js';
import { serverTimeMs } from '../server/clock.js';
import { inCalls, inSlices } from '../server/slices.js';
import type { PendingKind } from '../shared/model.js';

/** Members or jobs per script call: a few milliseconds of the server's time. */
const PER_CALL = 5000;
const EXPIRED_FLAG = 0x80000000;
const ID_MASK = 0x7fffffff;

/** What else the queue holds: pending's type, live jobs after the expired ones (ids N+1 … N+live), workers' traces. */
export interface SnapshotShape {
  readonly pending?: PendingKind;
  readonly live?: number;
  /** Read the running list and each job's `runs` field (only runs with workers write them). */
  readonly workers?: boolean;
  /** The run's id: a job hash that does not carry it reads as missing (see audit-jobs.lua). */
  readonly runId?: string;
}

export async function readSnapshot(
  redis: Redis,
  keys: QueueKeys,
  jobs: number,
  stalledBefore: number,
  signal?: AbortSignal,
  shape: SnapshotShape = {},
): Promise<JobSnapshot> {
  const nowMs = await serverTimeMs(redis);
  const snapshot = blankSnapshot(jobs, stalledBefore, shape.live ?? 0);
  const { inPending, inActive, activeExpired, inDead, stalled, state } = snapshot;
  const total = jobs + (snapshot.live ?? 0);

  const pendingKind = shape.pending ?? 'list';
  const [pendingSize, activeSize, deadSize] = await Promise.all([
    pendingKind === 'zset' ? redis.zcard(keys.pending) : redis.llen(keys.pending),
    redis.zcard(keys.active),
    redis.zcard(keys.dead),
  ]);

  // Only the run's sweepers write these keys: an entry that names no job of the run (0 from the
  // script) is something they wrote wrong, counted, not dropped.
  let strayEntries = 0;
  // A sorted-set pending scores its members 0 or 1 (re-leases), never a deadline, so the expired
  // flag means nothing there: masked off.
  await readMembers(redis, keys.pending, pendingKind, pendingSize, total, nowMs, signal, (word) => {
    const id = word & ID_MASK;
    if (id) inPending[id] = (inPending[id] ?? 0) + 1;
    else strayEntries++;
  });
  await readMembers(redis, keys.active, 'zset', activeSize, total, nowMs, signal, (word) => {
    const id = word & ID_MASK;
    if (!id) {
      strayEntries++;
      return;
    }
    inActive[id] = 1;
    if (word & EXPIRED_FLAG) activeExpired[id] = 1;
  });
  await readMembers(redis, keys.dead, 'zset', deadSize, total, nowMs, signal, (word) => {
    const id = word & ID_MASK;
    if (id) inDead[id] = 1;
    else strayEntries++;
  });

  // Job hashes are read in the order seeding created them (live jobs, seeded apart, nearly so),
  // which is the order they lie in the server's memory: fewer cache misses than reading by id.
  const read = (id: number, value: number | string): void => {
    if (typeof value === 'number') {
      const code = ((value % 8) + 8) % 8;
      stalled[id] = (value - code) / 8;
      state[id] = code;
    } else {
      // The field as written, for Number() to read exactly as a plain reader would; none: NaN.
      state[id] = Number(value[0]);
      if (value.length > 1) stalled[id] = Number(value.slice(1));
    }
  };
  await inCalls(
    seedSlices(1, total, PER_CALL),
    signal,
    ({ first, last, high, low }) => callAuditJobs(redis, keys.active, keys.prefix, first, last, high, low, shape.runId),
    (reply, slice) => {
      if (reply.length !== sliceSize(slice)) throw serverError(`the audit script answered ${reply.length} jobs for a slice of ${sliceSize(slice)}`);
      forEachSliceId(slice, (id, index) => read(id, reply[index] as number | string));
    },
  );

  const members = { ...snapshot, strayEntries };
  return shape.workers ? { ...members, ...(await readWorkerTraces(redis, keys, total, nowMs, signal)) } : members;
}

/** The running list and every job's `runs` counter: what workers leave behind. */
async function readWorkerTraces(
  redis: Redis,
  keys: QueueKeys,
  total: number,
  nowMs: number,
  signal: AbortSignal | undefined,
): Promise<{ inRunning: Uint8Array; runs: Float64Array }> {
  const inRunning = new Uint8Array(total + 1);
  const runs = new Float64Array(total + 1).fill(Number.NaN);
  await readMembers(redis, keys.running, 'list', await redis.llen(keys.running), total, nowMs, signal, (word) => {
    const id = word & ID_MASK;
    if (id) inRunning[id] = 1;
  });
  // Only runs with workers have a `runs` field to read: a pipelined HGET per job, in bounded slices.
  await inSlices(
    total,
    1,
    PER_CALL,
    signal,
    (first, last) => {
      const pipeline = redis.pipeline();
      for (let id = first; id <= last; id++) pipeline.hget(keys.job(id), 'runs');
      return pipeline.exec().then((results) =>
        (results ?? []).map(([err, value]) => {
          if (err) throw err;
          return value as string | null;
        }),
      );
    },
    (reply, first) => {
      reply.forEach((value, offset) => {
        if (value !== null) runs[first + offset] = Number(value);
      });
    },
  );
  return { inRunning, runs };
}

/** Streams a list or sorted set of `size` members as 32-bit words (id, expired flag), slice by slice. */
async function readMembers(
  redis: Redis,
  key: string,
  kind: PendingKind,
  size: number,
  jobs: number,
  nowMs: number,
  signal: AbortSignal | undefined,
  onWord: (word: number) => void,
): Promise<void> {
  await inSlices(
    size,
    0,
    PER_CALL,
    signal,
    (start, stop) => callAuditMembers(redis, key, kind, start, stop, jobs, nowMs),
    (reply) => {
      for (const word of reply) onWord(word);
    },
  );
}

/**
 * Reads a queue's state back from the server into a JobSnapshot, streaming: the pending list, both
 * sorted sets and every job hash are read in bounded slices by small scripts
 * (src/lua/audit-members.lua, src/lua/audit-jobs.lua) that answer with one integer per job or
 * member, several calls in flight at once, straight into typed arrays sized by the job count. No string
 * or object per job is ever built, so a million jobs cost a few bytes each in the client.
 * Nothing else writes to the queue while this runs, so index ranges are stable.
 */
import type { Redis } from 'ioredis';
import { type JobSnapshot } from './audit.js';
import { defineBulkScripts } from './bulk-scripts.js';
import type { QueueKeys } from './keys.js';
import { serverTimeMs } from './server-clock.js';
import { inSlices } from './slices.js';

/** Members or jobs per script call: a few milliseconds of the server's time. */
const PER_CALL = 5000;
const EXPIRED_FLAG = 0x80000000;

export async function readSnapshot(redis: Redis, keys: QueueKeys, jobs: number, stalledBefore: number, signal?: AbortSignal): Promise<JobSnapshot> {
  defineBulkScripts(redis);
  const nowMs = await serverTimeMs(redis);
  const inPending = new Uint32Array(jobs + 1);
  const inActive = new Uint8Array(jobs + 1);
  const activeExpired = new Uint8Array(jobs + 1);
  const inDead = new Uint8Array(jobs + 1);
  const stalled = new Float64Array(jobs + 1).fill(Number.NaN);
  const state = new Uint8Array(jobs + 1);

  const [pendingLength, activeSize, deadSize] = await Promise.all([redis.llen(keys.pending), redis.zcard(keys.active), redis.zcard(keys.dead)]);

  await readMembers(redis, keys.pending, 'list', pendingLength, jobs, nowMs, signal, (word) => {
    if (word) inPending[word] = (inPending[word] ?? 0) + 1;
  });
  await readMembers(redis, keys.active, 'zset', activeSize, jobs, nowMs, signal, (word) => {
    const id = word & ~EXPIRED_FLAG;
    if (!id) return;
    inActive[id] = 1;
    if (word & EXPIRED_FLAG) activeExpired[id] = 1;
  });
  await readMembers(redis, keys.dead, 'zset', deadSize, jobs, nowMs, signal, (word) => {
    const id = word & ~EXPIRED_FLAG;
    if (id) inDead[id] = 1;
  });

  await inSlices(jobs, 1, PER_CALL, signal, (first, last) => redis.auditJobs(keys.active, keys.prefix, first, last), (reply, first) => {
    reply.forEach((value, offset) => {
      const id = first + offset;
      if (typeof value === 'number') {
        const code = ((value % 8) + 8) % 8;
        stalled[id] = (value - code) / 8;
        state[id] = code;
      } else {
        // The field as written, for Number() to read exactly as a plain reader would; none: NaN.
        state[id] = Number(value[0]);
        if (value.length > 1) stalled[id] = Number(value.slice(1));
      }
    });
  });

  return { jobs, stalledBefore, inPending, inActive, activeExpired, inDead, stalled, state };
}

/** Streams a list or sorted set of `size` members as 32-bit words (id, expired flag), slice by slice. */
async function readMembers(
  redis: Redis,
  key: string,
  kind: 'list' | 'zset',
  size: number,
  jobs: number,
  nowMs: number,
  signal: AbortSignal | undefined,
  onWord: (word: number) => void,
): Promise<void> {
  await inSlices(size, 0, PER_CALL, signal, (start, stop) => redis.auditMembers(key, kind, start, stop, jobs, nowMs), (reply) => {
    for (const word of reply) onWord(word);
  });
}

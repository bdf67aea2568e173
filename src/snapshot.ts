/**
 * Reads a queue's state back from the server into a JobSnapshot: the pending list and both sorted
 * sets in bounded chunks, and every job hash through pipelined HMGETs, into typed arrays sized by
 * the job count. Nothing else writes to the queue while this runs, so index ranges are stable.
 */
import type { Redis } from 'ioredis';
import { stateCode, type JobSnapshot } from './audit.js';
import type { QueueKeys } from './keys.js';
import type { PendingKind } from './options.js';
import { serverTimeMs } from './server-clock.js';

const CHUNK = 10_000;

/** What else the queue holds: pending's type, and live jobs after the expired ones (ids N+1 … N+live). */
export interface SnapshotShape {
  readonly pending?: PendingKind;
  readonly live?: number;
}

export async function readSnapshot(redis: Redis, keys: QueueKeys, jobs: number, stalledBefore: number, signal?: AbortSignal, shape: SnapshotShape = {}): Promise<JobSnapshot> {
  const nowMs = await serverTimeMs(redis);
  const live = shape.live ?? 0;
  const total = jobs + live;
  const inPending = new Uint32Array(total + 1);
  const inActive = new Uint8Array(total + 1);
  const activeExpired = new Uint8Array(total + 1);
  const inDead = new Uint8Array(total + 1);
  const stalled = new Float64Array(total + 1).fill(Number.NaN);
  const state = new Uint8Array(total + 1);
  const inRunning = new Uint8Array(total + 1);
  const runs = new Float64Array(total + 1).fill(Number.NaN);

  const jobIndex = (member: string): number => {
    const id = Number(member);
    return Number.isInteger(id) && id >= 1 && id <= total ? id : 0;
  };

  for (let start = 0; ; start += CHUNK) {
    signal?.throwIfAborted();
    const members = shape.pending === 'zset' ? await redis.zrange(keys.pending, start, start + CHUNK - 1) : await redis.lrange(keys.pending, start, start + CHUNK - 1);
    for (const member of members) {
      const id = jobIndex(member);
      if (id) inPending[id] = (inPending[id] ?? 0) + 1;
    }
    if (members.length < CHUNK) break;
  }

  for (let start = 0; ; start += CHUNK) {
    signal?.throwIfAborted();
    const members = await redis.lrange(keys.running, start, start + CHUNK - 1);
    for (const member of members) {
      const id = jobIndex(member);
      if (id) inRunning[id] = 1;
    }
    if (members.length < CHUNK) break;
  }

  for (let start = 0; ; start += CHUNK) {
    signal?.throwIfAborted();
    const flat = await redis.zrange(keys.active, start, start + CHUNK - 1, 'WITHSCORES');
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const id = jobIndex(flat[i] ?? '');
      if (!id) continue;
      inActive[id] = 1;
      if (Number(flat[i + 1]) <= nowMs) activeExpired[id] = 1;
    }
    if (flat.length < 2 * CHUNK) break;
  }

  for (let start = 0; ; start += CHUNK) {
    signal?.throwIfAborted();
    const members = await redis.zrange(keys.dead, start, start + CHUNK - 1);
    for (const member of members) {
      const id = jobIndex(member);
      if (id) inDead[id] = 1;
    }
    if (members.length < CHUNK) break;
  }

  for (let first = 1; first <= total; first += CHUNK) {
    signal?.throwIfAborted();
    const last = Math.min(total, first + CHUNK - 1);
    const pipeline = redis.pipeline();
    for (let id = first; id <= last; id++) pipeline.hmget(keys.job(id), 'stalled', 'state', 'runs');
    const results = (await pipeline.exec()) ?? [];
    results.forEach(([err, reply], offset) => {
      if (err) throw err;
      const [stalledField, stateField, runsField] = reply as [string | null, string | null, string | null];
      const id = first + offset;
      if (stalledField !== null) stalled[id] = Number(stalledField);
      state[id] = stateCode(stateField);
      if (runsField !== null) runs[id] = Number(runsField);
    });
  }

  return { jobs, stalledBefore, inPending, inActive, activeExpired, inDead, stalled, state, inRunning, runs, live };
}

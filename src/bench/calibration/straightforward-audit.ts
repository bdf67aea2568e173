/**
 * Calibration only: the audit's reads done the straightforward way — the whole pending list and
 * both sorted sets in one call each, then one HMGET per job, pipelined (in chunks of 10,000 so
 * the pipeline itself stays bounded). It builds the same JobSnapshot as src/snapshot.ts, so the
 * benchmark can check both agree and compare their speed and memory. No mode uses it.
 */
import type { Redis } from 'ioredis';
import { stateCode } from '../../audit/job-state.js';
import { blankSnapshot, type JobSnapshot } from '../../audit/rules.js';
import type { QueueKeys } from '../../queue/keys.js';
import { serverTimeMs } from '../../server/clock.js';

const CHUNK = 10_000;

export async function readSnapshotStraightforward(redis: Redis, keys: QueueKeys, jobs: number, stalledBefore: number): Promise<JobSnapshot> {
  const nowMs = await serverTimeMs(redis);
  const snapshot = blankSnapshot(jobs, stalledBefore);
  const { inPending, inActive, activeExpired, inDead, stalled, state } = snapshot;
  const jobIndex = (member: string): number => {
    const id = Number(member);
    return Number.isInteger(id) && id >= 1 && id <= jobs ? id : 0;
  };

  for (const member of await redis.lrange(keys.pending, 0, -1)) {
    const id = jobIndex(member);
    if (id) inPending[id] = (inPending[id] ?? 0) + 1;
  }
  const active = await redis.zrange(keys.active, 0, -1, 'WITHSCORES');
  for (let i = 0; i + 1 < active.length; i += 2) {
    const id = jobIndex(active[i] ?? '');
    if (!id) continue;
    inActive[id] = 1;
    if (Number(active[i + 1]) <= nowMs) activeExpired[id] = 1;
  }
  for (const member of await redis.zrange(keys.dead, 0, -1)) {
    const id = jobIndex(member);
    if (id) inDead[id] = 1;
  }
  for (let first = 1; first <= jobs; first += CHUNK) {
    const last = Math.min(jobs, first + CHUNK - 1);
    const pipeline = redis.pipeline();
    for (let id = first; id <= last; id++) pipeline.hmget(keys.job(id), 'stalled', 'state');
    const results = (await pipeline.exec()) ?? [];
    results.forEach(([err, reply], offset) => {
      if (err) throw err;
      const [stalledField, stateField] = reply as [string | null, string | null];
      if (stalledField !== null) stalled[first + offset] = Number(stalledField);
      state[first + offset] = stateCode(stateField);
    });
  }
  return snapshot;
}

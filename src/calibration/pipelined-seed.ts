/**
 * Calibration only: seeding the straightforward way, from the client, one HSET per job and one
 * ZADD per chunk, pipelined. The benchmark measures it beside the server-side seeding in
 * src/seed.ts, on the same server in the same process; no mode uses it.
 */
import type { Redis } from 'ioredis';
import type { QueueKeys } from '../keys.js';
import { expiredDeadline, type SeedPlan } from '../seed.js';

const CHUNK = 5000;

export async function seedJobsPipelined(redis: Redis, keys: QueueKeys, plan: SeedPlan, signal?: AbortSignal): Promise<void> {
  for (let first = 1; first <= plan.jobs; first += CHUNK) {
    signal?.throwIfAborted();
    const last = Math.min(plan.jobs, first + CHUNK - 1);
    const pipeline = redis.pipeline();
    const members: (string | number)[] = [];
    for (let id = first; id <= last; id++) {
      members.push(expiredDeadline(plan.serverNowMs, id), id);
      pipeline.hset(keys.job(id), 'state', 'active', 'stalled', plan.stalledBefore);
    }
    pipeline.zadd(keys.active, ...members);
    const results = (await pipeline.exec()) ?? [];
    for (const [err] of results) if (err) throw err;
  }
}

/**
 * Calibration only: seeding from the client, pipelined, for the benchmark to measure the
 * server-side seeding of src/seed.ts against (same server, same process); no mode uses it.
 *
 * Two shapes. The straightforward one sends each job's two commands, its HSET and its ZADD,
 * the way a client that seeds job by job writes them. The batched one still sends one HSET per
 * job but gathers the ZADDs of a chunk into one: a client that has already been tuned, which the
 * benchmark reports beside the first so that neither comparison stands alone.
 */
import type { Redis } from 'ioredis';
import type { QueueKeys } from '../../queue/keys.js';
import { expiredDeadline, type SeedPlan } from '../../queue/seed.js';

/** Jobs per pipeline: one round trip for each. */
const CHUNK = 5000;

export type ZaddShape = 'per-job' | 'per-chunk';

export async function seedJobsPipelined(redis: Redis, keys: QueueKeys, plan: SeedPlan, zadd: ZaddShape = 'per-job'): Promise<void> {
  for (let first = 1; first <= plan.jobs; first += CHUNK) {
    const last = Math.min(plan.jobs, first + CHUNK - 1);
    const pipeline = redis.pipeline();
    const members: (string | number)[] = [];
    for (let id = first; id <= last; id++) {
      const deadline = expiredDeadline(plan.serverNowMs, id);
      // The same fields as seed-jobs.lua writes, so both seedings do the same work.
      pipeline.hset(keys.job(id), 'state', 'active', 'stalled', plan.stalledBefore, 'run', plan.runId);
      if (zadd === 'per-job') pipeline.zadd(keys.active, deadline, id);
      else members.push(deadline, id);
    }
    if (members.length > 0) pipeline.zadd(keys.active, ...members);
    const results = (await pipeline.exec()) ?? [];
    for (const [err] of results) if (err) throw err;
  }
}

/**
 * Seeds jobs whose leases are still valid: workers are busy with them, so a correct sweep must
 * leave them alone. They take the ids after the expired jobs (N+1 … N+L), with deadlines an hour
 * into the server's future, far beyond any run.
 */
import type { Redis } from 'ioredis';
import type { QueueKeys } from './keys.js';

/** How far in the server's future the live leases end. */
export const LIVE_FOR_MS = 3_600_000;
const CHUNK = 5000;

export interface LiveSeedPlan {
  /** The first live job's id: one past the last expired job. */
  readonly firstId: number;
  readonly count: number;
  readonly stalledBefore: number;
  readonly serverNowMs: number;
}

/** A live lease deadline for job `id`, spread over a second like the expired ones. */
export function liveDeadline(serverNowMs: number, id: number): number {
  return serverNowMs + LIVE_FOR_MS + (id % 1000);
}

export async function seedLiveJobs(redis: Redis, keys: QueueKeys, plan: LiveSeedPlan, signal?: AbortSignal): Promise<void> {
  const end = plan.firstId + plan.count - 1;
  for (let first = plan.firstId; first <= end; first += CHUNK) {
    signal?.throwIfAborted();
    const last = Math.min(end, first + CHUNK - 1);
    const pipeline = redis.pipeline();
    const members: (string | number)[] = [];
    for (let id = first; id <= last; id++) {
      members.push(liveDeadline(plan.serverNowMs, id), id);
      pipeline.hset(keys.job(id), 'state', 'active', 'stalled', plan.stalledBefore);
    }
    pipeline.zadd(keys.active, ...members);
    const results = (await pipeline.exec()) ?? [];
    for (const [err] of results) if (err) throw err;
  }
}

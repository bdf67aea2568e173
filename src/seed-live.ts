/**
 * Seeds jobs whose leases are still valid: workers are busy with them, so a correct sweep must
 * leave them alone. They take the ids after the expired jobs (N+1 … N+L), with deadlines an hour
 * into the server's future, far beyond any run, through the same server-side seeding as the rest.
 */
import type { Redis } from 'ioredis';
import type { QueueKeys } from './keys.js';
import { seedJobs } from './seed.js';

/** How far in the server's future the live leases end. */
export const LIVE_FOR_MS = 3_600_000;

export interface LiveSeedPlan {
  /** The first live job's id: one past the last expired job. */
  readonly firstId: number;
  readonly count: number;
  readonly stalledBefore: number;
  readonly serverNowMs: number;
}

export async function seedLiveJobs(redis: Redis, keys: QueueKeys, plan: LiveSeedPlan, signal?: AbortSignal): Promise<void> {
  await seedJobs(redis, keys, { jobs: plan.count, firstId: plan.firstId, stalledBefore: plan.stalledBefore, serverNowMs: plan.serverNowMs, expiredByMs: -LIVE_FOR_MS }, signal);
}

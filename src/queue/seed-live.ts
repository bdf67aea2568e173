/**
 * Seeds jobs whose leases are still valid: workers are busy with them, so a correct sweep must
 * leave them alone. They take the ids after the expired jobs (N+1 … N+L), with deadlines an hour
 * into the server's future, far beyond any run, through the same server-side seeding as the rest.
 */
import type { Redis } from 'ioredis';
import type { QueueKeys } from './keys.js';
import { seedJobs, type SeedPlan } from './seed.js';

/**
 * How far in the server's future the live leases end: thirty days, so that no run, however long
 * its --interval, --latency or --cycles make it, outlives them and sees a correct sweep take one.
 */
const LIVE_FOR_MS = 30 * 24 * 3_600_000;

/** A seeding plan whose first id is one past the last expired job; the deadlines are this file's. */
export type LiveSeedPlan = Omit<SeedPlan, 'expiredByMs' | 'firstId'> & { readonly firstId: number };

export async function seedLiveJobs(redis: Redis, keys: QueueKeys, plan: LiveSeedPlan, signal?: AbortSignal, onBatch?: (jobs: number) => void): Promise<void> {
  await seedJobs(redis, keys, { ...plan, expiredByMs: -LIVE_FOR_MS }, signal, onBatch);
}

/**
 * Seeds jobs 1..N as leased and already expired: each in `active` scored by a deadline in the
 * server's past, with a hash holding `state=active` and `stalled`. The work runs on the server
 * (src/lua/seed-jobs.lua, a few thousand jobs per call) with several calls in flight at once, so
 * a million jobs cost two hundred calls and no per-job traffic.
 */
import type { Redis } from 'ioredis';
import { defineBulkScripts } from './bulk-scripts.js';
import type { QueueKeys } from './keys.js';
import { inSlices } from './slices.js';

/** How far in the server's past the seeded leases expired. */
export const EXPIRED_BY_MS = 60_000;
/** Jobs per script call: a few milliseconds of the server's time. */
const PER_CALL = 5000;

export interface SeedPlan {
  readonly jobs: number;
  readonly stalledBefore: number;
  /** The server's time when seeding starts; deadlines are set relative to it. */
  readonly serverNowMs: number;
  /** The first id (default 1): live jobs take the ids after the expired ones. */
  readonly firstId?: number;
  /** How long before serverNowMs the leases ended (default EXPIRED_BY_MS); negative: still valid. */
  readonly expiredByMs?: number;
}

/** A lease deadline for job `id`: spread over a second so ZRANGEBYSCORE has an order to follow. */
export function expiredDeadline(serverNowMs: number, id: number): number {
  return serverNowMs - EXPIRED_BY_MS - (id % 1000);
}

export async function seedJobs(redis: Redis, keys: QueueKeys, plan: SeedPlan, signal?: AbortSignal): Promise<void> {
  defineBulkScripts(redis);
  const expiredBy = plan.expiredByMs ?? EXPIRED_BY_MS;
  await inSlices(plan.jobs, plan.firstId ?? 1, PER_CALL, signal, (first, last) => redis.seedJobs(keys.active, keys.prefix, first, last, plan.serverNowMs, expiredBy, plan.stalledBefore), () => {});
}

/**
 * Seeds jobs 1..N as leased and already expired: each in `active` scored by a deadline in the
 * server's past, with a hash holding `state=active` and `stalled`. Pipelined in chunks, so a million
 * jobs take a few hundred round trips rather than a million.
 */
import type { Redis } from 'ioredis';
import type { QueueKeys } from './keys.js';

/** How far in the server's past the seeded leases expired. */
export const EXPIRED_BY_MS = 60_000;
const CHUNK = 5000;

export interface SeedPlan {
  readonly jobs: number;
  readonly stalledBefore: number;
  /** The server's time when seeding starts; deadlines are set relative to it. */
  readonly serverNowMs: number;
}

/** A lease deadline for job `id`: spread over a second so ZRANGEBYSCORE has an order to follow. */
export function expiredDeadline(serverNowMs: number, id: number): number {
  return serverNowMs - EXPIRED_BY_MS - (id % 1000);
}

export async function seedJobs(redis: Redis, keys: QueueKeys, plan: SeedPlan, signal?: AbortSignal): Promise<void> {
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

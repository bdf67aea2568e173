/**
 * Claims a queue before anything is written, so a run never writes over someone's keys. The claim
 * is one SET NX (atomic: two runs on the same name cannot both win), then a SCAN confirms that no
 * other key of the queue exists. A refused run deletes only its own marker.
 */
import type { Redis } from 'ioredis';
import { usageError } from '../errors.js';
import { queuePattern, type QueueKeys } from './keys.js';

/** Deletes the owner marker only if it still holds this run's id. */
const RELEASE_LUA = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

export async function claimQueue(redis: Redis, keys: QueueKeys, runId: string): Promise<void> {
  const won = await redis.set(keys.owner, runId, 'NX');
  if (won !== 'OK') {
    throw usageError(`queue ${keys.queue} is already in use (${keys.owner} exists): pick another --queue, or remove a kept run's keys`);
  }
  const existing = await findQueueKeys(redis, keys, 1, keys.owner);
  if (existing.length > 0) {
    await releaseClaim(redis, keys, runId);
    throw usageError(`queue ${keys.queue} already has keys (${existing[0]}): refusing to write over them; pick another --queue`);
  }
}

/** Resolves to 1 if the marker was deleted, 0 if it held something else (or nothing). */
export async function releaseClaim(redis: Redis, keys: QueueKeys, runId: string): Promise<number> {
  return Number(await redis.eval(RELEASE_LUA, 1, keys.owner, runId));
}

/** Up to `limit` keys of the queue, leaving out `except`. */
export async function findQueueKeys(redis: Redis, keys: QueueKeys, limit: number, except?: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', queuePattern(keys), 'COUNT', 1000);
    cursor = next;
    for (const key of batch) {
      if (key !== except) found.push(key);
      if (found.length >= limit) return found;
    }
  } while (cursor !== '0');
  return found;
}

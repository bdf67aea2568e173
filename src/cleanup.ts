/**
 * Deletes exactly the keys a run created, by name, with UNLINK. Never by pattern and never a
 * FLUSH: whatever else lives on the server is not the tool's to touch.
 */
import type { Redis } from 'ioredis';
import { createdKeys, type QueueKeys } from './keys.js';

const CHUNK = 1000;

export async function deleteRunKeys(redis: Redis, keys: QueueKeys, jobCount: number): Promise<void> {
  let names: string[] = [];
  for (const key of createdKeys(keys, jobCount)) {
    names.push(key);
    if (names.length === CHUNK) {
      await redis.unlink(...names);
      names = [];
    }
  }
  if (names.length > 0) await redis.unlink(...names);
}

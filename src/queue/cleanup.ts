/**
 * Deletes exactly the keys a run created, by name, with UNLINK. Never by pattern and never a
 * FLUSH: whatever else lives on the server is not the tool's to touch.
 */
import type { Redis } from 'ioredis';
import { createdKeys, type QueueKeys } from './keys.js';

const CHUNK = 1000;

/**
 * Unlinks the run's keys in chunks and resolves to how many existed. `stop` (a second Ctrl-C)
 * ends it between chunks; the owner marker goes last, so a queue cut short still carries the
 * marker that `emq-race clean` needs to finish the job.
 */
export async function deleteRunKeys(redis: Redis, keys: QueueKeys, jobCount: number, stop?: AbortSignal, except?: string): Promise<number> {
  let deleted = 0;
  let names: string[] = [];
  for (const key of createdKeys(keys, jobCount)) {
    if (key === except) continue;
    names.push(key);
    if (names.length === CHUNK) {
      stop?.throwIfAborted();
      deleted += await redis.unlink(...names);
      names = [];
    }
  }
  stop?.throwIfAborted();
  if (names.length > 0) deleted += await redis.unlink(...names);
  return deleted;
}

/** The line that tells a person how to remove what a run could not. */
export function leftBehindHint(queue: string): string {
  return `the keys of queue ${queue} (emq:{${queue}}:*) may remain on the server: remove them with emq-race clean --queue ${queue} (and the same --url)`;
}

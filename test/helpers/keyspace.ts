/** Reads a whole (test-owned) keyspace, to check that a run left nothing behind or unchanged. */
import type { Redis } from 'ioredis';

export async function allKeys(redis: Redis): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys.sort();
}

/** Every key with a digest of its value (DUMP), so any change to any key shows. */
export async function keyspaceDigest(redis: Redis): Promise<Map<string, string>> {
  const digest = new Map<string, string>();
  for (const key of await allKeys(redis)) {
    const dumped = await redis.dumpBuffer(key);
    digest.set(key, dumped ? dumped.toString('base64') : '');
  }
  return digest;
}

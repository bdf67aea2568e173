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

/**
 * What a key is, as the server sees it: its type, its absolute expiry (PEXPIRETIME, -1 for none)
 * and DEBUG DIGEST-VALUE of its value. The server must run with --enable-debug-command.
 */
export async function valueDigests(redis: Redis, keys: readonly string[]): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  for (const key of keys) {
    const type = await redis.type(key);
    const expires = String(await redis.call('PEXPIRETIME', key));
    const digest = type === 'none' ? '' : String(await redis.call('DEBUG', 'DIGEST-VALUE', key));
    digests.set(key, `${type} ${expires} ${digest}`);
  }
  return digests;
}

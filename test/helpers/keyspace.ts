/** Reads a whole (test-owned) keyspace, to check that a run left nothing behind or unchanged. */
import type { ChainableCommander, Redis } from 'ioredis';

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

/** What is left of queue `queue`'s keys (`emq:{QUEUE}…`), read with a whole SCAN of the keyspace. */
export async function queueKeysLeft(redis: Redis, queue: string): Promise<string[]> {
  return (await allKeys(redis)).filter((key) => key.startsWith(`emq:{${queue}}`));
}

/** Every key with a digest of its value (DUMP), so any change to any key shows. */
export async function keyspaceDigest(redis: Redis): Promise<Map<string, string>> {
  const digest = new Map<string, string>();
  const keys = await allKeys(redis);
  for (let at = 0; at < keys.length; at += SLICE) {
    const slice = keys.slice(at, at + SLICE);
    const dumps = await pipelined(redis, slice, (pipeline, key) => pipeline.dumpBuffer(key));
    slice.forEach((key, i) => {
      const dumped = dumps[i] as Buffer | null;
      digest.set(key, dumped ? dumped.toString('base64') : '');
    });
  }
  return digest;
}

/**
 * What a key is, as the server sees it: its type, its absolute expiry (PEXPIRETIME, -1 for none)
 * and DEBUG DIGEST-VALUE of its value. The server must run with --enable-debug-command.
 */
export async function valueDigests(redis: Redis, keys: readonly string[]): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  for (let at = 0; at < keys.length; at += SLICE) {
    const slice = keys.slice(at, at + SLICE);
    const types = (await pipelined(redis, slice, (pipeline, key) => pipeline.type(key))) as string[];
    const expiries = await pipelined(redis, slice, (pipeline, key) => pipeline.call('PEXPIRETIME', key));
    const present = slice.filter((_, i) => types[i] !== 'none');
    const values = await pipelined(redis, present, (pipeline, key) => pipeline.call('DEBUG', 'DIGEST-VALUE', key));
    const digestOf = new Map(present.map((key, i) => [key, String(values[i])]));
    slice.forEach((key, i) => digests.set(key, `${types[i]} ${String(expiries[i])} ${digestOf.get(key) ?? ''}`));
  }
  return digests;
}

/** Keys read a slice at a time in one pipeline: a round trip's wait per slice, not per key. */
const SLICE = 1000;

/** One command per key in one pipeline, the replies in the keys' order; the first error is thrown. */
async function pipelined(redis: Redis, keys: readonly string[], command: (pipeline: ChainableCommander, key: string) => unknown): Promise<unknown[]> {
  if (keys.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const key of keys) command(pipeline, key);
  const replies = (await pipeline.exec()) ?? [];
  return keys.map((key, i) => {
    const [err, reply] = replies[i] ?? [new Error(`no reply for ${key}`), null];
    if (err) throw err;
    return reply;
  });
}

/**
 * A library's job ids read back from its lists and sets, counted per id: what every library's
 * snapshot does before reading what is its own. Lists and sorted sets are read in slices, so a
 * key of a million ids never arrives in one reply; ids of no job of the run are left out.
 */
import type { Redis } from 'ioredis';
import { scanPages } from '../server/scan.js';

const SLICE = 10_000;

/** Counts each job id 1..jobs in `ids` into `into`. */
function countIds(ids: readonly string[], into: Uint32Array | Uint8Array, jobs: number): void {
  for (const raw of ids) {
    const id = Number(raw);
    if (Number.isInteger(id) && id >= 1 && id <= jobs) into[id] = (into[id] ?? 0) + 1;
  }
}

/** Entries of each id in the list `key`. */
export async function readList(redis: Redis, key: string, into: Uint32Array, jobs: number, signal: AbortSignal): Promise<void> {
  const length = await redis.llen(key);
  for (let from = 0; from < length; from += SLICE) {
    signal.throwIfAborted();
    countIds(await redis.lrange(key, from, from + SLICE - 1), into, jobs);
  }
}

/** 1 where the sorted set `key` holds the id. */
export async function readSortedSet(redis: Redis, key: string, into: Uint8Array, jobs: number, signal: AbortSignal): Promise<void> {
  const size = await redis.zcard(key);
  for (let from = 0; from < size; from += SLICE) {
    signal.throwIfAborted();
    countIds(await redis.zrange(key, from, from + SLICE - 1), into, jobs);
  }
}

/** 1 where the set `key` holds the id. */
export async function readSet(redis: Redis, key: string, into: Uint8Array, jobs: number, signal: AbortSignal): Promise<void> {
  for await (const ids of scanPages('SSCAN', (cursor) => redis.sscan(key, cursor, 'COUNT', SLICE), { signal })) {
    // SSCAN may return a member twice: a set holds it once.
    for (const raw of ids) {
      const id = Number(raw);
      if (Number.isInteger(id) && id >= 1 && id <= jobs) into[id] = 1;
    }
  }
}

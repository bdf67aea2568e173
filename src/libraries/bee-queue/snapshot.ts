/**
 * Bee-Queue's keys read back after the race, through the tool's own admin connection: its lists
 * in slices, its sets and sorted set whole by SSCAN and ZRANGE. What anyone can check with LRANGE,
 * SMEMBERS and ZRANGE on the keys a `--keep` run leaves.
 */
import type { Redis } from 'ioredis';
import { blankBeeSnapshot, type BeeSnapshot } from './audit.js';
import type { BeeKeys } from './keys.js';

const SLICE = 10_000;

/** Counts each job id 1..jobs in `ids` into `into`; ids of no job of the run are left out. */
function countIds(ids: readonly string[], into: Uint32Array | Uint8Array, jobs: number): void {
  for (const raw of ids) {
    const id = Number(raw);
    if (Number.isInteger(id) && id >= 1 && id <= jobs) into[id] = (into[id] ?? 0) + 1;
  }
}

async function readList(redis: Redis, key: string, into: Uint32Array, jobs: number, signal: AbortSignal): Promise<void> {
  const length = await redis.llen(key);
  for (let from = 0; from < length; from += SLICE) {
    signal.throwIfAborted();
    countIds(await redis.lrange(key, from, from + SLICE - 1), into, jobs);
  }
}

async function readSet(redis: Redis, key: string, into: Uint8Array, jobs: number, signal: AbortSignal): Promise<void> {
  let cursor = '0';
  do {
    signal.throwIfAborted();
    const [next, ids] = await redis.sscan(key, cursor, 'COUNT', SLICE);
    // SSCAN may return a member twice: a set holds it once.
    for (const raw of ids) {
      const id = Number(raw);
      if (Number.isInteger(id) && id >= 1 && id <= jobs) into[id] = 1;
    }
    cursor = next;
  } while (cursor !== '0');
}

async function readSortedSet(redis: Redis, key: string, into: Uint8Array, jobs: number, signal: AbortSignal): Promise<void> {
  const size = await redis.zcard(key);
  for (let from = 0; from < size; from += SLICE) {
    signal.throwIfAborted();
    countIds(await redis.zrange(key, from, from + SLICE - 1), into, jobs);
  }
}

export async function readBeeSnapshot(redis: Redis, keys: BeeKeys, jobs: number, signal: AbortSignal): Promise<BeeSnapshot> {
  const s = blankBeeSnapshot(jobs);
  await readList(redis, keys.waiting, s.inWaiting, jobs, signal);
  await readList(redis, keys.active, s.inActive, jobs, signal);
  await readSet(redis, keys.succeeded, s.inSucceeded, jobs, signal);
  await readSet(redis, keys.failed, s.inFailed, jobs, signal);
  await readSortedSet(redis, keys.delayed, s.inDelayed, jobs, signal);
  return s;
}

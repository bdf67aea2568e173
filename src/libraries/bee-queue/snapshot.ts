/**
 * Bee-Queue's keys read back after the race, through the tool's own admin connection: its lists
 * in slices, its sets and sorted set whole by SSCAN and ZRANGE. What anyone can check with LRANGE,
 * SMEMBERS and ZRANGE on the keys a `--keep` run leaves.
 */
import type { Redis } from 'ioredis';
import { readList, readSet, readSortedSet } from '../id-readers.js';
import { blankBeeSnapshot, type BeeSnapshot } from './audit.js';
import type { BeeKeys } from './keys.js';

export async function readBeeSnapshot(redis: Redis, keys: BeeKeys, jobs: number, signal: AbortSignal): Promise<BeeSnapshot> {
  const s = blankBeeSnapshot(jobs);
  await readList(redis, keys.waiting, s.inWaiting, jobs, signal);
  await readList(redis, keys.active, s.inActive, jobs, signal);
  await readSet(redis, keys.succeeded, s.inSucceeded, jobs, signal);
  await readSet(redis, keys.failed, s.inFailed, jobs, signal);
  await readSortedSet(redis, keys.delayed, s.inDelayed, jobs, signal);
  return s;
}

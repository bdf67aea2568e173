/**
 * BullMQ's keys read back after the race, through the tool's own admin connection: its lists and
 * sets in slices, and each job's hash (`stc`, `defa`, `timestamp`, the handlers' runs) and lock by name, in pipelines. What anyone
 * can check with LRANGE, ZRANGE and HGET on the keys a `--keep` run leaves.
 */
import type { Redis } from 'ioredis';
import { readList, readSortedSet } from '../id-readers.js';
import { blankBullmqSnapshot, type BullmqSnapshot } from './audit.js';
import { HANDLER_RUNS_FIELD, type BullmqKeys } from './keys.js';

const PIPELINE = 1000;

export async function readBullmqSnapshot(redis: Redis, keys: BullmqKeys, jobs: number, signal: AbortSignal): Promise<BullmqSnapshot> {
  const s = blankBullmqSnapshot(jobs);
  await readList(redis, keys.wait, s.inWait, jobs, signal);
  await readList(redis, keys.active, s.inActive, jobs, signal);
  await readList(redis, keys.paused, s.inPaused, jobs, signal);
  await readSortedSet(redis, keys.failed, s.inFailed, jobs, signal);
  await readSortedSet(redis, keys.completed, s.inCompleted, jobs, signal);
  await readSortedSet(redis, keys.delayed, s.inDelayed, jobs, signal);
  await readSortedSet(redis, keys.prioritized, s.inPrioritized, jobs, signal);
  for (let first = 1; first <= jobs; first += PIPELINE) {
    signal.throwIfAborted();
    const last = Math.min(jobs, first + PIPELINE - 1);
    const pipeline = redis.pipeline();
    for (let id = first; id <= last; id++) pipeline.hmget(keys.job(id), 'stc', 'defa', 'timestamp', HANDLER_RUNS_FIELD).exists(keys.lock(id));
    const replies = (await pipeline.exec()) ?? [];
    for (let id = first; id <= last; id++) {
      const at = (id - first) * 2;
      const [hashError, hash] = replies[at] ?? [];
      const [lockError, lock] = replies[at + 1] ?? [];
      if (hashError) throw hashError;
      if (lockError) throw lockError;
      const [stc, defa, timestamp, ran] = (hash as (string | null)[] | undefined) ?? [];
      if (stc != null) s.stc[id] = Number(stc);
      if (defa != null) s.failMarked[id] = 1;
      if (timestamp == null) s.removed[id] = 1;
      if (ran != null) s.ran[id] = Number(ran);
      s.locked[id] = Number(lock) > 0 ? 1 : 0;
    }
  }
  return s;
}

/**
 * node-resque's keys read back after the race, through the tool's own admin connection: `failed`
 * and the queue's list in slices (each entry's job id read from its JSON payload), the `workers`
 * set and each registered worker's working-on key, and `stat:failed`. What anyone can check with
 * LRANGE, SMEMBERS and GET on the keys a `--keep` run leaves.
 */
import type { Redis } from 'ioredis';
import { blankResqueSnapshot, type ResqueSnapshot } from './audit.js';
import { jobIdOf, type ResqueKeys } from './keys.js';

const SLICE = 10_000;

/** The job id of one entry of `failed` (a failure, its job under `payload`) or of the queue (a job). */
function entryJob(entry: string, jobs: number, failure: boolean): number | undefined {
  try {
    const parsed = JSON.parse(entry) as { payload?: unknown };
    return jobIdOf(failure ? parsed.payload : parsed, jobs);
  } catch {
    return undefined;
  }
}

async function readList(redis: Redis, key: string, into: Uint32Array, jobs: number, failure: boolean, signal: AbortSignal): Promise<void> {
  const length = await redis.llen(key);
  for (let from = 0; from < length; from += SLICE) {
    signal.throwIfAborted();
    for (const entry of await redis.lrange(key, from, from + SLICE - 1)) {
      const id = entryJob(entry, jobs, failure);
      if (id !== undefined) into[id] = (into[id] ?? 0) + 1;
    }
  }
}

export async function readResqueSnapshot(redis: Redis, keys: ResqueKeys, jobs: number, signal: AbortSignal): Promise<ResqueSnapshot> {
  const s = blankResqueSnapshot(jobs);
  await readList(redis, keys.failed, s.inFailed, jobs, true, signal);
  await readList(redis, keys.queue, s.inQueue, jobs, false, signal);
  const workers = await redis.smembers(keys.workers);
  for (const entry of workers) {
    signal.throwIfAborted();
    const data = await redis.get(`${keys.namespace}:worker:${entry}`);
    if (data === null) continue;
    const id = entryJob(data, jobs, true);
    if (id !== undefined) s.held[id] = (s.held[id] ?? 0) + 1;
  }
  s.statFailed = Number((await redis.get(keys.statFailed)) ?? 0);
  return s;
}

/**
 * Seeds jobs 1..N as leased and already expired: each in `active` scored by a deadline in the
 * server's past, with a hash holding `state=active`, `stalled` and `run` (the run's id, which
 * `emq-race clean` checks before it deletes a job hash). The work runs on the server
 * (src/lua/seed-jobs.lua, a few thousand jobs per call) with several calls in flight at once, so
 * a million jobs cost two hundred calls and no per-job traffic.
 */
import type { Redis } from 'ioredis';
import { callSeedJobs } from '../lua/bulk-scripts.js';
import { structureKeys, type QueueKeys } from './keys.js';
import { inCalls } from '../server/slices.js';

/** How far in the server's past the seeded leases expired. */
export const EXPIRED_BY_MS = 60_000;
/** Jobs per script call: a few milliseconds of the server's time. */
const PER_CALL = 5000;
/** Deadlines repeat with id % RESIDUES (see expiredDeadline). */
const RESIDUES = 1000;

export interface SeedPlan {
  readonly jobs: number;
  /** The id of the run that claimed the queue: every job hash carries it. */
  readonly runId: string;
  readonly stalledBefore: number;
  /** The server's time when seeding starts; deadlines are set relative to it. */
  readonly serverNowMs: number;
  /** The first id (default 1): live jobs take the ids after the expired ones. */
  readonly firstId?: number;
  /** How long before serverNowMs the leases ended (default EXPIRED_BY_MS); negative: still valid. */
  readonly expiredByMs?: number;
}

/** A lease deadline for job `id`: spread over a second so ZRANGEBYSCORE has an order to follow. */
export function expiredDeadline(serverNowMs: number, id: number): number {
  return serverNowMs - EXPIRED_BY_MS - (id % RESIDUES);
}

/**
 * One seeding call: the ids first..last whose residue (id % 1000) lies in high..low. The residue
 * decides the deadline, so a call covers a band of deadlines.
 */
export interface SeedSlice {
  readonly first: number;
  readonly last: number;
  readonly high: number;
  readonly low: number;
}

/**
 * The calls that seed `count` ids from `origin`, each at most `perCall` jobs, in ascending order
 * of deadline (residue 999 first): the server then inserts every job of the sorted set next to
 * the one before, which keeps its search path in cache, and lays the set out in memory in the
 * order the sweeps read it. Above perCall jobs per residue the ids are cut into windows first.
 */
export function seedSlices(origin: number, count: number, perCall: number): SeedSlice[] {
  const slices: SeedSlice[] = [];
  if (count <= 0) return slices;
  const end = origin + count - 1;
  const perResidue = Math.min(Math.ceil(count / RESIDUES), perCall);
  const windowIds = perResidue * RESIDUES;
  const residuesPerCall = Math.max(1, Math.floor(perCall / perResidue));
  for (let first = origin; first <= end; first += windowIds) {
    const last = Math.min(end, first + windowIds - 1);
    for (let high = RESIDUES - 1; high >= 0; high -= residuesPerCall) {
      slices.push({ first, last, high, low: Math.max(0, high - residuesPerCall + 1) });
    }
  }
  return slices;
}

/**
 * Visits the ids of one slice in the order seed-jobs.lua created them (and audit-jobs.lua reads
 * them back): residue high down to low, ids rising within a residue. `index` counts from 0.
 */
export function forEachSliceId(slice: SeedSlice, visit: (id: number, index: number) => void): void {
  let index = 0;
  for (let residue = slice.high; residue >= slice.low; residue--) {
    for (let id = lowestIdWith(slice.first, residue); id <= slice.last; id += RESIDUES) visit(id, index++);
  }
}

/** How many ids one slice covers. */
export function sliceSize(slice: SeedSlice): number {
  let size = 0;
  for (let residue = slice.high; residue >= slice.low; residue--) {
    const start = lowestIdWith(slice.first, residue);
    if (start <= slice.last) size += Math.floor((slice.last - start) / RESIDUES) + 1;
  }
  return size;
}

/** The lowest id from `first` on whose residue is `residue`. */
function lowestIdWith(first: number, residue: number): number {
  return first + ((((residue - (first % RESIDUES)) % RESIDUES) + RESIDUES) % RESIDUES);
}

/**
 * A run's job hashes by name, in chunks of at most `size`, in the order seeding created them: the
 * order they lie in the server's memory, which a clean-up that follows it touches with far fewer
 * cache misses than one that goes by id (docs/scale.md, "The clean-up"). Every id from 1 to
 * `jobCount` exactly once; the live jobs after the expired ones are read as the audit reads them.
 */
export function* jobKeyChunks(keys: Pick<QueueKeys, 'job'>, jobCount: number, size: number): Generator<string[]> {
  let chunk: string[] = [];
  for (const slice of seedSlices(1, jobCount, PER_CALL)) {
    const names: string[] = [];
    forEachSliceId(slice, (id) => names.push(keys.job(id)));
    for (const name of names) {
      chunk.push(name);
      if (chunk.length === size) {
        yield chunk;
        chunk = [];
      }
    }
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * Deletes exactly a run's keys by name through `unlink` (one call, answering how many it deleted):
 * its lists and sets, then its job hashes in the order seeding made them (jobKeyChunks), 1,000
 * names a call and several calls in flight, then its owner marker, last, once every other key is
 * gone. The run's own clean-up unlinks on its connection; one that follows a resharded slot
 * (slot-follow.ts) unlinks each name where it now lies.
 */
export async function unlinkRunKeys(keys: QueueKeys, jobCount: number, unlink: (names: readonly string[]) => Promise<number>): Promise<number> {
  let deleted = await unlink(structureKeys(keys));
  await inCalls(jobKeyChunks(keys, jobCount, 1000), undefined, unlink, (count) => {
    deleted += count;
  });
  return deleted + (await unlink([keys.owner]));
}

/** `onBatch`, if given, hears the jobs of each call as its reply arrives: the progress line's seeding. */
export async function seedJobs(redis: Redis, keys: QueueKeys, plan: SeedPlan, signal?: AbortSignal, onBatch?: (jobs: number) => void): Promise<void> {
  const expiredBy = plan.expiredByMs ?? EXPIRED_BY_MS;
  await inCalls(
    seedSlices(plan.firstId ?? 1, plan.jobs, PER_CALL),
    signal,
    ({ first, last, high, low }) =>
      callSeedJobs(redis, keys.active, keys.prefix, first, last, plan.serverNowMs, expiredBy, plan.stalledBefore, high, low, plan.runId),
    (_reply, slice) => onBatch?.(sliceSize(slice)),
  );
}

/**
 * Before a run writes to a server with a memory limit, it checks that its keys fit below
 * `maxmemory`. Under an `allkeys-*` policy a run that does not fit would not fail: the server would
 * quietly evict the user's own keys to make room (under `volatile-*`, those with a TTL); under
 * `noeviction` the seeding would stop halfway with OOM. So a run that would not fit is refused
 * before anything is written.
 */
import type { Redis } from 'ioredis';
import { usageError } from '../errors.js';

/**
 * Server memory per seeded job at the run's peak (right after seeding: the job's member in
 * `active` and its hash). Measured with INFO memory's used_memory before and after seeding
 * (scripts/measure-footprint.mjs): Redis 7.0.15 263.5 bytes/job at 20,000 jobs and 243.0 at
 * 100,000; Valkey 8.0.1 241.1 and 227.1 (hash tables grow in steps, so it varies with the count).
 * Rounded up above the largest, with room for the duplicate ids the loop adds to `pending`.
 */
export const BYTES_PER_JOB = 280;
/** Per connection (the admin one and each sweeper's): client buffers on the server, a generous bound. */
export const BYTES_PER_CONNECTION = 32 * 1024;

export interface MemoryInfo {
  readonly usedMemory: number;
  /** 0 means no limit. */
  readonly maxMemory: number;
  readonly policy: string;
}

export function parseMemoryInfo(info: string): MemoryInfo {
  const field = (name: string): string | undefined => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  return {
    usedMemory: Number(field('used_memory') ?? 0),
    maxMemory: Number(field('maxmemory') ?? 0),
    policy: field('maxmemory_policy') ?? 'noeviction',
  };
}

export async function usedMemory(redis: Redis): Promise<number> {
  return parseMemoryInfo(await redis.info('memory')).usedMemory;
}

export function estimateFootprint(jobs: number, sweepers: number): number {
  return jobs * BYTES_PER_JOB + (sweepers + 1) * BYTES_PER_CONNECTION;
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Why the run must not start on this server, or undefined when it fits (or nothing limits it). */
export function footprintProblem(memory: MemoryInfo, jobs: number, sweepers: number, live = 0): string | undefined {
  if (!(memory.maxMemory > 0)) return undefined;
  const need = estimateFootprint(jobs + live, sweepers);
  const room = memory.maxMemory - memory.usedMemory;
  if (need <= room) return undefined;
  const what = `--jobs ${jobs}${live > 0 ? ` (with ${live} live jobs)` : ''} needs about ${mb(need)} on the server, but only ${mb(Math.max(0, room))} is left below its maxmemory of ${mb(memory.maxMemory)}`;
  let consequence: string;
  if (memory.policy.startsWith('allkeys-')) consequence = `under maxmemory-policy ${memory.policy} the server would evict other keys (yours) to make room`;
  else if (memory.policy.startsWith('volatile-')) consequence = `under maxmemory-policy ${memory.policy} the server would evict keys that have a TTL to make room`;
  else consequence = `under maxmemory-policy ${memory.policy} the seeding would fail halfway with OOM`;
  return `${what}; ${consequence}. Refusing: lower --jobs or use a server with more room`;
}

/** Reads INFO memory and refuses (exit 2, nothing written) when the run would not fit. */
export async function checkMemoryRoom(redis: Redis, jobs: number, sweepers: number, live = 0): Promise<void> {
  const problem = footprintProblem(parseMemoryInfo(await redis.info('memory')), jobs, sweepers, live);
  if (problem) throw usageError(problem);
}

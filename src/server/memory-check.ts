/**
 * What a server says of its memory: used_memory, its maxmemory and policy, read from INFO memory
 * (not CONFIG GET, so a least-privilege user needs no @admin). The memory guard
 * (queue/memory-guard.ts) and the eviction watch build on these readings.
 */
import type { Redis } from 'ioredis';

export interface MemoryInfo {
  readonly usedMemory: number;
  /** 0 means no limit. */
  readonly maxMemory: number;
  readonly policy: string;
  /** Replication and AOF buffers: in used_memory, but not what the server evicts for. */
  readonly notCountedForEvict: number;
}

export function parseMemoryInfo(info: string): MemoryInfo {
  const field = (name: string): string | undefined => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  return {
    usedMemory: Number(field('used_memory') ?? 0),
    maxMemory: Number(field('maxmemory') ?? 0),
    policy: field('maxmemory_policy') ?? 'noeviction',
    notCountedForEvict: Number(field('mem_not_counted_for_evict') ?? 0),
  };
}

export async function usedMemory(redis: Redis): Promise<number> {
  return parseMemoryInfo(await redis.info('memory')).usedMemory;
}

/** Room left before the server starts evicting (or refusing writes), by its own reckoning. */
export function roomLeft(memory: MemoryInfo): number {
  return memory.maxMemory - (memory.usedMemory - memory.notCountedForEvict);
}

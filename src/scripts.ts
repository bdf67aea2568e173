/**
 * Registers every Lua script the tool ships as an ioredis command. ioredis hashes each script
 * once, sends EVALSHA, and falls back to EVAL when the server answers NOSCRIPT.
 */
import { readFileSync } from 'node:fs';
import type { Redis, Result } from 'ioredis';

export const SWEEP_STALLED_LUA = readFileSync(new URL('./lua/sweep-stalled.lua', import.meta.url), 'utf8');

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** KEYS: active, pending, dead. ARGV: now ms, batch, maxStalled, prefix[, pending type]. Returns moved ids. */
    sweepStalled(
      active: string,
      pending: string,
      dead: string,
      nowMs: number,
      batch: number,
      maxStalled: number,
      prefix: string,
      pendingType?: string,
    ): Result<string[], Context>;
  }
}

export function defineScripts(redis: Redis): void {
  redis.defineCommand('sweepStalled', { numberOfKeys: 3, lua: SWEEP_STALLED_LUA });
}

/** Loads the sweep script into the server's cache so no sweeper's first call pays for an EVAL. */
export async function preloadScripts(redis: Redis): Promise<void> {
  await redis.script('LOAD', SWEEP_STALLED_LUA);
}

/**
 * The shipped sweep script's source. The sweepers send it themselves through CachedScript
 * (EVALSHA first, EVAL on NOSCRIPT) so that they can count the fallbacks and name the moment a
 * call left for the crash fault; preloading it keeps every sweeper's first call an EVALSHA.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

export const SWEEP_STALLED_LUA = readFileSync(new URL('./lua/sweep-stalled.lua', import.meta.url), 'utf8');

/** Loads the sweep script into the server's cache so no sweeper's first call pays for an EVAL. */
export async function preloadScripts(redis: Redis): Promise<void> {
  await redis.script('LOAD', SWEEP_STALLED_LUA);
}

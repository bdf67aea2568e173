/**
 * The benchmark's calibration scripts behind typed calls, sent like every script of the tool
 * (CachedScript: EVALSHA, then EVAL on NOSCRIPT).
 */
import type { Redis } from 'ioredis';
import { luaScript } from './registry.js';

const COMMAND_RATE = luaScript('command-rate');

/** Runs `count` cheap commands on `scratch` inside one script (see command-rate.lua), for the server's own command rate. */
export async function callCommandRate(redis: Redis, scratch: string, count: number): Promise<void> {
  await COMMAND_RATE.call(redis, [scratch], [count]);
}

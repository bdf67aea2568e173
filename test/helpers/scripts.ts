/** User sweep scripts for the script mode's tests: the built-in one, and deliberately wrong ones. */
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const BUILT_IN_SCRIPT = readFileSync(new URL('../../src/lua/sweep-stalled.lua', import.meta.url), 'utf8');

/** Forgets the ZREM: every later sweep finds the same jobs again. */
export const FORGETS_ZREM = BUILT_IN_SCRIPT.replace("  rcall('ZREM', KEYS[1], id)\n", '');

/** Takes every job in active, expired or not. */
export const IGNORES_DEADLINE = BUILT_IN_SCRIPT.replace("rcall('ZRANGEBYSCORE', KEYS[1], '-inf', now,", "rcall('ZRANGEBYSCORE', KEYS[1], '-inf', '+inf',");

/** Moves every job it is given but returns nothing: its returns disagree with what it did. */
export const RETURNS_NOTHING = BUILT_IN_SCRIPT.replace(/return expired\s*$/, "return {}\n");

export const DOES_NOT_COMPILE = 'local x = (\n';

export const FAILS_AT_RUN_TIME = "return redis.call('HGET', KEYS[1], 'x')\n";

/** Writes a script to a fresh temporary file and returns its path. */
export function scriptFile(name: string, source: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'emq-race-script-'));
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}

/** User sweep scripts for the script mode's tests: the built-in one, and deliberately wrong ones. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp-dir.js';

export const BUILT_IN_SCRIPT = readFileSync(new URL('../../src/lua/sweep-stalled.lua', import.meta.url), 'utf8');

/** The built-in script with one piece replaced; fails loudly if the piece is not there. */
function altered(find: RegExp, replacement: string): string {
  if (!find.test(BUILT_IN_SCRIPT)) throw new Error(`the built-in script has no ${String(find)}`);
  return BUILT_IN_SCRIPT.replace(find, replacement);
}

/** Forgets to take the jobs out of active: every later sweep finds the same jobs again. */
export const FORGETS_ZREM = altered(/^\s*rcall\('ZREMRANGEBYRANK', KEYS\[1\],[^\n]*\n/m, '');

/** Takes every job in active, expired or not. */
export const IGNORES_DEADLINE = altered(/rcall\('ZRANGEBYSCORE', KEYS\[1\], '-inf', now,/, "rcall('ZRANGEBYSCORE', KEYS[1], '-inf', '+inf',");

/** Moves every job it is given but returns nothing: its returns disagree with what it did. */
export const RETURNS_NOTHING = altered(/return expired\s*$/, 'return {}\n');

/** Does what the built-in one does, but its return names one more job, 99999, that the run never had. */
export const NAMES_A_JOB_NOBODY_HAD = altered(/return expired\s*$/, "if #expired > 0 then expired[#expired + 1] = '99999' end\nreturn expired\n");

export const DOES_NOT_COMPILE = 'local x = (\n';

export const FAILS_AT_RUN_TIME = "return redis.call('HGET', KEYS[1], 'x')\n";

/** Writes a script to a fresh temporary file and returns its path; its folder goes when the test file ends. */
export function scriptFile(name: string, source: string): string {
  const dir = tempDir('emq-race-script-');
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}

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

/** Does what the built-in one does, but its return names the call's first job twice: one move returned as two. */
export const RETURNS_FIRST_TWICE = altered(/return expired\s*$/, 'expired[#expired + 1] = expired[1]\nreturn expired\n');

/** Moves every expired job as the built-in one does, but never raises its counter (nor dead-letters it). */
export const NEVER_COUNTS = altered(/if rcall\('HINCRBY', jobKey, 'stalled', '1'\) >= maxStalled then/, 'if false then');

/** Does what the built-in one does, but returns only the first job of each call: the rest of its moves go unreported. */
export const RETURNS_FIRST_ONLY = altered(/return expired\s*$/, 'return { expired[1] }\n');

/** Does what the built-in one does, but pushes every job it recovers onto pending twice. */
export const PUSHES_TWICE = altered(/^(\s*)(rcall\('RPUSH', KEYS\[2\], unpack\(toPending\)\))\n/m, '$1$2\n$1$2\n');

/** Does what the built-in one does, but its return names one more job, 99999, that the run never had. */
export const NAMES_A_JOB_NOBODY_HAD = altered(/return expired\s*$/, "if #expired > 0 then expired[#expired + 1] = '99999' end\nreturn expired\n");

/** Recovers nothing: pushes each expired lease an hour on, and says it moved nothing. */
export const RENEWS_LEASES = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
for i = 1, #expired do redis.call('ZADD', KEYS[1], 'XX', now + 3600000, expired[i]) end
return {}
`;

/** Does what the built-in one does, but pushes each id to pending written with a leading 0 (\`0200\` for job 200): no job's name. */
export const PUSHES_PADDED_IDS = altered(
  /pendingCount = pendingCount \+ 1\n(\s*)toPending\[pendingCount\] = id/,
  "pendingCount = pendingCount + 1\n$1toPending[pendingCount] = '0' .. id",
);

/**
 * Does what the built-in one does, and pushes to pending, at every call, the live job `liveId`
 * while its lease holds, and a word that is no job at all.
 */
export const pushesLiveJobAndJunk = (liveId: number): string => altered(/return expired\s*$/, `rcall('RPUSH', KEYS[2], '${liveId}', 'junk')\nreturn expired\n`);

export const DOES_NOT_COMPILE = 'local x = (\n';

export const FAILS_AT_RUN_TIME = "return redis.call('HGET', KEYS[1], 'x')\n";

/** Writes a script to a fresh temporary file and returns its path; its folder goes when the test file ends. */
export function scriptFile(name: string, source: string): string {
  const dir = tempDir('emq-race-script-');
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}

/**
 * Every Lua script the tool sends, by name, read from its `.lua` file in one place. The subject
 * under test (the sweep script, and the function library built around it) sits at the top of
 * src/lua/; the scripts that only set up, watch or read back a race sit in instruments/; the
 * benchmark's calibrations in calibration/. Nothing else in the tool reads a `.lua` file.
 *
 * Scripts are sent through CachedScript (EVALSHA first, EVAL on NOSCRIPT) so that the sweepers, the
 * workers, the re-leaser and the observer can count their fallbacks, and the sweepers name the
 * moment a call left for the crash fault.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { CachedScript } from './cached-script.js';
import { knowShippedScripts } from './script-acl.js';

const FILES = {
  /** The atomic sweep: the subject under test. */
  'sweep-stalled': 'sweep-stalled.lua',
  /** The function library template the sweep script is put into for the function mode. */
  'sweep-stalled-function': 'sweep-stalled-function.lua',
  'seed-jobs': 'instruments/seed-jobs.lua',
  'audit-jobs': 'instruments/audit-jobs.lua',
  'audit-members': 'instruments/audit-members.lua',
  'observe-job': 'instruments/observe-job.lua',
  'release-stalled': 'instruments/release-stalled.lua',
  'take-job': 'instruments/take-job.lua',
  'finish-job': 'instruments/finish-job.lua',
  'increment-field': 'instruments/increment-field.lua',
  'keep-claim': 'instruments/keep-claim.lua',
  'release-marker': 'instruments/release-marker.lua',
  'unlink-run-jobs': 'instruments/unlink-run-jobs.lua',
  'unlink-under-marker': 'instruments/unlink-under-marker.lua',
  'sweep-stalled-per-command': 'calibration/sweep-stalled-per-command.lua',
  'command-rate': 'calibration/command-rate.lua',
} as const;

export type ScriptName = keyof typeof FILES;

const sources = new Map<ScriptName, string>();
const scripts = new Map<ScriptName, CachedScript>();

/** A script's text, as shipped. */
export function luaSource(name: ScriptName): string {
  let source = sources.get(name);
  if (source === undefined) {
    source = readFileSync(new URL(`./${FILES[name]}`, import.meta.url), 'utf8');
    sources.set(name, source);
  }
  return source;
}

/** A script ready to send: one CachedScript per name, shared by every caller. */
export function luaScript(name: ScriptName): CachedScript {
  let script = scripts.get(name);
  if (script === undefined) {
    script = new CachedScript(luaSource(name));
    scripts.set(name, script);
  }
  return script;
}

/** Every shipped script with the name of its file (without folders): what an ACL refusal is matched against. */
function shippedScripts(): { readonly file: string; readonly source: string }[] {
  return (Object.keys(FILES) as ScriptName[]).map((name) => ({ file: FILES[name].replace(/^.*\//, ''), source: luaSource(name) }));
}

knowShippedScripts(shippedScripts);

export const SWEEP_STALLED_LUA = luaSource('sweep-stalled');

/** SCRIPT LOAD: the server compiles `source` into its script cache and answers with its SHA1. */
export async function loadScript(redis: Redis, source: string): Promise<string> {
  return String(await redis.script('LOAD', source));
}

/** Loads the sweep script into the server's cache so no sweeper's first call pays for an EVAL. */
export async function preloadScripts(redis: Redis): Promise<void> {
  await loadScript(redis, SWEEP_STALLED_LUA);
}

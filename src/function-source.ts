/**
 * The function library's source: sweep-stalled-function.lua with its names filled in and
 * sweep-stalled.lua put in as the function's body. Kept apart from loading, so that reading a
 * refusal's line number back (script-acl.ts) sees exactly the text the server compiled.
 */
import { readFileSync } from 'node:fs';
import { SWEEP_STALLED_LUA } from './scripts.js';

const TEMPLATE = readFileSync(new URL('./lua/sweep-stalled-function.lua', import.meta.url), 'utf8');

export function functionLibrarySource(library: string, name: string): string {
  // Function replacements, so that no `$` in the texts is read as a replacement pattern.
  return TEMPLATE.replace('#!lua name=__LIBRARY__', () => `#!lua name=${library}`)
    .replace("redis.register_function('__FUNCTION__'", () => `redis.register_function('${name}'`)
    .replace('\n__SWEEP_STALLED__\n', () => `\n${SWEEP_STALLED_LUA.trimEnd()}\n`);
}

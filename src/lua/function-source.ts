/**
 * The function library's source: sweep-stalled-function.lua with its names filled in and
 * sweep-stalled.lua put in as the function's body. Kept apart from loading, so that reading a
 * refusal's line number back (script-acl.ts) sees exactly the text the server compiled, and can
 * say which of the two files that line came from.
 */
import { SWEEP_STALLED_LUA, luaSource } from './registry.js';
import { knowFunctionLibrary } from './script-acl.js';

const TEMPLATE_FILE = 'sweep-stalled-function.lua';
const TEMPLATE = luaSource('sweep-stalled-function');
const BODY_MARKER = '__SWEEP_STALLED__';

export interface SweepFunction {
  readonly library: string;
  readonly name: string;
}

/**
 * Names that carry the run id (hex), within what FUNCTION LOAD accepts: letters, digits, '_'. Here,
 * with the source, so that `clean` finds a kept run's library from its marker's run id.
 */
export function sweepFunctionNames(runId: string): SweepFunction {
  if (!/^[A-Za-z0-9_]+$/.test(runId)) throw new Error(`run id ${JSON.stringify(runId)} cannot name a function`);
  return { library: `emq_race_${runId}`, name: `emq_race_sweep_${runId}` };
}

export function functionLibrarySource(library: string, name: string): string {
  // Function replacements, so that no `$` in the texts is read as a replacement pattern.
  return TEMPLATE.replace('#!lua name=__LIBRARY__', () => `#!lua name=${library}`)
    .replace("redis.register_function('__FUNCTION__'", () => `redis.register_function('${name}'`)
    .replace(`\n${BODY_MARKER}\n`, () => `\n${SWEEP_STALLED_LUA.trimEnd()}\n`);
}

/** Where line `line` of the library came from: the template, or the sweep script put in as its body. */
export function librarySourceLine(line: number): { readonly file: string; readonly line: number } {
  const marker = TEMPLATE.split('\n').indexOf(BODY_MARKER) + 1;
  const bodyLines = SWEEP_STALLED_LUA.trimEnd().split('\n').length;
  if (line < marker) return { file: TEMPLATE_FILE, line };
  if (line < marker + bodyLines) return { file: 'sweep-stalled.lua', line: line - marker + 1 };
  return { file: TEMPLATE_FILE, line: line - bodyLines + 1 };
}

knowFunctionLibrary(functionLibrarySource, librarySourceLine);

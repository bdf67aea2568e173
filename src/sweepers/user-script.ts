/**
 * The script mode's input: the user's sweep script, read from its file and loaded into the
 * server's script cache before anything is seeded, so a script that does not compile stops the
 * run with the server's own message and nothing written.
 */
import { readInputFile } from '../shared/input-file.js';
import { loadScript } from '../lua/registry.js';
import type { Redis } from 'ioredis';
import { describeServerError, usageError } from '../shared/errors.js';

export function readUserScript(path: string): string {
  const source = readInputFile(path, `--script: cannot read ${JSON.stringify(path)}`).toString('utf8');
  if (source.trim() === '') throw usageError(`--script: ${JSON.stringify(path)} is empty`);
  return source;
}

/**
 * Where in a user's script the server's error reply says it failed, and what. The line comes from
 * the `user_script:N:` before a compile or Lua error, or from the trailer of an error raised while
 * running (`script: SHA1, on @user_script:N.`); the words are the rest, without a bare ERR or the
 * compiler's `Error compiling script (new function):`. A reply's own code (WRONGTYPE) stays, since
 * it says what went wrong. The first line only; Redis 7 and Valkey 8 word these alike. Pure.
 */
export function scriptErrorParts(message: string): { readonly words: string; readonly line?: string } {
  let words = (message.split('\n')[0] ?? '').replace(/^ERR\s+/, '').replace(/^Error compiling script \(new function\): /, '');
  let line: string | undefined;
  const trailer = /\s*script: [0-9a-f]{40}, on @user_script:(\d+)\.?$/i.exec(words);
  if (trailer) {
    line = trailer[1];
    words = words.slice(0, trailer.index);
  }
  const at = /^user_script:(\d+): /.exec(words);
  if (at) {
    line ??= at[1];
    words = words.slice(at[0].length);
  }
  return line === undefined ? { words } : { words, line };
}

/** SCRIPT LOAD: the server compiles the script; a compile error is the user's input, so a usage error. */
export async function loadUserScript(redis: Redis, source: string, path: string, where: string): Promise<string> {
  try {
    return await loadScript(redis, source);
  } catch (err) {
    // A compile error, or the script's first line refused (a `#!` line with an engine or an option
    // the server does not take, as `#!lua name=…`, a function library's): the user's input either way.
    if (err instanceof Error && err.name === 'ReplyError' && /compil|shebang/i.test(err.message)) {
      const { words, line } = scriptErrorParts(err.message);
      throw usageError(`--script ${path}: the server could not compile it: ${line === undefined ? words : `line ${line}: ${words}`}`);
    }
    throw describeServerError(err, where);
  }
}

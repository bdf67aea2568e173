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

/** SCRIPT LOAD: the server compiles the script; a compile error is the user's input, so a usage error. */
export async function loadUserScript(redis: Redis, source: string, path: string, where: string): Promise<string> {
  try {
    return await loadScript(redis, source);
  } catch (err) {
    if (err instanceof Error && err.name === 'ReplyError' && /compil/i.test(err.message)) {
      // The server's words for where (`Error compiling script (new function): user_script:2:`) as the script's line.
      const why = (err.message.split('\n')[0] ?? '')
        .replace(/^ERR\s+/, '')
        .replace(/^Error compiling script \(new function\): user_script:(\d+): /, 'line $1: ');
      throw usageError(`--script ${path}: the server could not compile it: ${why}`);
    }
    throw describeServerError(err, where);
  }
}

/**
 * Where `--html` and `--svg` write. The path is checked when the flag is parsed, before any server
 * is touched, and the file is written whole or not at all: into a temporary file beside it, then
 * renamed over the target, so an interrupted or failed write leaves nothing half-written.
 */
import { accessSync, constants, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { EmqError, ExitCode, usageError } from '../errors.js';
import { createRequire } from 'node:module';

/** node:crypto, loaded on first use rather than for `--help` (docs/architecture.md, "How the command starts"). */
const nodeCrypto = (): typeof import('node:crypto') => createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');

/** A commander parser: the path, once its folder exists and is writable and it is no folder itself. */
export const outputFileFlag =
  (flag: string) =>
  (raw: string): string => {
    if (raw.trim() === '') throw usageError(`${flag}: needs a file name`);
    // `--html --json` would otherwise write a file named "--json".
    if (raw.startsWith('-'))
      throw usageError(
        `${flag}: ${JSON.stringify(raw)} looks like an option, not a file name; give the file right after ${flag} (./${raw} for a name that starts with '-')`,
      );
    const path = resolve(raw);
    const folder = dirname(path);
    let folderStat;
    try {
      folderStat = statSync(folder);
    } catch {
      throw usageError(`${flag}: cannot write ${raw}: folder ${folder} does not exist`);
    }
    if (!folderStat.isDirectory()) throw usageError(`${flag}: cannot write ${raw}: ${folder} is not a folder`);
    try {
      accessSync(folder, constants.W_OK);
    } catch {
      throw usageError(`${flag}: cannot write ${raw}: folder ${folder} is not writable`);
    }
    try {
      if (statSync(path).isDirectory()) throw usageError(`${flag}: cannot write ${raw}: it is a folder`);
    } catch (err) {
      if (err instanceof EmqError) throw err;
    }
    return raw;
  };

export function writeWhole(path: string, content: string): void {
  const target = resolve(path);
  const temporary = join(dirname(target), `.${basename(target)}.${nodeCrypto().randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temporary, content, { encoding: 'utf8', flag: 'wx' });
    renameSync(temporary, target);
  } catch (err) {
    rmSync(temporary, { force: true });
    const reason = err instanceof Error && 'code' in err ? String((err as NodeJS.ErrnoException).code) : String(err);
    throw new EmqError(`cannot write ${path}: ${reason}`, ExitCode.usage);
  }
}

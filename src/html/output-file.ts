/**
 * Where `--html`, `--svg` and `--export-test` write. The path is checked when the flag is parsed,
 * and the paths of one command against each other before its action starts (`checkOutputFiles`),
 * both before any server is touched; the file is written whole or not at all: into a temporary
 * file beside it, then renamed over the target (an exported test linked into place, never over a
 * file), so an interrupted or failed write leaves nothing half-written. A symbolic link is written through (its target replaced, the link kept); one that
 * leads nowhere, and a path that is no plain file (a device such as /dev/null, a pipe), are
 * refused: a rename would replace the link or the device itself.
 */
import {
  accessSync,
  constants,
  existsSync,
  fstatSync,
  linkSync,
  lstatSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { EmqError, ExitCode, usageError } from '../shared/errors.js';
import { createRequire } from 'node:module';

/** node:crypto, loaded on first use rather than for `--help` (docs/architecture.md, "How the command starts"). */
const nodeCrypto = (): typeof import('node:crypto') => createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');

/** The parsers made by `outputFileFlag`: how `checkOutputFiles` knows a command's output files among its options. */
const OUTPUT_PARSERS = new WeakSet<(raw: string) => string>();

/**
 * A commander parser: the path, once its folder exists and is writable and it is no folder itself;
 * with `fresh`, once no file is there either (a file the user may have edited is never overwritten).
 */
export function outputFileFlag(flag: string, fresh?: 'fresh'): (raw: string) => string {
  const parser = (raw: string): string => {
    const path = writablePath(flag, raw);
    if (fresh && existsSync(path)) throw usageError(`${flag}: ${raw} exists already; nothing was overwritten (remove it or name another file)`);
    return path;
  };
  OUTPUT_PARSERS.add(parser);
  return parser;
}

/**
 * The path as given, once its folder exists and is writable and it is no folder itself, nor
 * anything but a plain file (a device, a pipe, a socket: the write renames a new file over its
 * target, which would replace /dev/null itself). A symbolic link is judged by where it leads,
 * which is what writeWhole writes.
 */
function writablePath(flag: string, raw: string): string {
  if (raw.trim() === '') throw usageError(`${flag}: needs a file name`);
  // `--html --json` would otherwise write a file named "--json".
  if (raw.startsWith('-'))
    throw usageError(
      `${flag}: ${JSON.stringify(raw)} looks like an option, not a file name; give the file right after ${flag} (./${raw} for a name that starts with '-')`,
    );
  let link: string | undefined;
  try {
    if (lstatSync(raw).isSymbolicLink()) link = readlinkSync(raw);
  } catch {
    // Nothing there yet: a new file.
  }
  // A link that leads nowhere: the write, which makes no file where one stands, would refuse it
  // only after the run.
  if (link !== undefined && !existsSync(raw))
    throw usageError(`${flag}: cannot write ${raw}: it is a symbolic link to ${link}, which does not exist; name the file itself`);
  const path = realPath(raw);
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
  // Permission bits say nothing to root, nor of a folder that takes no file (/proc): a file made
  // there and removed at once does, before the run rather than after it.
  const probe = join(folder, `.${basename(path)}.${process.pid}.probe`);
  try {
    writeFileSync(probe, '', { flag: 'wx' });
    rmSync(probe, { force: true });
  } catch (err) {
    const reason = err instanceof Error && 'code' in err ? String((err as NodeJS.ErrnoException).code) : String(err);
    throw usageError(`${flag}: cannot write ${raw}: folder ${folder} takes no new file (${reason})`);
  }
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) throw usageError(`${flag}: cannot write ${raw}: it is a folder`);
    if (!stat.isFile()) throw usageError(`${flag}: cannot write ${raw}: it is no plain file (a device, a pipe or a socket); name a file`);
    // `--html /dev/stdout > report.txt` leads to the file stdout goes to: the new file renamed over
    // it would take its name, and the report written to the old one would be lost with it.
    for (const [fd, stream] of [
      [1, 'stdout'],
      [2, 'stderr'],
    ] as const) {
      if (sameFile(fd, stat))
        throw usageError(`${flag}: cannot write ${raw}: it is the file ${stream} goes to, whose output it would replace; name a file of its own`);
    }
  } catch (err) {
    if (err instanceof EmqError) throw err;
  }
  return raw;
}

/** Whether the open file `fd` is the plain file `stat` describes. */
function sameFile(fd: number, stat: Stats): boolean {
  try {
    const open = fstatSync(fd);
    return open.isFile() && open.dev === stat.dev && open.ino === stat.ino;
  } catch {
    // No such descriptor (a process started with it closed): nothing to replace.
    return false;
  }
}

/** Where a path leads: its folder's real path (symbolic links followed) and its name, or the file's own real path where it exists. */
function realPath(raw: string): string {
  const path = resolve(raw);
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/**
 * Two output flags of `command` naming one file are refused, before its action starts: the second
 * written would silently replace the first (an exported test lost under the page). Paths are
 * compared where they lead, so `x.html`, `./x.html` and the same file through another folder name
 * are one. Every flag made with `outputFileFlag`, of any command, is checked.
 */
export function checkOutputFiles(command: Command): void {
  const seen = new Map<string, { flag: string; path: string }>();
  for (const option of command.options) {
    const parser = (option as { parseArg?: unknown }).parseArg;
    if (typeof parser !== 'function' || !OUTPUT_PARSERS.has(parser as (raw: string) => string)) continue;
    const value: unknown = command.getOptionValue(option.attributeName());
    if (typeof value !== 'string') continue;
    const flag = option.long ?? option.flags;
    const path = resolve(value);
    const real = realPath(value);
    const first = seen.get(real);
    if (first) {
      const named = first.path === path ? `${first.flag} and ${flag} both name ${path}` : `${first.flag} (${first.path}) and ${flag} (${path}) name one file`;
      throw usageError(`${named}: one would replace the other; give each its own file`);
    }
    seen.set(real, { flag, path });
  }
  // An output over a file the command reads (the user's own script, a certificate) would destroy it.
  for (const option of command.options) {
    const flag = option.long ?? option.flags;
    if (!INPUT_FLAGS.includes(flag)) continue;
    const value: unknown = command.getOptionValue(option.attributeName());
    if (typeof value !== 'string' || value === '') continue;
    const output = seen.get(realPath(value));
    if (output) throw usageError(`${output.flag} names ${output.path}, the file ${flag} reads: writing it would destroy it; give ${output.flag} another file`);
  }
}

/** The flags that name a file the command reads, which no output may name. */
const INPUT_FLAGS = ['--script', '--tls-ca', '--tls-cert', '--tls-key', '--server-bin'];

/**
 * Writes `content` whole to where `path` leads: through a symbolic link, to its target, the link
 * left as it is. With `fresh`, never over a file that is there by then (one made while the run
 * went on): the whole file is linked into place, which fails where a file stands, as a rename
 * would not.
 *
 * The path was checked before the run; a write that fails now (its folder removed or replaced
 * meanwhile, the disk full) loses an output of a run that was made: ExitCode.outputLost, as a
 * report stdout could not take, and nothing half-written left behind.
 */
export function writeWhole(path: string, content: string, fresh?: 'fresh'): void {
  const target = realPath(path);
  const temporary = join(dirname(target), `.${basename(target)}.${nodeCrypto().randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temporary, content, { encoding: 'utf8', flag: 'wx' });
    if (fresh) placeFresh(temporary, target);
    else renameSync(temporary, target);
  } catch (err) {
    // The temporary file goes whatever the failure was; where even that fails (its folder is a
    // file now), there is nothing of it to remove.
    try {
      rmSync(temporary, { force: true });
    } catch {}
    const code = err instanceof Error && 'code' in err ? String((err as NodeJS.ErrnoException).code) : String(err);
    const reason = code === 'EEXIST' ? 'a file was made there while the run went on; nothing was overwritten' : code;
    throw new EmqError(`cannot write ${path}: ${reason}`, ExitCode.outputLost);
  }
}

/** Errors of a file system that makes no hard links (some network and FAT file systems). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/** The whole temporary file put at `target`, where no file stands. */
function placeFresh(temporary: string, target: string): void {
  try {
    linkSync(temporary, target);
  } catch (err) {
    if (!NO_LINKS.has(String((err as NodeJS.ErrnoException).code))) throw err;
    // No hard links here: a rename, once nothing stands there (the check and the rename are two steps).
    if (existsSync(target)) throw Object.assign(new Error('exists'), { code: 'EEXIST' });
    renameSync(temporary, target);
    return;
  }
  rmSync(temporary, { force: true });
}

/**
 * Runs `write`, which writes the file of `flag` at a run's end (writeWhole). A file it could not
 * write (ExitCode.outputLost) comes back as the line that says so, which the command prints once
 * its report is out, ending with ExitCode.outputLost unless it failed otherwise; undefined once
 * written. Any other error is thrown.
 */
export function writeOrLost(flag: string, write: () => void): string | undefined {
  try {
    write();
    return undefined;
  } catch (err) {
    if (!(err instanceof EmqError && err.exitCode === ExitCode.outputLost)) throw err;
    return `${flag}: ${err.message}; the report is printed in full, only that file is lost`;
  }
}

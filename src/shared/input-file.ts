/**
 * The files a command reads whole (`--script`, `--tls-ca`, `--tls-cert`, `--tls-key`): a plain
 * file no larger than such a file ever is. Anything else is refused before it is opened: a device
 * would be read without end (`--script /dev/zero` filled memory until the kernel killed the
 * process), and opening a named pipe with no writer waits past every signal.
 */
import { readFileSync, statSync } from 'node:fs';
import { usageError } from './errors.js';

const MB = 1024 * 1024;

/** The most a sweep script or a PEM file may hold: far above any real one. */
const INPUT_FILE_LIMIT = 4 * MB;

/**
 * `path` read whole, once it is a plain file of at most INPUT_FILE_LIMIT; otherwise a usage error,
 * `lead` (the flag and the file, as the caller names them) followed by why.
 */
export function readInputFile(path: string, lead: string): Buffer {
  const refuse = (reason: string): never => {
    throw usageError(`${lead}: ${reason}`);
  };
  let stat;
  try {
    stat = statSync(path);
  } catch (err) {
    return refuse(whyUnread(err));
  }
  if (stat.isDirectory()) refuse('it is a folder');
  if (!stat.isFile()) refuse('it is no plain file (a device, a pipe or a socket)');
  if (stat.size > INPUT_FILE_LIMIT) refuse(`it holds ${Math.ceil(stat.size / MB)} MB, more than the ${INPUT_FILE_LIMIT / MB} MB such a file ever needs`);
  try {
    return readFileSync(path);
  } catch (err) {
    return refuse(whyUnread(err));
  }
}

function whyUnread(err: unknown): string {
  const code = (err as { code?: string }).code;
  return code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code ? `cannot be read (${code})` : 'cannot be read';
}

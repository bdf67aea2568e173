/**
 * The files a command reads whole (`--script`, `--tls-ca`, `--tls-cert`, `--tls-key`): a plain
 * file no larger than such a file ever is. Anything else is refused before it is opened: a device
 * would be read without end (`--script /dev/zero` filled memory until the kernel killed the
 * process), and opening a named pipe with no writer waits past every signal.
 */
import { readFileSync, statSync } from 'node:fs';

/** Why a file was not read: a plain reason for the caller's one line. */
export class InputFileError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

const MB = 1024 * 1024;

/** `path` read whole, once it is a plain file of at most `limitBytes`; an InputFileError saying why not otherwise. */
export function readInputFile(path: string, limitBytes: number): Buffer {
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) throw new InputFileError('it is a folder');
    if (!stat.isFile()) throw new InputFileError('it is no plain file (a device, a pipe or a socket)');
    if (stat.size > limitBytes)
      throw new InputFileError(`it holds ${Math.ceil(stat.size / MB)} MB, more than the ${limitBytes / MB} MB such a file ever needs`);
    return readFileSync(path);
  } catch (err) {
    if (err instanceof InputFileError) throw err;
    const code = (err as { code?: string }).code;
    throw new InputFileError(
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code ? `cannot be read (${code})` : 'cannot be read',
    );
  }
}

/** The most a sweep script or a PEM file may hold: far above any real one. */
export const INPUT_FILE_LIMIT = 4 * MB;

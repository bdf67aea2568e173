/**
 * Temporary folders for the tests' files (certificates and their private keys, sweep scripts)
 * that leave nothing behind: each is removed when the test file's process exits, however its
 * tests ended, unless a test removed it first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();

process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder under the system's temporary folder, its name starting with `prefix`. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

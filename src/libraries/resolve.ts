/**
 * A library found in the user's project, never in the tool's own folder: resolved from `--lib-from
 * DIR` (the current folder by default) as that project's own `require` would, its version read
 * from its package.json. Not installed there is a usage error naming the install line.
 */
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { usageError } from '../errors.js';
import { LIBRARY_NAMES, type FoundLibrary, type LibraryName } from '../model.js';
import { LIBRARIES } from './table.js';

/** `--lib NAME`: one of the libraries the tool knows, or a usage error listing them. */
export function parseLibraryName(raw: string): LibraryName {
  if (!(LIBRARY_NAMES as readonly string[]).includes(raw)) {
    throw usageError(`--lib: ${JSON.stringify(raw)} is not a library emq-race knows; expected one of ${LIBRARY_NAMES.join(', ')}`);
  }
  return raw as LibraryName;
}

/** The library `name` as installed in the project at `from`, or a usage error saying how to install it. */
export function findLibrary(name: LibraryName, from: string): FoundLibrary {
  const { packageName } = LIBRARIES[name];
  const dir = resolve(from);
  // The file need not exist: it only sets where the search starts, as the project's own code would.
  const require = createRequire(join(dir, 'noop.js'));
  let manifest: string;
  let entry: string;
  try {
    manifest = require.resolve(`${packageName}/package.json`);
    entry = require.resolve(packageName);
  } catch {
    throw usageError(
      `--lib ${name}: ${packageName} is not installed in ${dir}: install it there with npm install ${packageName} (or point --lib-from at the project that has it)`,
    );
  }
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version;
  if (typeof version !== 'string') throw usageError(`--lib ${name}: ${manifest} names no version: is ${packageName} installed whole?`);
  return { name, version, entry };
}

/** A version's numbers (`6.7.0-beta.1` → [6, 7, 0] and a pre-release), or undefined for none. */
function versionParts(version: string): { readonly numbers: [number, number, number]; readonly pre: boolean } | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(\+.*)?$/.exec(version.trim());
  if (!match) return undefined;
  return { numbers: [Number(match[1]), Number(match[2]), Number(match[3])], pre: match[4] !== undefined };
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether `version` lies within the tested range: at or above `from`, below `below`; a pre-release never does. Pure. */
export function inTestedRange(version: string, tested: { readonly from: string; readonly below: string }): boolean {
  const v = versionParts(version);
  const from = versionParts(tested.from);
  const below = versionParts(tested.below);
  if (!v || !from || !below || v.pre) return false;
  return compare(v.numbers, from.numbers) >= 0 && compare(v.numbers, below.numbers) < 0;
}

/** The warning for a version outside the tested range, or undefined within it. */
export function versionWarning(found: FoundLibrary): string | undefined {
  const { tested, packageName } = LIBRARIES[found.name];
  if (inTestedRange(found.version, tested)) return undefined;
  return `warning: ${packageName} ${found.version} is outside the versions emq-race was tested with (>=${tested.from} <${tested.below}); racing it all the same`;
}

/**
 * A library found in the user's project, never in the tool's own folder: resolved from `--lib-from
 * DIR` (the current folder by default) as that project's own `require` would, its version read
 * from its package.json. Not installed there is a usage error naming the install line; installed
 * without what the tool calls, one naming the version and the missing piece.
 */
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { usageError } from '../errors.js';
import { LIBRARY_NAMES, type FoundLibrary, type LibraryName } from '../model.js';
import { LIBRARIES } from './table.js';
import { missingApi } from './missing-api.js';

/** `--lib NAME`: one of the libraries the tool knows, or a usage error listing them. */
export function parseLibraryName(raw: string): LibraryName {
  if (!(LIBRARY_NAMES as readonly string[]).includes(raw)) {
    throw usageError(`--lib: ${JSON.stringify(raw)} is not a library emq-race knows; expected one of ${LIBRARY_NAMES.join(', ')}`);
  }
  return raw as LibraryName;
}

/**
 * The library `name` as installed in the project at `from`: a usage error saying how to install it
 * when it is not there, and one naming its version and the missing piece when the installed
 * package lacks an entry point or a function the tool calls (checked here, before any server
 * starts, on the package as its own `require` loads it).
 */
export function findLibrary(name: LibraryName, from: string): FoundLibrary {
  const { packageName, lacks } = LIBRARIES[name];
  const dir = resolve(from);
  // The file need not exist: it only sets where the search starts, as the project's own code would.
  const require = createRequire(join(dir, 'noop.js'));
  // The package's folder as require's search finds it, whether or not its exports name package.json.
  const manifest = (require.resolve.paths(packageName) ?? []).map((modules) => join(modules, packageName, 'package.json')).find((file) => existsSync(file));
  if (!manifest) {
    throw usageError(
      `--lib ${name}: ${packageName} is not installed in ${dir}: install it there with npm install ${packageName} (or point --lib-from at the project that has it)`,
    );
  }
  const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version;
  if (typeof version !== 'string') throw usageError(`--lib ${name}: ${manifest} names no version: is ${packageName} installed whole?`);
  let entry: string;
  try {
    entry = require.resolve(packageName);
  } catch {
    throw usageError(
      `--lib ${name}: ${packageName} ${version} (at ${dirname(manifest)}) has no entry point require('${packageName}') can load: install it whole`,
    );
  }
  const found: FoundLibrary = { name, version, entry };
  let loaded: unknown;
  try {
    loaded = require(entry);
  } catch (err) {
    // A package only an import can load: its module's loader checks it when a run loads it.
    if ((err as { code?: string }).code === 'ERR_REQUIRE_ESM') return found;
    const why = String((err as Error)?.message ?? err).split('\n')[0];
    throw usageError(`--lib ${name}: ${packageName} ${version} (at ${entry}) does not load: ${why}`);
  }
  const missing = lacks(loaded);
  if (missing) throw missingApi(found, packageName, missing);
  return found;
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

/**
 * A library found in the user's project, never in the tool's own folder: resolved from `--lib-from
 * DIR` (the current folder by default) as that project's own `require` would, its version read
 * from its package.json. Not installed there is a usage error naming the install line; installed
 * without the Redis client it loads (BullMQ 6's optional peer ioredis), one naming the client and
 * its install line; without what the tool calls, one naming the version and the missing piece. A
 * `--lib-from` that is no folder, and a package.json that is not JSON, are usage errors too.
 */
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { usageError } from '../shared/errors.js';
import { shownChoice } from '../shared/text.js';
import { LIBRARY_NAMES, type FoundLibrary, type LibraryName } from '../shared/model.js';
import { LIBRARIES } from './table.js';
import { missingApi } from './missing-api.js';

/** `--lib NAME`: one of the libraries the tool knows, or a usage error listing them. */
export function parseLibraryName(raw: string): LibraryName {
  if (!(LIBRARY_NAMES as readonly string[]).includes(raw)) {
    throw usageError(`--lib: ${shownChoice(raw, LIBRARY_NAMES)} is not a library emq-race knows; expected one of ${LIBRARY_NAMES.join(', ')}`);
  }
  return raw as LibraryName;
}

/**
 * The library `name` as installed in the project at `from`: a usage error saying how to install it
 * when it is not there, and one naming its version and the missing piece when the installed
 * package lacks an entry point or a function the tool calls (checked here, before any server
 * starts, on the package as its own `require` loads it).
 */
export function findLibrary(name: LibraryName, from: string, asked = `--lib ${name}`): FoundLibrary {
  const { packageName, lacks, installWith } = LIBRARIES[name];
  const dir = projectFolder(from, packageName);
  // The file need not exist: it only sets where the search starts, as the project's own code would.
  const require = createRequire(join(dir, 'noop.js'));
  // The package's folder as require's search finds it, whether or not its exports name package.json.
  const manifest = (require.resolve.paths(packageName) ?? []).map((modules) => join(modules, packageName, 'package.json')).find((file) => existsSync(file));
  if (!manifest) {
    throw usageError(
      // With a client it leaves to its user (BullMQ 6's ioredis, an optional peer), which would be the next refusal.
      `${asked}: ${packageName} is not installed in ${dir}: install it there with npm install ${[packageName, ...installWith].join(' ')} (or point --lib-from at the project that has it)`,
    );
  }
  const pkg = readManifest(name, manifest, asked);
  const version = pkg.version;
  if (typeof version !== 'string') throw usageError(`${asked}: ${manifest} names no version: is ${packageName} installed whole?`);
  checkClients(name, asked, packageName, version, manifest, pkg);
  let entry: string;
  try {
    entry = require.resolve(packageName);
  } catch {
    throw usageError(`${asked}: ${packageName} ${version} (at ${dirname(manifest)}) has no entry point require('${packageName}') can load: install it whole`);
  }
  const found: FoundLibrary = { name, asked, version, entry };
  let loaded: unknown;
  try {
    loaded = require(entry);
  } catch (err) {
    // A package only an import can load: its module's loader checks it when a run loads it.
    if ((err as { code?: string }).code === 'ERR_REQUIRE_ESM') return found;
    const why = String((err as Error)?.message ?? err).split('\n')[0];
    throw usageError(`${asked}: ${packageName} ${version} (at ${entry}) does not load: ${why}`);
  }
  const missing = lacks(loaded);
  if (missing) throw missingApi(found, packageName, missing);
  return found;
}

/** `--lib-from`'s folder, absolute: a usage error for an empty path, one that is not there, or a file. */
function projectFolder(from: string, packageName: string): string {
  if (from.trim() === '') {
    throw usageError(
      `--lib-from: an empty path; give the folder of the project that has ${packageName} installed, or leave --lib-from out for the current folder`,
    );
  }
  const dir = resolve(from);
  let folder: boolean;
  try {
    folder = statSync(dir).isDirectory();
  } catch {
    throw usageError(`--lib-from: ${dir} does not exist; give the folder of the project that has ${packageName} installed`);
  }
  if (!folder) throw usageError(`--lib-from: ${dir} is not a folder; give the folder of the project that has ${packageName} installed`);
  return dir;
}

/** What the tool reads of a library's package.json. */
interface Manifest {
  readonly version?: unknown;
  readonly dependencies?: unknown;
  readonly peerDependencies?: unknown;
  readonly optionalDependencies?: unknown;
}

/** The library's package.json, or a usage error naming the file when it cannot be read as JSON. */
function readManifest(name: LibraryName, manifest: string, asked: string): Manifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(manifest, 'utf8'));
  } catch (err) {
    const why = String((err as Error)?.message ?? err).split('\n')[0];
    throw usageError(`${asked}: ${manifest} cannot be read as JSON (${why}): reinstall ${LIBRARIES[name].packageName} there`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw usageError(`${asked}: ${manifest} is not a package.json (no JSON object): reinstall ${LIBRARIES[name].packageName} there`);
  }
  return parsed as Manifest;
}

/** Whether the package.json names `dependency` among its dependencies, peer or optional ones. */
function declares(pkg: Manifest, dependency: string): boolean {
  return [pkg.dependencies, pkg.peerDependencies, pkg.optionalDependencies].some(
    (list) => typeof list === 'object' && list !== null && Object.hasOwn(list, dependency),
  );
}

/**
 * The Redis client the library loads (its `clients` in table.ts), where the library's own
 * `require` looks for it: from its real folder (Node follows a linked package to where it lies),
 * up through every node_modules above. A client the package declares (BullMQ 6 only as an optional
 * peer, which `npm install bullmq` leaves out) and cannot load is a usage error naming it and the
 * line that installs it, in the folder whose node_modules holds the library.
 */
function checkClients(name: LibraryName, asked: string, packageName: string, version: string, manifest: string, pkg: Manifest): void {
  const folder = dirname(manifest);
  let real: string;
  try {
    real = realpathSync(folder);
  } catch {
    real = folder;
  }
  const own = createRequire(join(real, 'package.json'));
  for (const client of LIBRARIES[name].clients) {
    if (!declares(pkg, client)) continue;
    const found = (own.resolve.paths(client) ?? []).some((modules) => existsSync(join(modules, client, 'package.json')));
    if (found) continue;
    throw usageError(
      `${asked}: ${packageName} ${version} needs ${client}, which ${packageName} cannot load from ${folder}: install it with npm install ${client} in ${installFolder(folder)}`,
    );
  }
}

/** The project whose node_modules holds the package folder `folder` (…/app/node_modules/bullmq → …/app). */
function installFolder(folder: string): string {
  let at = dirname(folder);
  // A scoped package lies one folder deeper (node_modules/@scope/name).
  if (basename(at).startsWith('@')) at = dirname(at);
  return basename(at) === 'node_modules' ? dirname(at) : at;
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

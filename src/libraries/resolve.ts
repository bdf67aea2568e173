/**
 * A library found in the user's project, never in the tool's own folder: resolved from `--lib-from
 * DIR` (the current folder by default) as that project's own `require` would, its version read
 * from its package.json. Not installed there is a usage error naming the install line; installed
 * without the Redis client it loads (BullMQ 6's optional peer ioredis), or beside one outside the
 * range it declares, one naming the client and its install line; without what the tool calls, one
 * naming the version and the missing piece. A `--lib-from` that is no folder, and a package.json
 * that is not JSON, are usage errors too.
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

/** The range the package.json gives `dependency` (a dependency, a peer or an optional one), or undefined where it names none. */
function declaredRange(pkg: Manifest, dependency: string): string | undefined {
  for (const list of [pkg.dependencies, pkg.peerDependencies, pkg.optionalDependencies]) {
    if (typeof list === 'object' && list !== null && Object.hasOwn(list, dependency)) {
      const range = (list as Record<string, unknown>)[dependency];
      return typeof range === 'string' ? range.trim() : '';
    }
  }
  return undefined;
}

/**
 * The Redis client the library loads (its `clients` in table.ts), where the library's own
 * `require` looks for it: from its real folder (Node follows a linked package to where it lies),
 * up through every node_modules above. A client the package declares and cannot load is a usage
 * error naming it and the line that installs it; so is one it would load outside the range it
 * declares (Bee-Queue 2 speaks node_redis 3's API, which a redis 4 or later no longer has: its
 * queue never became ready, and the run waited for ever). A peer the library leaves to its user (BullMQ 6's ioredis) is
 * installed by name, beside the library; a dependency of its own comes with the library
 * reinstalled, which npm puts beside it where the project holds another major of it.
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
  const peer = LIBRARIES[name].installWith;
  for (const client of LIBRARIES[name].clients) {
    const range = declaredRange(pkg, client);
    if (range === undefined) continue;
    const needs = `${packageName} ${version} needs ${client}${range ? ` ${range}` : ''}`;
    // A missing peer is installed by its name (its latest, which a range it does not meet refuses
    // next); one of the wrong version by the range, quoted for the shell.
    const fix = (what: 'it' | 'one it takes'): string =>
      peer.includes(client)
        ? `install ${what} with npm install ${what === 'it' ? client : `'${client}@${range}'`} in ${installFolder(real)}`
        : `reinstall ${packageName} with npm install ${packageName}@${version} in ${installFolder(real)}, which puts the ${client} it depends on beside it`;
    const clientFolder = (own.resolve.paths(client) ?? []).map((modules) => join(modules, client)).find((dir) => existsSync(join(dir, 'package.json')));
    if (clientFolder === undefined) throw usageError(`${asked}: ${needs}, which ${packageName} cannot load from ${real}: ${fix('it')}`);
    const loaded = clientVersion(clientFolder);
    if (loaded !== undefined && range && !satisfies(loaded, range)) {
      throw usageError(`${asked}: ${needs}, and would load ${client} ${loaded} from ${clientFolder}: ${fix('one it takes')}`);
    }
  }
}

/** The version a client's package.json gives, or undefined where it cannot be read. */
function clientVersion(dir: string): string | undefined {
  try {
    const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `version` lies in `range`, for the forms a library's package.json gives its client
 * (`^3.1.2`, `~5.10.1`, `>=5.0.0`, `5.x`, `5.10.1`); any other form (`||`, a hyphen range, a tag)
 * is taken as met: the check only refuses what it can read. Pure.
 */
export function satisfies(version: string, range: string): boolean {
  const v = versionParts(version);
  if (!v) return true;
  const xRange = /^(\d+)(?:\.x|\.\*)?(?:\.x|\.\*)?$/i.exec(range);
  if (xRange) return v.numbers[0] === Number(xRange[1]);
  const simple = /^(\^|~|>=|=)?\s*(v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(range);
  const base = simple ? versionParts(simple[2] ?? '') : undefined;
  if (!simple || !base) return true;
  const [major, minor, patch] = base.numbers;
  const atLeast = compare(v.numbers, base.numbers) >= 0;
  switch (simple[1]) {
    case '>=':
      return atLeast;
    case '^':
      // ^0.B.C keeps the minor as well, as npm reads it.
      return atLeast && (major > 0 ? v.numbers[0] === major : v.numbers[0] === 0 && v.numbers[1] === minor && (minor > 0 || v.numbers[2] === patch));
    case '~':
      return atLeast && v.numbers[0] === major && v.numbers[1] === minor;
    default:
      return compare(v.numbers, base.numbers) === 0;
  }
}

/**
 * The project to install in for the package folder `folder`: the one whose node_modules holds it
 * (…/app/node_modules/bullmq → …/app), or, for a package outside any node_modules (a linked
 * checkout), that package's own folder.
 */
function installFolder(folder: string): string {
  let at = dirname(folder);
  // A scoped package lies one folder deeper (node_modules/@scope/name).
  if (basename(at).startsWith('@')) at = dirname(at);
  return basename(at) === 'node_modules' ? dirname(at) : folder;
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

/**
 * Removing what a kept or crashed run left: only queues whose owner marker emq-race wrote, only
 * the keys such a run creates, by name (UNLINK), from the job count in the marker, and only under
 * a marker that says the queue was confirmed empty when the run claimed it (`owned`). There, a job
 * hash goes only if it carries the run's id, and the lists and sets only while the marker still
 * holds the value read (unlink-under-marker.lua). An unconfirmed (`claiming`) or older (`legacy`)
 * marker proves nothing about the keys beside it: only the marker itself is removed. A queue whose
 * run still beats its heartbeat is refused. Whatever stays under the prefix is reported. A kept
 * `--mode function` run's library, named from the run's id, goes with its queue.
 */
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { usageError } from '../shared/errors.js';
import { callUnlinkRunJobs, callUnlinkUnderMarker } from '../lua/bulk-scripts.js';
import { deleteFunctionLibrary, listFunctionLibraries } from '../lua/function-calls.js';
import { sweepFunctionNames } from '../lua/function-source.js';
import { QUEUE_NAME, queueKeys, structureKeys, type QueueKeys } from './keys.js';
import { findQueueKeys, HEARTBEAT_TTL_MS, releaseClaim } from './owner-claim.js';
import { unlinkLibraryKeys } from './cleanup.js';
import { jobKeyChunks } from './seed.js';
import { inCalls } from '../server/slices.js';
import { scanPages } from '../server/scan.js';
import { parseOwnerValue, printableHost, printableRun, stillRunning, type OwnerMarker } from './owner-marker.js';
import { plural } from '../shared/text.js';

export interface OwnedQueue {
  readonly queue: string;
  readonly marker: OwnerMarker;
  /** The marker's value as read: deleted only if it still holds exactly this. */
  readonly value: string;
}

export interface CleanResult {
  readonly queue: string;
  readonly deleted: number;
  /** Keys under the queue's prefix left in place (up to FOREIGN_SHOWN); null where the user may not SCAN for them. */
  readonly foreign: readonly string[] | null;
  /** The marker was not `owned`: only the marker itself was removed. */
  readonly markerOnly: boolean;
  /** With `markerOnly`: the marker was gone by the time clean came to it, and why it may have gone, in words. */
  readonly markerGone?: string;
  /**
   * A signal stopped the clean-up before its marker went, `unbegun` before its first deletion or
   * `partly` after it: the marker stays, and clean run again removes the rest (`deleted` then
   * counts only the replies that came before the stop, and `foreign` is not looked for).
   */
  readonly stopped?: 'unbegun' | 'partly';
  /**
   * The run's function library (a kept `--mode function` run's), where the server held one:
   * `removed`, or `refused` when this user may not delete it.
   */
  readonly library?: { readonly name: string; readonly removed: boolean };
}

/** How many of the keys left behind a clean names. */
export const FOREIGN_SHOWN = 10;
/** Job keys per unlink-run-jobs.lua call. */
const JOB_CHUNK = 1000;

const OWNER_KEY = /^emq:\{([^{}]*)\}:owner$/;

/**
 * Every queue on the server whose owner marker emq-race wrote, found with SCAN; `signal` stops it
 * between calls. The queues whose marker this user may not read (outside its key patterns) go into
 * `unreadable`: not cleaned, but not passed over in silence either.
 */
export async function findOwnedQueues(redis: Redis, signal?: AbortSignal, unreadable: string[] = []): Promise<OwnedQueue[]> {
  const owned: OwnedQueue[] = [];
  const seen = new Set<string>();
  for await (const batch of scanPages('SCAN', (cursor) => redis.scan(cursor, 'MATCH', 'emq:{*}:owner', 'COUNT', 1000), { signal })) {
    for (const key of batch) {
      const queue = OWNER_KEY.exec(key)?.[1];
      if (queue === undefined || !QUEUE_NAME.test(queue) || seen.has(queue)) continue;
      seen.add(queue);
      const value = await readMarker(redis, key);
      if (value === undefined) {
        unreadable.push(queue);
        continue;
      }
      const marker = parseOwnerValue(value);
      if (marker && value !== null) owned.push({ queue, marker, value });
    }
  }
  return owned.sort((a, b) => a.queue.localeCompare(b.queue));
}

/**
 * A marker the ACL user may not read (its keys outside the user's patterns) is not one it may
 * clean: undefined, skipped and named. A user who may not run GET at all is refused: it would find none.
 */
async function readMarker(redis: Redis, key: string): Promise<string | null | undefined> {
  try {
    return await markerText(redis, key);
  } catch (err) {
    if (aclRefusal(err) === 'key') return undefined;
    throw err;
  }
}

/**
 * The text at an owner marker's name, or null where there is none. Another program's key of
 * another type there (a hash, a list) is no marker emq-race wrote: it reads as text no marker
 * has, rather than as a WRONGTYPE error that would stop `clean --all` before the other queues.
 */
async function markerText(redis: Redis, key: string): Promise<string | null> {
  try {
    return await redis.get(key);
  } catch (err) {
    if (/^WRONGTYPE/.test(String((err as Error)?.message))) return NOT_A_STRING;
    throw err;
  }
}

/** What markerText reads at a key that holds no string: not JSON, so parseOwnerValue takes it for no marker. */
const NOT_A_STRING = '(not a string)';

/** What an ACL refused: the command itself (`no permissions to run the 'scan' command`) or a key; undefined for any other error. */
function aclRefusal(err: unknown): 'command' | 'key' | undefined {
  const message = String((err as Error)?.message);
  if (!/^NOPERM/.test(message)) return undefined;
  return /permissions to run/i.test(message) ? 'command' : 'key';
}

/** The queue's marker if emq-race wrote it; a usage error (nothing touched) otherwise. */
export async function ownedQueue(redis: Redis, queue: string): Promise<OwnedQueue> {
  const keys = queueKeys(queue);
  const value = await markerText(redis, keys.owner);
  if (value === null) {
    const other = await findQueueKeys(redis, keys, 1);
    if (other.length > 0) throw usageError(`queue ${queue} has keys (${other[0]}) but no owner marker: not emq-race's to delete; nothing removed`);
    // A run kept in another database (its kept: line names it) is found only with that database in the URL.
    const db = redis.options.db ?? 0;
    throw usageError(
      `queue ${queue} not found: no ${keys.owner} in database ${db} of this server (a queue kept in another database is cleaned with that database in the URL)`,
    );
  }
  const marker = parseOwnerValue(value);
  if (!marker) throw usageError(`${keys.owner} was not written by emq-race: leaving queue ${queue} alone; nothing removed`);
  return { queue, marker, value };
}

/** Refuses a queue whose run is alive: its heartbeat stands (from any host), or its process lives here. */
async function refuseLiveRun(redis: Redis, keys: QueueKeys, owned: OwnedQueue): Promise<void> {
  if ((await redis.get(keys.heartbeat)) !== null) {
    const m = owned.marker;
    // A run of this machine whose process is gone: its heartbeat outlives it by up to its lifetime.
    if (m.host === hostname() && m.pid > 0 && !stillRunning(m)) {
      throw usageError(
        `queue ${owned.queue} belongs to a run that has ended (pid ${m.pid} on ${m.host} is no longer running), but its heartbeat ${keys.heartbeat} is still fresh: nothing removed; clean takes the queue once the heartbeat lapses, within ${HEARTBEAT_TTL_MS / 1000} s`,
      );
    }
    const host = printableHost(m);
    const who = host ? ` (pid ${m.pid} on ${host})` : '';
    throw usageError(
      `queue ${owned.queue} is in use by a live run${who}: its heartbeat ${keys.heartbeat} is fresh; nothing removed (a run that ended without removing it stops counting as live within ${HEARTBEAT_TTL_MS / 1000} s)`,
    );
  }
  if (stillRunning(owned.marker)) {
    throw usageError(`queue ${owned.queue} is in use by a run still going on this machine (pid ${owned.marker.pid}); nothing removed`);
  }
}

/**
 * Removes one owned queue's keys, the marker last. `signal` stops it between calls: what was sent
 * runs, nothing more is, and the marker stays so that the queue can still be cleaned (`stopped`).
 */
export async function cleanQueue(redis: Redis, owned: OwnedQueue, signal?: AbortSignal): Promise<CleanResult> {
  const keys = queueKeys(owned.queue);
  await refuseLiveRun(redis, keys, owned);
  let deleted = 0;
  const markerOnly = owned.marker.phase !== 'owned';
  let begun = false;
  const stopped = (): CleanResult => ({ queue: owned.queue, deleted, foreign: [], markerOnly, stopped: begun ? 'partly' : 'unbegun' });
  if (signal?.aborted) return stopped();
  if (!markerOnly) {
    begun = true;
    // The queue was empty when this run claimed it: its lists and sets are its own. Job hashes
    // go only if they carry its id; the marker last, and only if it is still the one read.
    // Every deletion of keys that carry no run id is made only while the marker still holds the
    // value read: the queue may have been cleaned since it was listed and its name taken by
    // another run, or by another program, whose lists are not this run's to delete.
    const unlinkUnderMarker = async (batch: readonly string[]): Promise<number> => {
      const count = await callUnlinkUnderMarker(redis, keys.owner, owned.value, batch);
      if (count < 0) throw changedSinceRead(owned.queue, deleted);
      return count;
    };
    try {
      deleted += await unlinkUnderMarker(structureKeys(keys));
      // A library run's keys are the library's namespace in the queue, named by the library.
      if (owned.marker.library) deleted += await unlinkLibraryKeys(redis, keys, owned.marker.library, signal, unlinkUnderMarker);
      // In the order seeding created them, several chunks in flight, as a run's own clean-up goes.
      await inCalls(
        jobKeyChunks(keys, owned.marker.jobs, JOB_CHUNK),
        signal,
        (chunk) => callUnlinkRunJobs(redis, chunk, owned.marker.run),
        (count) => {
          deleted += count;
        },
      );
    } catch (err) {
      if (signal?.aborted) return stopped();
      throw err;
    }
  }
  if (signal?.aborted) return stopped();
  const library = markerOnly ? undefined : await removeRunLibrary(redis, owned.marker.run);
  const released = await releaseClaim(redis, keys, owned.value);
  // A marker alone to remove, and it is no longer the one read: gone (an unconfirmed claim
  // expires by itself, or another clean took it first), or another run's claim since.
  if (markerOnly && released === 0) {
    if ((await redis.get(keys.owner)) !== null) throw changedSinceRead(owned.queue, 0);
    // Only an unconfirmed claim expires by itself; an older emq-race's marker has no expiry.
    const why =
      owned.marker.phase === 'claiming' ? 'an unconfirmed claim expires by itself within 30 s, or another clean removed it' : 'another clean removed it';
    return { queue: owned.queue, deleted: 0, foreign: [], markerOnly, markerGone: why };
  }
  deleted += released;
  // The queue is gone by now: a user without SCAN hears that, and that the look for others' keys was not made.
  const foreign = await findQueueKeys(redis, keys, FOREIGN_SHOWN).catch((err: unknown) => {
    if (aclRefusal(err) === 'command') return null;
    throw err;
  });
  return { queue: owned.queue, deleted, foreign, markerOnly, ...(library ? { library } : {}) };
}

/**
 * A queue whose owner marker changed between clean's reading of it and a deletion: removed by
 * another clean meanwhile, or claimed since by another run. What is there now is left alone.
 */
function changedSinceRead(queue: string, deleted: number): Error {
  const done = deleted > 0 ? `; ${plural(deleted, 'key')} removed before it changed` : '; nothing removed';
  return usageError(`queue ${queue} changed after clean read its owner marker (removed meanwhile, or claimed since by another run): left as it is now${done}`);
}

/**
 * The function library a run of id `run` loaded (`--mode function` names it from the run's id,
 * and leaves it with `--keep`), deleted if the server holds it. Looked for first, so that a user
 * who may not list or delete functions, or a server without them, cleans the queue as before.
 */
async function removeRunLibrary(redis: Redis, run: string): Promise<CleanResult['library']> {
  if (!/^[A-Za-z0-9_]+$/.test(run)) return undefined;
  const { library } = sweepFunctionNames(run);
  let found: unknown[];
  try {
    found = await listFunctionLibraries(redis, library);
  } catch (err) {
    if (/^NOPERM|unknown command|unknown subcommand/i.test(String((err as Error)?.message))) return undefined;
    throw err;
  }
  if (found.length === 0) return undefined;
  try {
    await deleteFunctionLibrary(redis, library);
    return { name: library, removed: true };
  } catch (err) {
    if (/^NOPERM/.test(String((err as Error)?.message))) return { name: library, removed: false };
    throw err;
  }
}

/** What a marker's phase lets clean do, in words. */
const PHASE_NOTE: Record<OwnerMarker['phase'], string> = {
  owned: '',
  claiming: ' [unconfirmed claim: only its marker is removed]',
  legacy: ' [marker of an older emq-race, written before the queue was checked: only the marker is removed]',
};

export function describeOwned(owned: OwnedQueue): string {
  const m = owned.marker;
  const when = m.started > 0 ? new Date(m.started).toISOString() : 'unknown time';
  const host = printableHost(m);
  const run = printableRun(m) ?? "(an id not of the tool's making)";
  return `${owned.queue}: ${plural(m.jobs, 'job')} planned by run ${run}, started ${when}${host ? ` by pid ${m.pid} on ${host}` : ''}${PHASE_NOTE[m.phase]}`;
}

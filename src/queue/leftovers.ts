/**
 * Removing what a kept or crashed run left: only queues whose owner marker emq-race wrote, and
 * only the keys such a run creates, by name (UNLINK), from the job count in the marker. Keys under
 * the prefix that the tool would not have created are left alone and reported.
 */
import type { Redis } from 'ioredis';
import { findQueueKeys, releaseClaim } from './owner-claim.js';
import { deleteRunKeys } from './cleanup.js';
import { usageError } from '../errors.js';
import { QUEUE_NAME, queueKeys } from './keys.js';
import { parseOwnerValue, type OwnerMarker } from './owner-marker.js';
import { hostname } from 'node:os';
import { plural } from '../text.js';

export interface OwnedQueue {
  readonly queue: string;
  readonly marker: OwnerMarker;
  /** The marker's value as read: deleted only if it still holds exactly this. */
  readonly value: string;
}

export interface CleanResult {
  readonly queue: string;
  readonly deleted: number;
  /** Keys under the queue's prefix that a run does not create, left in place. */
  readonly foreign: readonly string[];
}

const OWNER_KEY = /^emq:\{([^{}]*)\}:owner$/;

/** Every queue on the server whose owner marker emq-race wrote, found with SCAN. */
export async function findOwnedQueues(redis: Redis): Promise<OwnedQueue[]> {
  const owned: OwnedQueue[] = [];
  const seen = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', 'emq:{*}:owner', 'COUNT', 1000);
    cursor = next;
    for (const key of batch) {
      const queue = OWNER_KEY.exec(key)?.[1];
      if (queue === undefined || !QUEUE_NAME.test(queue) || seen.has(queue)) continue;
      seen.add(queue);
      const value = await readMarker(redis, key);
      const marker = parseOwnerValue(value);
      if (marker && value !== null) owned.push({ queue, marker, value });
    }
  } while (cursor !== '0');
  return owned.sort((a, b) => a.queue.localeCompare(b.queue));
}

/** A marker the ACL user may not read is not one it may clean: skipped, not an error. */
async function readMarker(redis: Redis, key: string): Promise<string | null> {
  try {
    return await redis.get(key);
  } catch (err) {
    if (/^NOPERM/.test(String((err as Error)?.message))) return null;
    throw err;
  }
}

/** The queue's marker if emq-race wrote it; a usage error (nothing touched) otherwise. */
export async function ownedQueue(redis: Redis, queue: string): Promise<OwnedQueue> {
  const keys = queueKeys(queue);
  const value = await redis.get(keys.owner);
  if (value === null) {
    const other = await findQueueKeys(redis, keys, 1);
    if (other.length > 0) throw usageError(`queue ${queue} has keys (${other[0]}) but no owner marker: not emq-race's to delete; nothing removed`);
    throw usageError(`queue ${queue} not found: no ${keys.owner} on this server`);
  }
  const marker = parseOwnerValue(value);
  if (!marker) throw usageError(`${keys.owner} was not written by emq-race: leaving queue ${queue} alone; nothing removed`);
  return { queue, marker, value };
}

/** A run on this machine whose process still lives: its keys are in use. */
export function stillRunning(marker: OwnerMarker, host = hostname()): boolean {
  if (marker.host !== host || !(marker.pid > 0) || marker.pid === process.pid) return false;
  try {
    process.kill(marker.pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}

export async function cleanQueue(redis: Redis, owned: OwnedQueue): Promise<CleanResult> {
  if (stillRunning(owned.marker)) {
    throw usageError(`queue ${owned.queue} is in use by a run still going on this machine (pid ${owned.marker.pid}); nothing removed`);
  }
  const keys = queueKeys(owned.queue);
  // Everything but the marker, then the marker only if it is still the one read.
  let deleted = await deleteRunKeys(redis, keys, owned.marker.jobs, undefined, keys.owner);
  deleted += await releaseClaim(redis, keys, owned.value);
  const foreign = await findQueueKeys(redis, keys, 10);
  return { queue: owned.queue, deleted, foreign };
}

export function describeOwned(owned: OwnedQueue): string {
  const m = owned.marker;
  const when = m.started > 0 ? new Date(m.started).toISOString() : 'unknown time';
  return `${owned.queue}: ${plural(m.jobs, 'job')}, run ${m.run}, started ${when}${m.host ? ` by pid ${m.pid} on ${m.host}` : ''}`;
}

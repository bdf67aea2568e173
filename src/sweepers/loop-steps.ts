/**
 * The round-trip loop's steps, one function each, so that the free-running loop and the
 * step-by-step replay run exactly the same commands. Every call to `exec` is its own awaited round
 * trip: the application's state lives between them, and that gap is the race.
 *
 * The first five are the source page's loop, line for line and in its order: detect
 * (ZRANGEBYSCORE), probe (ZSCORE), move (ZREM, then the push to pending), read (HGET stalled),
 * write (HSET stalled n+1). The page's loop has no dead letter; `deadLetter` is this tool's
 * extension, written the way an app in that order would add one: after the write, a job whose
 * count reached max-stalled is taken back out of pending and put in dead, each command its own
 * round trip.
 */
import type { QueueKeys } from '../queue/keys.js';
import { pushArgs } from './pending.js';
import type { Destination } from './move-log.js';
import type { Exec } from './sweeper.js';
import type { PendingKind } from '../shared/model.js';

/** The page's steps, in the page's order. */
export const LOOP_STEPS = ['detect', 'probe', 'move', 'read', 'write'] as const;
export type LoopStep = (typeof LOOP_STEPS)[number];

/** The extension's step: only for a job whose count reached max-stalled at the write. */
export const DEAD_LETTER_STEP = 'dead-letter';

/** detect: the ids whose lease deadline is at or before `nowMs`, at most `batch` of them. */
export async function detect(exec: Exec, keys: QueueKeys, nowMs: number, batch: number): Promise<string[]> {
  return (await exec('ZRANGEBYSCORE', keys.active, '-inf', nowMs, 'LIMIT', 0, batch)) as string[];
}

/** probe: is the lease still expired? A nil or future score means someone else already has it. */
export async function probe(exec: Exec, keys: QueueKeys, id: string, nowMs: number): Promise<boolean> {
  const score = (await exec('ZSCORE', keys.active, id)) as string | null;
  return score !== null && Number(score) <= nowMs;
}

/**
 * move: ZREM (its result ignored, as the page's loop does), then the push onto pending. `afterRemove`
 * sees the ZREM's reply before the push, for the crash fault.
 */
export async function move(exec: Exec, keys: QueueKeys, id: string, pending: PendingKind = 'list', afterRemove?: (removed: number) => void): Promise<void> {
  const removed = await exec('ZREM', keys.active, id);
  afterRemove?.(Number(removed));
  await exec(...pushArgs(keys, pending, id));
}

/** read: the stall counter as this sweep sees it now, to be written back plus one. */
export async function read(exec: Exec, keys: QueueKeys, id: string): Promise<number> {
  const value = (await exec('HGET', keys.job(id), 'stalled')) as string | null;
  return value === null ? 0 : Number(value);
}

/** write: the counter the sweep read, plus one, and the state that matches the push it made. */
export async function write(exec: Exec, keys: QueueKeys, id: string, stalledRead: number): Promise<void> {
  await exec('HSET', keys.job(id), 'stalled', stalledRead + 1, 'state', 'pending');
}

/** Does the count this sweep wrote (what it read, plus one) send the job to dead? */
export function reachesDeadLetter(stalledRead: number, maxStalled: number): boolean {
  return stalledRead + 1 >= maxStalled;
}

export function destinationFor(stalledRead: number, maxStalled: number): Exclude<Destination, 'unknown'> {
  return reachesDeadLetter(stalledRead, maxStalled) ? 'dead' : 'pending';
}

/**
 * dead-letter (the extension): one entry of the job out of pending (LREM 1, or ZREM from a sorted
 * set), the job into dead, its state set to dead.
 */
export async function deadLetter(exec: Exec, keys: QueueKeys, id: string, pending: PendingKind = 'list'): Promise<void> {
  if (pending === 'zset') await exec('ZREM', keys.pending, id);
  else await exec('LREM', keys.pending, 1, id);
  await exec('ZADD', keys.dead, 0, id);
  await exec('HSET', keys.job(id), 'state', 'dead');
}

/** Into dead, or onto pending (RPUSH, or ZADD for a sorted set): the claim strategy's one push. */
export async function push(
  exec: Exec,
  keys: QueueKeys,
  id: string,
  destination: Exclude<Destination, 'unknown'>,
  pending: PendingKind = 'list',
): Promise<void> {
  if (destination === 'dead') await exec('ZADD', keys.dead, 0, id);
  else await exec(...pushArgs(keys, pending, id));
}

/**
 * The round-trip loop's five steps, one function each, so that the free-running loop and the
 * step-by-step replay run exactly the same commands. Every call to `exec` is its own awaited round
 * trip: the application's state lives between them, and that gap is the race.
 */
import type { QueueKeys } from '../queue/keys.js';
import type { Destination } from './move-log.js';
import { pushArgs } from './pending.js';
import type { Exec } from './sweeper.js';
import type { PendingKind } from '../model.js';

export const LOOP_STEPS = ['detect', 'probe', 'read', 'move', 'write'] as const;
export type LoopStep = (typeof LOOP_STEPS)[number];

/** detect: the ids whose lease deadline is at or before `nowMs`, at most `batch` of them. */
export async function detect(exec: Exec, keys: QueueKeys, nowMs: number, batch: number): Promise<string[]> {
  return (await exec('ZRANGEBYSCORE', keys.active, '-inf', nowMs, 'LIMIT', 0, batch)) as string[];
}

/** probe: is the lease still expired? A nil or future score means someone else already has it. */
export async function probe(exec: Exec, keys: QueueKeys, id: string, nowMs: number): Promise<boolean> {
  const score = (await exec('ZSCORE', keys.active, id)) as string | null;
  return score !== null && Number(score) <= nowMs;
}

/** read: the stall counter as this sweep sees it now, to be written back plus one later. */
export async function read(exec: Exec, keys: QueueKeys, id: string): Promise<number> {
  const value = (await exec('HGET', keys.job(id), 'stalled')) as string | null;
  return value === null ? 0 : Number(value);
}

export function destinationFor(stalledRead: number, maxStalled: number): Exclude<Destination, 'unknown'> {
  return stalledRead + 1 >= maxStalled ? 'dead' : 'pending';
}

/**
 * move: ZREM (its result ignored, as the naive loop does), then the push. `afterRemove` sees the
 * ZREM's reply before the push, for the crash fault.
 */
export async function move(
  exec: Exec,
  keys: QueueKeys,
  id: string,
  destination: Exclude<Destination, 'unknown'>,
  pending: PendingKind = 'list',
  afterRemove?: (removed: number) => void,
): Promise<void> {
  const removed = await exec('ZREM', keys.active, id);
  afterRemove?.(Number(removed));
  await push(exec, keys, id, destination, pending);
}

/** The second half of a move: into dead, or onto pending (RPUSH, or ZADD for a sorted set). */
export async function push(exec: Exec, keys: QueueKeys, id: string, destination: Exclude<Destination, 'unknown'>, pending: PendingKind = 'list'): Promise<void> {
  if (destination === 'dead') await exec('ZADD', keys.dead, 0, id);
  else await exec(...pushArgs(keys, pending, id));
}

/** write: the counter the sweep read, plus one, and the state that matches where it moved the job. */
export async function write(exec: Exec, keys: QueueKeys, id: string, stalledRead: number, destination: Exclude<Destination, 'unknown'>): Promise<void> {
  await exec('HSET', keys.job(id), 'stalled', stalledRead + 1);
  await exec('HSET', keys.job(id), 'state', destination);
}

/**
 * BullMQ's stalled-job recovery (its moveStalledJobsToWait script) ported to the application: the
 * same commands in the same order, each a round trip of its own, as a team would write it that
 * moved the script's logic into its code. Two ports:
 *
 *   naive    goes on after `LREM active 1 id` whatever LREM answered: every caller that listed the
 *            job in `stalled` counts it (HINCRBY stc) and pushes it onto `wait`;
 *   guarded  acts on the removal's reply: only the caller whose LREM removed the job (1) counts and
 *            pushes it, the others leave it.
 *
 * The script's steps, in order: the `stalled-check` gate (EXISTS, then SET PX the check interval),
 * the events stream trimmed, SMEMBERS `stalled` then DEL it, and for each member whose lock is gone
 * LREM it from `active`, HINCRBY its `stc`, mark it to fail (`defa`) past maxStalledCount, RPUSH
 * it onto `wait` with the marker and the `waiting` and `stalled` events; then every job still in
 * `active` is marked into `stalled` for the next check.
 */
import type { BullmqKeys } from './keys.js';

/** Sends one command and resolves to its reply: each call is one round trip. */
export type Exec = (command: string, ...args: (string | number)[]) => Promise<unknown>;

export interface PortArgs {
  /** BullMQ's maxStalledCount: a job whose `stc` goes above it is marked to fail. */
  readonly maxStalledCount: number;
  /** The gate's lifetime, BullMQ's stalledInterval (ms). */
  readonly maxCheckTime: number;
  /** What the caller's clock says now (ms), as BullMQ passes Date.now(). */
  readonly now: number;
}

/** BullMQ's reason for a job stalled too often, word for word. */
const FAILED_REASON = 'job stalled more than allowable limit';
/** The script's SADD batch. */
const MARK_BATCH = 7000;

/**
 * Where a check's callers may be made to meet (PhaseBarrier): `gate` once EXISTS found the gate
 * open, before the caller's SET closes it; `delete` once SMEMBERS has answered what `stalled`
 * holds, before the caller's DEL empties it.
 */
export const MEETING_POINTS = ['gate', 'delete'] as const;
export type MeetingPoint = (typeof MEETING_POINTS)[number];

/**
 * One check, as round trips: resolves to the ids this caller pushed onto `wait`, in order. `meet`,
 * when given, is awaited at each meeting point the caller reaches; it sends nothing.
 */
export async function portedStalledCheck(
  exec: Exec,
  keys: BullmqKeys,
  args: PortArgs,
  guarded: boolean,
  meet?: (at: MeetingPoint) => Promise<void>,
): Promise<string[]> {
  if (Number(await exec('EXISTS', keys.stalledCheck)) === 1) return [];
  await meet?.('gate');
  await exec('SET', keys.stalledCheck, args.now, 'PX', args.maxCheckTime);
  await trimEvents(exec, keys);
  const stalling = (await exec('SMEMBERS', keys.stalled)) as string[];
  const moved: string[] = [];
  if (stalling.length > 0) {
    await meet?.('delete');
    await exec('DEL', keys.stalled);
    for (const jobId of stalling) {
      // A delay marker of BullMQ before v5 in the list: removed, nothing more.
      if (jobId.startsWith('0:')) {
        await exec('LREM', keys.active, 1, jobId);
        continue;
      }
      if (Number(await exec('EXISTS', keys.lock(jobId))) !== 0) continue;
      const removed = Number(await exec('LREM', keys.active, 1, jobId));
      if (guarded && removed <= 0) continue;
      const stalledCount = Number(await exec('HINCRBY', keys.job(jobId), 'stc', 1));
      const repeatable = await isRepeatable(exec, keys, jobId);
      if (stalledCount > args.maxStalledCount && !repeatable) await exec('HSET', keys.job(jobId), 'defa', FAILED_REASON);
      await moveJobToWait(exec, keys, jobId);
      await exec('XADD', keys.events, '*', 'event', 'stalled', 'jobId', jobId);
      moved.push(jobId);
    }
  }
  const active = (await exec('LRANGE', keys.active, 0, -1)) as string[];
  for (let from = 0; from < active.length; from += MARK_BATCH) await exec('SADD', keys.stalled, ...active.slice(from, from + MARK_BATCH));
  return moved;
}

/** trimEvents: the stream kept to the queue's `opts.maxLenEvents` (10,000 unless set, and then set). */
async function trimEvents(exec: Exec, keys: BullmqKeys): Promise<void> {
  let maxEvents = (await exec('HGET', keys.meta, 'opts.maxLenEvents')) as string | null;
  if (maxEvents === null) {
    maxEvents = '10000';
    await exec('HSET', keys.meta, 'opts.maxLenEvents', maxEvents);
  }
  await exec('XTRIM', keys.events, 'MAXLEN', '~', maxEvents);
}

/** A job of a job scheduler (a repeatable job) is never failed for stalling. */
async function isRepeatable(exec: Exec, keys: BullmqKeys, jobId: string): Promise<boolean> {
  const schedulerId = (await exec('HGET', keys.job(jobId), 'rjk')) as string | null;
  if (schedulerId === null) return false;
  if (Number(await exec('EXISTS', `${keys.repeat}:${schedulerId}`)) === 1) return true;
  return (await exec('ZSCORE', keys.repeat, schedulerId)) !== null;
}

/** moveJobToWait: RPUSH onto `wait`, the marker unless the queue is paused or at its concurrency, and the `waiting` event. */
async function moveJobToWait(exec: Exec, keys: BullmqKeys, jobId: string): Promise<void> {
  const [paused, concurrency] = (await exec('HMGET', keys.meta, 'paused', 'concurrency')) as [string | null, string | null];
  let pausedOrMaxed = paused !== null;
  if (!pausedOrMaxed && concurrency !== null) pausedOrMaxed = Number(await exec('LLEN', keys.active)) >= Number(concurrency);
  await exec('RPUSH', keys.wait, jobId);
  if (!pausedOrMaxed) await exec('ZADD', keys.marker, 0, '0');
  await exec('XADD', keys.events, '*', 'event', 'waiting', 'jobId', jobId, 'prev', 'active');
}

/**
 * The scripts of a race's consequences, each behind a typed call: a worker taking a job from a
 * sorted-set pending and finishing one, the re-leaser putting a recovered job back in active, the
 * observer's sample of one job. Sent like every script of the tool (CachedScript: EVALSHA, then EVAL on NOSCRIPT);
 * each call counts its fallbacks in its caller's own `count`, which the report shows beside the
 * sweepers' (a flushed script cache reaches these connections as much as theirs).
 */
import type { Redis } from 'ioredis';
import type { FallbackCount } from './cached-script.js';
import { loadScript, luaScript } from './registry.js';

const TAKE_JOB = luaScript('take-job');
const FINISH_JOB = luaScript('finish-job');
const RELEASE_STALLED = luaScript('release-stalled');
const OBSERVE_JOB = luaScript('observe-job');

/** Which of these scripts a run's consequences will call. */
export interface ConsequenceScriptUse {
  readonly workers: boolean;
  /** Workers take from a sorted-set pending with a script, from a list with LMOVE. */
  readonly zsetPending: boolean;
  readonly releaser: boolean;
  readonly observer: boolean;
}

/**
 * Loads the scripts the run's workers, re-leaser and observer will call into the server's cache
 * before the race, as the sweep script is (preloadScripts): a NOSCRIPT fallback they count is then
 * one a flushed script cache made, as the sweepers' are, not their first call on a server that
 * never held the script.
 */
export async function preloadConsequenceScripts(redis: Redis, use: ConsequenceScriptUse): Promise<void> {
  const scripts = [
    ...(use.workers && use.zsetPending ? [TAKE_JOB] : []),
    ...(use.workers ? [FINISH_JOB] : []),
    ...(use.releaser ? [RELEASE_STALLED] : []),
    ...(use.observer ? [OBSERVE_JOB] : []),
  ];
  for (const script of scripts) await loadScript(redis, script.lua);
}

/** Moves the head of a sorted-set pending into `running` (see take-job.lua); the job's id, or null when pending is empty. */
export async function callTakeJob(redis: Redis, pending: string, running: string, count: FallbackCount): Promise<string | null> {
  return (await TAKE_JOB.call(redis, [pending, running], [], undefined, count)) as string | null;
}

/** Marks the job done and takes its entry out of `running` in one call (see finish-job.lua): the entries taken out. */
export async function callFinishJob(redis: Redis, job: string, running: string, id: string, count: FallbackCount): Promise<number> {
  return Number(await FINISH_JOB.call(redis, [job, running], [id], undefined, count));
}

/** The keys and bounds of one re-lease (see release-stalled.lua). */
export interface ReleaseCall {
  readonly active: string;
  readonly pending: string;
  readonly prefix: string;
  /** How many times one job may be re-leased. */
  readonly releases: number;
  /** Head entries one call looks at. */
  readonly headBound: number;
  /** How far in the past the new lease expired. */
  readonly expiredByMs: number;
  readonly kind: 'list' | 'zset';
}

/** Puts one recovered job back in active with an expired lease; [id, its re-leases so far], or [] when there was none to take. */
export async function callReleaseStalled(redis: Redis, call: ReleaseCall, count: FallbackCount): Promise<[string, number] | []> {
  return (await RELEASE_STALLED.call(
    redis,
    [call.active, call.pending],
    [call.prefix, call.releases, call.headBound, call.expiredByMs, call.kind],
    undefined,
    count,
  )) as [string, number] | [];
}

/** The keys one sample looks in (see observe-job.lua). */
export interface ObserveKeys {
  readonly active: string;
  readonly pending: string;
  readonly dead: string;
  readonly running: string;
  readonly prefix: string;
}

/** One sample: the job's id, then 1 or 0 for in active, in pending, in dead, in running, done, and whether the sample was conclusive. */
export type ObserveReply = [string, number, number, number, number, number, number];

/** Samples the job `tracked` (or picks one when it is ''); null when there is nothing to sample. */
export async function callObserveJob(
  redis: Redis,
  keys: ObserveKeys,
  tracked: string,
  tailBound: number,
  kind: 'list' | 'zset',
  count: FallbackCount,
): Promise<ObserveReply | null> {
  return (await OBSERVE_JOB.call(
    redis,
    [keys.active, keys.pending, keys.dead, keys.running],
    [tracked, keys.prefix, tailBound, kind],
    undefined,
    count,
  )) as ObserveReply | null;
}

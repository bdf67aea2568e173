/**
 * The server-side helpers behind fast seeding, a streaming audit and the claim on a queue, sent
 * like every script of the tool (CachedScript: EVALSHA, then EVAL on NOSCRIPT). Each call is
 * bounded by its caller to a few thousand jobs, so one call holds the server for milliseconds.
 */
import type { Redis } from 'ioredis';
import { luaScript } from './registry.js';

const SEED_JOBS = luaScript('seed-jobs');
const AUDIT_JOBS = luaScript('audit-jobs');
const AUDIT_MEMBERS = luaScript('audit-members');
const KEEP_CLAIM = luaScript('keep-claim');
const RELEASE_MARKER = luaScript('release-marker');
const UNLINK_RUN_JOBS = luaScript('unlink-run-jobs');
const UNLINK_UNDER_MARKER = luaScript('unlink-under-marker');

/** Seeds jobs first..last with residues high..low, each carrying `runId` (see seed-jobs.lua); resolves to how many. */
export async function callSeedJobs(
  redis: Redis,
  active: string,
  prefix: string,
  first: number,
  last: number,
  serverNowMs: number,
  expiredByMs: number,
  stalledBefore: number,
  high: number,
  low: number,
  runId: string,
): Promise<number> {
  return Number(await SEED_JOBS.call(redis, [active], [prefix, first, last, serverNowMs, expiredByMs, stalledBefore, high, low, runId]));
}

/** One element per job of a slice, in seeding order (see audit-jobs.lua); `active` only routes the call. */
export async function callAuditJobs(
  redis: Redis,
  active: string,
  prefix: string,
  first: number,
  last: number,
  high: number,
  low: number,
  runId?: string,
): Promise<(number | string)[]> {
  return (await AUDIT_JOBS.call(redis, [active], [prefix, first, last, high, low, ...(runId !== undefined ? [runId] : [])])) as (number | string)[];
}

/** One integer per member of a slice of a list or sorted set (see audit-members.lua). */
export async function callAuditMembers(
  redis: Redis,
  key: string,
  kind: 'list' | 'zset',
  start: number,
  stop: number,
  jobs: number,
  nowMs: number,
): Promise<number[]> {
  return (await AUDIT_MEMBERS.call(redis, [key], [kind, start, stop, jobs, nowMs])) as number[];
}

/** How keep-claim.lua rewrites a marker; with `heartbeat` it also refreshes the queue's heartbeat. */
export interface MarkerRewrite {
  readonly from: string;
  readonly to: string;
  /** The marker's expiry; 0 for none. */
  readonly markerTtlMs: number;
  readonly heartbeat?: { readonly ttlMs: number; readonly value: string };
}

/** Rewrites the owner marker if it still holds `from` (see keep-claim.lua); false when it did not. */
export async function callKeepClaim(redis: Redis, owner: string, heartbeatKey: string, rewrite: MarkerRewrite): Promise<boolean> {
  const { heartbeat } = rewrite;
  const args = [rewrite.from, rewrite.to, rewrite.markerTtlMs, heartbeat?.ttlMs ?? 0, heartbeat?.value ?? ''];
  return Number(await KEEP_CLAIM.call(redis, [owner, heartbeatKey], args)) === 1;
}

/** Deletes the owner marker if it still holds `value` (see release-marker.lua); resolves to 1 or 0. */
export async function callReleaseMarker(redis: Redis, owner: string, value: string): Promise<number> {
  return Number(await RELEASE_MARKER.call(redis, [owner], [value]));
}

/**
 * Deletes `keys` if the owner marker still holds `value` (see unlink-under-marker.lua): resolves to
 * how many went, or to -1 when the marker held anything else (nothing deleted).
 */
export async function callUnlinkUnderMarker(redis: Redis, owner: string, value: string, keys: readonly string[]): Promise<number> {
  return Number(await UNLINK_UNDER_MARKER.call(redis, [owner, ...keys], [value]));
}

/** Deletes those of `jobKeys` whose `run` field is `runId` (see unlink-run-jobs.lua); resolves to how many. */
export async function callUnlinkRunJobs(redis: Redis, jobKeys: readonly string[], runId: string): Promise<number> {
  return Number(await UNLINK_RUN_JOBS.call(redis, jobKeys, [runId]));
}

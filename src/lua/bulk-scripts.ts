/**
 * The server-side helpers behind fast seeding and a streaming audit, sent like every script of the
 * tool (CachedScript: EVALSHA, then EVAL on NOSCRIPT). Each call is bounded by its caller to a few
 * thousand jobs, so one call holds the server for milliseconds.
 */
import type { Redis } from 'ioredis';
import { luaScript } from './registry.js';

const SEED_JOBS = luaScript('seed-jobs');
const AUDIT_JOBS = luaScript('audit-jobs');
const AUDIT_MEMBERS = luaScript('audit-members');

/** Seeds jobs first..last with residues high..low (see seed-jobs.lua); resolves to how many. */
export async function callSeedJobs(redis: Redis, active: string, prefix: string, first: number, last: number, serverNowMs: number, expiredByMs: number, stalledBefore: number, high: number, low: number): Promise<number> {
  return Number(await SEED_JOBS.call(redis, [active], [prefix, first, last, serverNowMs, expiredByMs, stalledBefore, high, low]));
}

/** One element per job of a slice, in seeding order (see audit-jobs.lua); `active` only routes the call. */
export async function callAuditJobs(redis: Redis, active: string, prefix: string, first: number, last: number, high: number, low: number): Promise<(number | string)[]> {
  return (await AUDIT_JOBS.call(redis, [active], [prefix, first, last, high, low])) as (number | string)[];
}

/** One integer per member of a slice of a list or sorted set (see audit-members.lua). */
export async function callAuditMembers(redis: Redis, key: string, kind: 'list' | 'zset', start: number, stop: number, jobs: number, nowMs: number): Promise<number[]> {
  return (await AUDIT_MEMBERS.call(redis, [key], [kind, start, stop, jobs, nowMs])) as number[];
}

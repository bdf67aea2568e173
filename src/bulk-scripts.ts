/**
 * The server-side helpers behind fast seeding and a streaming audit, registered as ioredis
 * commands (EVALSHA, with EVAL on NOSCRIPT). Each call is bounded by its caller to a few thousand
 * jobs, so one call holds the server for milliseconds.
 */
import { readFileSync } from 'node:fs';
import type { Redis, Result } from 'ioredis';

const lua = (name: string): string => readFileSync(new URL(`./lua/${name}`, import.meta.url), 'utf8');

export const SEED_JOBS_LUA = lua('seed-jobs.lua');
export const AUDIT_JOBS_LUA = lua('audit-jobs.lua');
export const AUDIT_MEMBERS_LUA = lua('audit-members.lua');

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** KEYS: active. ARGV: prefix, first, last, server now ms, expired by ms, stalled before, residues high..low. */
    seedJobs(active: string, prefix: string, first: number, last: number, serverNowMs: number, expiredByMs: number, stalledBefore: number, high: number, low: number): Result<number, Context>;
    /** KEYS: active (routing only). ARGV: prefix, first, last, residues high..low. One element per job, in seeding order (see the script). */
    auditJobs(active: string, prefix: string, first: number, last: number, high: number, low: number): Result<(number | string)[], Context>;
    /** KEYS: the list or sorted set. ARGV: kind, start, stop, jobs, now ms. One integer per member. */
    auditMembers(key: string, kind: 'list' | 'zset', start: number, stop: number, jobs: number, nowMs: number): Result<number[], Context>;
  }
}

export function defineBulkScripts(redis: Redis): void {
  redis.defineCommand('seedJobs', { numberOfKeys: 1, lua: SEED_JOBS_LUA });
  redis.defineCommand('auditJobs', { numberOfKeys: 1, lua: AUDIT_JOBS_LUA });
  redis.defineCommand('auditMembers', { numberOfKeys: 1, lua: AUDIT_MEMBERS_LUA });
}

/**
 * The readout of a replay: where the job ended and what its counter says, read back from the
 * server once both sweeps are done, set against how many sweeps moved it by their own account.
 */
import type { Redis } from 'ioredis';
import { incrementGap } from '../audit/rules.js';
import type { QueueKeys } from '../queue/keys.js';

export const PLACES = ['active', 'pending', 'dead'] as const;
export type Place = (typeof PLACES)[number];

/** The job as the server holds it after the replay. */
export interface JobFacts {
  readonly pendingEntries: number;
  readonly inActive: boolean;
  readonly inDead: boolean;
  /** The `stalled` field, or null if the hash has none. */
  readonly stalled: number | null;
}

export interface Readout {
  /** Sweeps that moved the job. */
  readonly recoverCount: number;
  /** Times the job's id stands in pending. */
  readonly pendingEntries: number;
  readonly stalled: number | null;
  /** Moves the counter does not show. */
  readonly lostIncrements: number;
  readonly endedIn: Place[];
}

export async function readJobFacts(redis: Redis, keys: QueueKeys, jobId: string): Promise<JobFacts> {
  // The queue is the replay's own, so pending holds a handful of entries at most.
  const pending = await redis.lrange(keys.pending, 0, -1);
  const activeScore = await redis.zscore(keys.active, jobId);
  const deadScore = await redis.zscore(keys.dead, jobId);
  const stalled = await redis.hget(keys.job(jobId), 'stalled');
  return {
    pendingEntries: pending.filter((id) => id === jobId).length,
    inActive: activeScore !== null,
    inDead: deadScore !== null,
    stalled: stalled === null ? null : Number(stalled),
  };
}

export function readoutOf(facts: JobFacts, recoverCount: number, stalledBefore: number): Readout {
  const endedIn: Place[] = [];
  if (facts.inActive) endedIn.push('active');
  if (facts.pendingEntries > 0) endedIn.push('pending');
  if (facts.inDead) endedIn.push('dead');
  return {
    recoverCount,
    pendingEntries: facts.pendingEntries,
    stalled: facts.stalled,
    lostIncrements: Math.max(0, incrementGap(recoverCount, facts.stalled ?? Number.NaN, stalledBefore)),
    endedIn,
  };
}

/** A replay is clean when the job moved once, stands in one place once, and its stall was counted. */
export function isCleanReadout(readout: Readout): boolean {
  return readout.recoverCount === 1 && readout.pendingEntries <= 1 && readout.endedIn.length === 1 && readout.lostIncrements === 0;
}

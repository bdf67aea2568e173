/**
 * The readout of a replay: where the job ended and what its counter says, read back from the
 * server once both sweeps are done, set against how many sweeps moved it by their own account.
 * Each figure is either read from the server or computed by this tool (the client): the readout
 * says which.
 */
import type { Redis } from 'ioredis';
import { overcount } from '../audit/consequence-rules.js';
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
  /** Sweeps that moved the job, by their own account. */
  readonly recoverCount: number;
  /** Times the job's id stands in pending (server). */
  readonly pendingEntries: number;
  /** The counter as the server holds it. */
  readonly stalled: number | null;
  /** What the counter would read had every recovery counted: stalled-before plus one per recovery (client). */
  readonly expectedStalled: number;
  /** Recoveries the counter does not show (client: expected against the server's counter). */
  readonly lostIncrements: number;
  /** Counter rises beyond the recoveries (client). */
  readonly extraIncrements: number;
  /**
   * What the counter should read: stalled-before plus the stalls the job really had, the one expired
   * lease it was seeded with (client). Recoveries are no stalls: two sweeps recovering one stall
   * must still count it once.
   */
  readonly realStalled: number;
  /** Stalls the counter shows beyond the job's real one (client): the audit's over-counted stalls, for this one job. */
  readonly overcountedStalls: number;
  readonly endedIn: Place[];
}

/** The stalls the replayed job really has: the one expired lease it is seeded with, as the audit counts a job without --cycles. */
const REAL_STALLS = 1;

/** Where each readout figure comes from: read from the server, or computed by this tool. */
export const READOUT_SOURCES: { readonly [field in keyof Readout]: 'server' | 'client' } = {
  recoverCount: 'client',
  pendingEntries: 'server',
  stalled: 'server',
  expectedStalled: 'client',
  lostIncrements: 'client',
  extraIncrements: 'client',
  realStalled: 'client',
  overcountedStalls: 'client',
  endedIn: 'server',
};

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
  const stalled = facts.stalled ?? Number.NaN;
  const gap = incrementGap(recoverCount, stalled, stalledBefore);
  return {
    recoverCount,
    pendingEntries: facts.pendingEntries,
    stalled: facts.stalled,
    expectedStalled: stalledBefore + recoverCount,
    lostIncrements: Math.max(0, gap),
    extraIncrements: Math.max(0, -gap),
    realStalled: stalledBefore + REAL_STALLS,
    overcountedStalls: overcount(REAL_STALLS, stalled, stalledBefore),
    endedIn,
  };
}

export interface ReadoutRow {
  readonly field: keyof Readout;
  readonly label: string;
  readonly value: string;
  readonly source: 'server' | 'client';
  readonly meaning: string;
}

/** The readout as rows for people (terminal and HTML alike); extra increments only when there are some. */
export function readoutRows(readout: Readout, jobId: string, stalledBefore: number): ReadoutRow[] {
  const row = (field: keyof Readout, label: string, value: string, meaning: string): ReadoutRow => ({
    field,
    label,
    value,
    source: READOUT_SOURCES[field],
    meaning,
  });
  return [
    row('recoverCount', 'recover count', String(readout.recoverCount), `sweeps that moved job ${jobId}, by their own account`),
    row('pendingEntries', 'pending entries', String(readout.pendingEntries), `times job ${jobId} stands in pending`),
    row('stalled', 'stalled', readout.stalled === null ? '(none)' : String(readout.stalled), `its counter, ${stalledBefore} before the sweeps`),
    row('expectedStalled', 'expected stalled', String(readout.expectedStalled), `${stalledBefore} before, plus one per recovery`),
    row('realStalled', 'real stalled', String(readout.realStalled), `${stalledBefore} before, plus its one real stall`),
    row('lostIncrements', 'lost increments', String(readout.lostIncrements), 'recoveries the counter does not show'),
    ...(readout.extraIncrements > 0
      ? [row('extraIncrements', 'extra increments', String(readout.extraIncrements), 'counter rises beyond the recoveries')]
      : []),
    row('overcountedStalls', 'over-counted', String(readout.overcountedStalls), 'stalls counted beyond its one real stall'),
    row('endedIn', 'ended in', readout.endedIn.length > 0 ? readout.endedIn.join(', ') : 'nowhere', `where job ${jobId} stands`),
  ];
}

/** A replay is clean when the job moved once, stands in one place once, and its stall was counted once. */
export function isCleanReadout(readout: Readout): boolean {
  return (
    readout.recoverCount === 1 &&
    readout.pendingEntries <= 1 &&
    readout.endedIn.length === 1 &&
    readout.lostIncrements === 0 &&
    readout.extraIncrements === 0 &&
    readout.overcountedStalls === 0
  );
}

/**
 * The audit of a Bee-Queue run, pure: Bee-Queue's keys as read back (a BeeSnapshot) set against
 * what the callers recorded they moved back to `waiting`. Each job of the race stalled once (its
 * worker died holding it), so:
 *
 *   duplicate pending   entries of `waiting` beyond one per job: each a run more of the job (server);
 *   lost jobs           jobs in none of `waiting`, `active`, `succeeded`, `failed`, `delayed` (server);
 *   misplaced           jobs in two of them, or twice in `active` (server);
 *   unreclaimed         jobs left in `active`: every worker that took one is dead (server).
 *
 * Bee-Queue keeps no stall counter, per job or at all, and never fails a job for stalling: the
 * counter figures are not measured (null, NO_COUNTER), like the figures with no meaning here.
 */
import { JobTally } from '../../audit/rules.js';
import type { AuditCounts } from '../../shared/model.js';
import { NO_COUNTER, libraryCounts, placesOf } from '../counts.js';

/** Per-job facts read from Bee-Queue's keys, indexed by job id (1..jobs; index 0 unused). */
export interface BeeSnapshot {
  readonly jobs: number;
  /** Entries of the id in the lists `waiting` and `active`. */
  readonly inWaiting: Uint32Array;
  readonly inActive: Uint32Array;
  /** 1 where the set (or, for `delayed`, the sorted set) holds the id. */
  readonly inSucceeded: Uint8Array;
  readonly inFailed: Uint8Array;
  readonly inDelayed: Uint8Array;
}

export function blankBeeSnapshot(jobs: number): BeeSnapshot {
  const n = jobs + 1;
  return {
    jobs,
    inWaiting: new Uint32Array(n),
    inActive: new Uint32Array(n),
    inSucceeded: new Uint8Array(n),
    inFailed: new Uint8Array(n),
    inDelayed: new Uint8Array(n),
  };
}

/** In how many of Bee-Queue's lists and sets a job stands (a list holding it twice counts once: that is a duplicate). */
function beePlaces(s: BeeSnapshot, id: number): number {
  return placesOf(id, [s.inWaiting, s.inActive, s.inSucceeded, s.inFailed, s.inDelayed]);
}

/** The run's figures: `moves[id]` is how often the callers recorded moving job `id` back to `waiting`. */
export function auditBee(s: BeeSnapshot, moves: Uint32Array): AuditCounts {
  const tally = new JobTally();
  let lostJobs = 0;
  let misplaced = 0;
  let unreclaimed = 0;
  for (let id = 1; id <= s.jobs; id++) {
    tally.moves(moves[id] ?? 0, s.inWaiting[id] ?? 0);
    const places = beePlaces(s, id);
    if (places === 0) lostJobs++;
    else if (places > 1 || (s.inActive[id] ?? 0) > 1) misplaced++;
    if ((s.inActive[id] ?? 0) > 0) unreclaimed++;
  }
  return libraryCounts(tally, { lostJobs, misplaced, unreclaimed, ...NO_COUNTER });
}

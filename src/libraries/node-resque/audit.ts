/**
 * The audit of a node-resque run, pure: node-resque's keys as read back (a ResqueSnapshot) set
 * against what the callers recorded they pushed onto `failed`. Each seeded job was held by one
 * dead worker, so its recovery is one entry in `failed` (node-resque's retryStuckJobs enqueues
 * each such entry again: two entries, two runs):
 *
 *   duplicate pending   entries of `failed` beyond one per job (server);
 *   lost increments     pushes the callers recorded that `stat:failed` does not show (server+callers);
 *   extra increments    rises of `stat:failed` beyond the pushes: workers counted failed with no job pushed (server+callers);
 *   lost jobs           jobs in none of `failed`, the queue, or a registered worker's hands (server);
 *   misplaced           jobs in two of them (server);
 *   unreclaimed         jobs still held by a worker still registered in `workers` (server).
 *
 * node-resque keeps no per-job stall count and fails a dead worker's job by design: over-counted
 * stalls and the dead-letter figures are not measured (null), like the figures with no meaning here.
 * Its one counter, `stat:failed`, counts failures for the whole queue: the increments are measured
 * against the pushes all together, not job by job.
 */
import { JobTally } from '../../audit/rules.js';
import type { AuditCounts } from '../../shared/model.js';
import { NO_STALL_COUNT, libraryCounts } from '../counts.js';

/** Per-job facts read from node-resque's keys, indexed by job id (1..jobs; index 0 unused). */
export interface ResqueSnapshot {
  readonly jobs: number;
  /** Entries of the job in `failed`. */
  readonly inFailed: Uint32Array;
  /** Entries of the job in the queue's list. */
  readonly inQueue: Uint32Array;
  /** Workers still in `workers` whose working-on key holds the job. */
  readonly held: Uint32Array;
  /** `stat:failed` (0 when absent). */
  statFailed: number;
}

export function blankResqueSnapshot(jobs: number): ResqueSnapshot {
  const n = jobs + 1;
  return { jobs, inFailed: new Uint32Array(n), inQueue: new Uint32Array(n), held: new Uint32Array(n), statFailed: 0 };
}

/** The run's figures: `moves[id]` is how often the callers recorded pushing job `id` onto `failed`. */
export function auditResque(s: ResqueSnapshot, moves: Uint32Array): AuditCounts {
  const tally = new JobTally();
  let lostJobs = 0;
  let misplaced = 0;
  let unreclaimed = 0;
  for (let id = 1; id <= s.jobs; id++) {
    const failed = s.inFailed[id] ?? 0;
    const held = s.held[id] ?? 0;
    tally.moves(moves[id] ?? 0, failed);
    const places = [failed, s.inQueue[id] ?? 0, held].filter((n) => n > 0).length;
    if (places === 0) lostJobs++;
    else if (places > 1 || held > 1 || (s.inQueue[id] ?? 0) > 1) misplaced++;
    if (held > 0) unreclaimed++;
  }
  // node-resque keeps one counter for the whole queue (`stat:failed`), not one per job.
  const { recoveries } = tally.figures;
  return libraryCounts(tally, {
    lostJobs,
    misplaced,
    unreclaimed,
    ...NO_STALL_COUNT,
    lostIncrements: Math.max(0, recoveries - s.statFailed),
    extraIncrements: Math.max(0, s.statFailed - recoveries),
  });
}

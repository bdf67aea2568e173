/**
 * The audit of a BullMQ run, pure: BullMQ's keys as read back (a BullmqSnapshot) set against what
 * the callers recorded they moved. Each job of the race stalled once (its lock lapsed once), so:
 *
 *   duplicate pending   entries of `wait` beyond one per job (server);
 *   lost increments     moves a caller recorded that the job's `stc` does not show (server+callers);
 *   extra increments    `stc` rises no caller recorded (server+callers);
 *   over-counted stalls jobs whose `stc` ended above the one stall they had (server);
 *   lost jobs           jobs in none of BullMQ's lists and sets, their hash still there (server);
 *   misplaced           jobs in two or more of them, or twice in `active`, or a job the application
 *                       removed (its hash gone, or remade holding no `timestamp`) standing in one
 *                       again (server);
 *   unreclaimed         jobs left in `active` with their lock gone (server);
 *   dead-lettered early jobs in `failed`, or marked to fail (`defa`), though their one stall is
 *                       below --max-stalled (server);
 *   double executions   with live workers only: runs of a job's handler beyond one, as the
 *                       tool's handlers counted them in the job's hash (server).
 */
import { isDeadLetterEscape, isDeadLetteredEarly, overcount } from '../../audit/consequence-rules.js';
import { incrementGap, JobTally } from '../../audit/rules.js';
import type { AuditCounts } from '../../shared/model.js';
import { libraryCounts, placesOf } from '../counts.js';

/** Per-job facts read from BullMQ's keys, indexed by job id (1..jobs; index 0 unused). */
export interface BullmqSnapshot {
  readonly jobs: number;
  /** Entries of the id in `wait`, `active` and `paused` (lists). */
  readonly inWait: Uint32Array;
  readonly inActive: Uint32Array;
  readonly inPaused: Uint32Array;
  /** 1 where the sorted set holds the id. */
  readonly inFailed: Uint8Array;
  readonly inCompleted: Uint8Array;
  readonly inDelayed: Uint8Array;
  readonly inPrioritized: Uint8Array;
  /** The hash's `stc` (stall counter); NaN where it has none. */
  readonly stc: Float64Array;
  /** 1 where the hash has `defa`: marked to fail when a worker next takes it. */
  readonly failMarked: Uint8Array;
  /** 1 where the job's lock key exists. */
  readonly locked: Uint8Array;
  /**
   * 1 where the job's hash lacks the `timestamp` BullMQ writes when it adds a job: the job was
   * removed (Job#remove deletes the hash), or the hash is one a stray HINCRBY made again after.
   */
  readonly removed: Uint8Array;
  /** The hash's HANDLER_RUNS_FIELD: how often the tool's handlers ran the job (--fault lapsed-lock); 0 where none. */
  readonly ran: Uint32Array;
}

/** A snapshot of `jobs` jobs with nothing read yet. */
export function blankBullmqSnapshot(jobs: number): BullmqSnapshot {
  const n = jobs + 1;
  return {
    jobs,
    inWait: new Uint32Array(n),
    inActive: new Uint32Array(n),
    inPaused: new Uint32Array(n),
    inFailed: new Uint8Array(n),
    inCompleted: new Uint8Array(n),
    inDelayed: new Uint8Array(n),
    inPrioritized: new Uint8Array(n),
    stc: new Float64Array(n).fill(Number.NaN),
    failMarked: new Uint8Array(n),
    locked: new Uint8Array(n),
    removed: new Uint8Array(n),
    ran: new Uint32Array(n),
  };
}

/** In how many of BullMQ's lists and sets a job stands (a list holding it twice counts once: that is a duplicate). */
export function bullmqPlaces(s: BullmqSnapshot, id: number): number {
  return placesOf(id, [s.inWait, s.inActive, s.inPaused, s.inFailed, s.inCompleted, s.inDelayed, s.inPrioritized]);
}

/** Whether a job is failed, or marked to fail, by BullMQ. */
export function isFailing(s: BullmqSnapshot, id: number): boolean {
  return (s.inFailed[id] ?? 0) > 0 || (s.failMarked[id] ?? 0) > 0;
}

/**
 * The run's figures: `moves[id]` is how often the callers recorded moving job `id`; `maxStalled`
 * is --max-stalled. With `workersRan` (live workers took the jobs: --fault lapsed-lock), the
 * double executions are counted from the handlers' own runs; without, they are null (no worker ran a job).
 */
export function auditBullmq(s: BullmqSnapshot, moves: Uint32Array, maxStalled: number, workersRan = false): AuditCounts {
  const tally = new JobTally();
  let lostJobs = 0;
  let misplaced = 0;
  let unreclaimed = 0;
  let deadLetteredEarly = 0;
  let deadLetterEscapes = 0;
  let doubleExecutions = 0;
  for (let id = 1; id <= s.jobs; id++) {
    doubleExecutions += Math.max(0, (s.ran[id] ?? 0) - 1);
    const stc = s.stc[id] ?? Number.NaN;
    const moved = moves[id] ?? 0;
    tally.moves(moved, s.inWait[id] ?? 0);
    tally.counterGap(incrementGap(moved, stc, 0));
    tally.overcount(overcount(1, stc, 0));
    const places = bullmqPlaces(s, id);
    const removed = (s.removed[id] ?? 0) > 0;
    // A removed job stands nowhere by right; put back in a list, it is a job where none should be.
    if (places === 0) lostJobs += removed ? 0 : 1;
    else if (removed || places > 1 || (s.inActive[id] ?? 0) > 1) misplaced++;
    const left = (s.inActive[id] ?? 0) > 0 && (s.locked[id] ?? 0) === 0;
    if (left) unreclaimed++;
    const failing = isFailing(s, id) ? 1 : 0;
    if (isDeadLetteredEarly(1, 0, maxStalled, failing)) deadLetteredEarly++;
    // A handler's first run is the one whose lock lapsed (the stall); only the runs after it came after the stall.
    const runsAfter = Math.max(0, (s.ran[id] ?? 0) - 1);
    if (isDeadLetterEscape(1, 0, maxStalled, { inDead: failing, runs: runsAfter, unreclaimed: left })) deadLetterEscapes++;
  }
  const counts = libraryCounts(tally, { lostJobs, misplaced, unreclaimed, deadLetterEscapes, deadLetteredEarly });
  return workersRan ? { ...counts, doubleExecutions } : counts;
}

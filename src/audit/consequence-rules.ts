/**
 * The arithmetic behind what the race costs: unacknowledged moves, double executions, dead-letter
 * escapes, the observer's windows, and the per-cycle sums. Pure functions over numbers read from
 * the server or kept by the run, so each rule is tested directly.
 */
import { STATE_CODES, excess } from './job-state.js';
import type { AuditCounts } from '../shared/model.js';

/**
 * What may have happened to one job in calls a fault left in doubt (CallDoubts in model.ts).
 * `allowance` bounds its unacknowledged moves: for a round-trip mode, the calls lost while a
 * sweeper held this job (each changes one job, and at most one move of it); for a one-call mode,
 * whose lost calls' jobs the server chose, its stalls that no recorded move accounts for (a
 * correct sweep moves a job once per stall), the run's total bounded apart (auditJobs). `trusted`:
 * the mode's moves leave one entry each in pending and count each stall with its move or after its
 * push, as every built-in strategy's do; a user's --script is trusted with neither, only with
 * having taken the job out of active. `holds`: the mode's sweepers hold the job they change (round
 * trips), so an increment of a held job whose push never came is that sweeper's, not an extra one.
 */
export interface JobDoubt {
  readonly allowance: number;
  readonly trusted: boolean;
  readonly holds: boolean;
}

/**
 * A call that went unanswered (its connection cut with it in flight) may still have run: the
 * server finishes a command or a script whatever its client does. Such moves show on the server as
 * a job out of active and placed (in pending or dead, or taken by a worker) with no move recorded:
 * by its counter risen beyond its recorded moves, or by entries in pending beyond them (a loop's
 * push that ran while its reply was lost; the loop writes the counter after the push, so that
 * write never came). At most `doubt.allowance` of them are reconciled as unacknowledged moves,
 * recoveries the counter must show, so each adds to the gap; anything beyond stays an anomaly. A
 * job in no place is no move (a sweeper cut off between taking it out of active and its push lost
 * it: a lost job). `gap` is recorded moves − counter rise, as incrementGap returns it; `moved` the
 * recorded moves; `entries` the job's entries in pending; `placed` whether it stands anywhere
 * (placement: pending, dead, or a worker's).
 */
export function reconcileGap(
  gap: number,
  job: { readonly inActive: number; readonly placed: boolean; readonly moved: number; readonly entries: number },
  doubt: JobDoubt | undefined,
): { gap: number; unacknowledged: number } {
  if (!doubt || doubt.allowance <= 0) return { gap, unacknowledged: 0 };
  const movedOut = job.inActive === 0 && job.placed;
  let shown = 0;
  if (movedOut) shown = doubt.trusted ? Math.max(-gap, job.entries - job.moved, 0) : 1;
  const unacknowledged = Math.min(doubt.allowance, shown);
  let reconciled = gap + unacknowledged;
  // The held job's own increment, written before a push that never came (a claim's HINCRBY): the
  // stall was counted by the sweeper that held it, not from nowhere.
  if (doubt.holds && reconciled < 0) reconciled += Math.min(doubt.allowance - unacknowledged, -reconciled);
  return { gap: reconciled, unacknowledged };
}

export type Placement = 'placed' | 'lost' | 'misplaced';

/**
 * Where a job ended up, over every place a run can leave it: active, pending, dead, a worker's
 * running list, or finished (run by a worker and out of running). A finished job with state done is
 * neither lost nor misplaced; a job in no place at all is lost; a job in two places, or in one its
 * `state` does not name, is misplaced.
 */
export function placement(inActive: number, inPending: number, inDead: number, inRunning: number, runs: number, state: number): Placement {
  const finished = runs > 0 && inRunning === 0 ? 1 : 0;
  const places = (inActive > 0 ? 1 : 0) + (inPending > 0 ? 1 : 0) + (inDead > 0 ? 1 : 0) + (inRunning > 0 ? 1 : 0) + finished;
  if (places === 0) return 'lost';
  if (places > 1) return 'misplaced';
  let expected: number;
  if (inActive > 0) expected = STATE_CODES.active;
  else if (inDead > 0) expected = STATE_CODES.dead;
  else if (finished) expected = STATE_CODES.done;
  else expected = STATE_CODES.pending; // in pending, or taken by a worker that has not finished it
  return state === expected ? 'placed' : 'misplaced';
}

/** Runs of one job beyond its first: each is the job executed again. */
export function doubleExecutions(runs: number): number {
  return Number.isFinite(runs) ? excess(runs) : 0;
}

/** What the audit knows of a job at the end, for the dead-letter escape. */
export interface EscapeFacts {
  /** Its entries in dead (a library's failed set). */
  readonly inDead: number;
  /** The times a worker ran it: without re-leases (the re-leaser and workers never run together), each run came after its stall. */
  readonly runs: number;
  /** Still in active with its lease expired, never swept: no sweep has judged it yet, which is no escape. */
  readonly unreclaimed: boolean;
}

/**
 * A job escaped the dead letter when the stalls it really had (the counter it started with, plus
 * one per cycle in which it stalled) reached max-stalled and it was not dead-lettered then: it
 * stalled yet again afterwards (it ran, and crashed a worker, once more than it should have), a
 * worker ran it after its last stall (the loop pushes a job onto pending before it reads the
 * counter, and only then moves it to dead), or a sweep took it and it is not in dead at the end.
 * Its counter lagged, or the move to dead came after the job was already out.
 */
export function isDeadLetterEscape(trueStalls: number, stalledBefore: number, maxStalled: number, job: EscapeFacts): boolean {
  const stalls = stalledBefore + trueStalls;
  if (stalls !== maxStalled) return stalls > maxStalled;
  return job.runs > 0 || (job.inDead === 0 && !job.unreclaimed);
}

/**
 * Stalls a job's counter shows beyond the stalls it really had: the counter (the value it started
 * with when the hash has none) less stalled-before and the stalls of the run. Positive only where
 * two sweeps each added their own increment for one stall: in the page's order the second sweep
 * reads the value the first one wrote and writes it back plus one.
 */
export function overcount(trueStalls: number, stalled: number, stalledBefore: number): number {
  const counter = Number.isNaN(stalled) ? stalledBefore : stalled;
  const real = stalledBefore + trueStalls;
  return counter > real ? counter - real : 0;
}

/**
 * A job was dead-lettered early when it stands in dead although the stalls it really had
 * (stalled-before plus the stalls of the run) stay below max-stalled: a healthy job that would
 * never run again, the mirror image of a dead-letter escape. Its counter ran ahead of its stalls.
 */
export function isDeadLetteredEarly(trueStalls: number, stalledBefore: number, maxStalled: number, inDead: number): boolean {
  return inDead > 0 && stalledBefore + trueStalls < maxStalled;
}

export interface SampleFlags {
  readonly inActive: number;
  readonly inPending: number;
  readonly inDead: number;
  readonly inRunning: number;
  readonly done: number;
}

/** One observer sample: a job in no place, in exactly one, or in two or more at the same instant. */
export function sampleVerdict(flags: SampleFlags): 'neither' | 'one' | 'both' {
  const places = [flags.inActive, flags.inPending, flags.inDead, flags.inRunning, flags.done].filter((f) => f > 0).length;
  if (places === 0) return 'neither';
  return places === 1 ? 'one' : 'both';
}

export interface WindowCounts {
  readonly samples: number;
  readonly windowInNeither: number;
  readonly windowInBoth: number;
}

export function addWindows(a: WindowCounts, b: WindowCounts): WindowCounts {
  return {
    samples: a.samples + b.samples,
    windowInNeither: a.windowInNeither + b.windowInNeither,
    windowInBoth: a.windowInBoth + b.windowInBoth,
  };
}

/**
 * Sums over a run's cycles. A job leased again has one more stall to recover, so a correct run
 * over five cycles moves a job up to five times and is right to: only moves beyond one per stall,
 * and entries beyond the first each time a job is taken from pending, are anomalies.
 */
export class CycleTally {
  /** Moves per job over every round. */
  readonly totalMoves: Uint32Array;
  /** Stalls each job had: the seeded one, plus one each time it was leased again. */
  readonly trueStalls: Uint32Array;
  /** Duplicate entries a job had in pending each time it was taken to be leased again. */
  earlierDuplicatePending = 0;
  /** The most entries one job had in pending when it was taken to be leased again. */
  mostEntriesTaken = 0;

  constructor(readonly jobs: number) {
    this.totalMoves = new Uint32Array(jobs + 1);
    this.trueStalls = new Uint32Array(jobs + 1);
    this.trueStalls.fill(1, 1);
  }

  /** One round's moves per job. */
  addMoves(moves: Uint32Array): void {
    for (let id = 1; id <= this.jobs; id++) this.totalMoves[id] = (this.totalMoves[id] ?? 0) + (moves[id] ?? 0);
  }

  /** Job `id` was taken from pending, where it had `entries` entries, and leased again. */
  addRelease(id: number, entries: number): void {
    if (!Number.isInteger(id) || id < 1 || id > this.jobs) return;
    this.trueStalls[id] = (this.trueStalls[id] ?? 0) + 1;
    this.earlierDuplicatePending += excess(entries);
    if (entries > this.mostEntriesTaken) this.mostEntriesTaken = entries;
  }

  /** Moves beyond one per stall: Σ max(0, moves(j) − stalls(j)). */
  get doubleRecoveries(): number {
    let sum = 0;
    for (let id = 1; id <= this.jobs; id++) sum += extraMoves(this.totalMoves[id] ?? 0, this.trueStalls[id] ?? 0);
    return sum;
  }

  /** Jobs moved more often than they stalled. */
  get jobsRecoveredMoreThanOnce(): number {
    let count = 0;
    for (let id = 1; id <= this.jobs; id++) if (extraMoves(this.totalMoves[id] ?? 0, this.trueStalls[id] ?? 0) > 0) count++;
    return count;
  }
}

/** Moves of one job beyond one per stall it had. */
export function extraMoves(moves: number, stalls: number): number {
  return moves > stalls ? moves - stalls : 0;
}

/**
 * The whole-run counts with moves and pending entries judged per cycle, and the observer's windows
 * (null without an observer: not measured). With one cycle a job stalls once and the audit's own
 * moves beyond the first stand: they count the moves the server shows that no sweeper heard back
 * as well (reconcileGap), which the cycles' record of the sweepers' moves cannot.
 */
export function withCycleSums(counts: AuditCounts, tally: CycleTally, cycles: number, windows?: WindowCounts): AuditCounts {
  const perCycle = cycles > 1;
  return {
    ...counts,
    doubleRecoveries: perCycle ? tally.doubleRecoveries : counts.doubleRecoveries,
    duplicatePending: tally.earlierDuplicatePending + counts.duplicatePending,
    duplicatePendingAtEnd: counts.duplicatePending,
    mostPendingEntries: Math.max(counts.mostPendingEntries, tally.mostEntriesTaken),
    jobsRecoveredMoreThanOnce: perCycle ? tally.jobsRecoveredMoreThanOnce : counts.jobsRecoveredMoreThanOnce,
    windowInNeither: windows ? windows.windowInNeither : null,
    windowInBoth: windows ? windows.windowInBoth : null,
  };
}

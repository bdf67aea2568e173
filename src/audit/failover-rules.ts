/**
 * The failover drill's audit: the new primary's stalled counters (read back by the snapshot) set
 * against the moves the sweepers recorded before the failover and after it. Pure.
 */
import type { JobSnapshot } from './rules.js';

/** A count per job id on each side of the failover: the sweepers' moves, or the workers' takes. */
export interface FailoverSides {
  readonly before: Uint32Array;
  readonly after: Uint32Array;
}

/** Moves each job had before the failover (and of those the ones WAIT did not confirm), and after it on the new primary. */
export interface FailoverMoves extends FailoverSides {
  readonly unconfirmed: Uint32Array;
}

export interface FailoverLosses {
  readonly ackedMovesLost: number;
  readonly jobsRecoveredTwice: number;
  readonly counterIncrementsLost: number;
}

/**
 * Every move of a job raises its `stalled` counter by one, on the server that ran it. The moves
 * after the failover ran on the new primary; what its counter shows beyond them survived from the
 * old one. The moves before the failover that it does not show are lost; those among them WAIT
 * did not confirm were never acknowledged, the rest were.
 */
export function failoverLosses(snapshot: Pick<JobSnapshot, 'jobs' | 'stalled' | 'stalledBefore'>, moves: FailoverMoves): FailoverLosses {
  let ackedMovesLost = 0;
  let counterIncrementsLost = 0;
  for (let id = 1; id <= snapshot.jobs; id++) {
    const stalled = snapshot.stalled[id] ?? Number.NaN;
    const gained = Number.isNaN(stalled) ? 0 : Math.max(0, stalled - snapshot.stalledBefore);
    const before = moves.before[id] ?? 0;
    const after = moves.after[id] ?? 0;
    const survived = Math.max(0, gained - after);
    const lost = Math.max(0, before - survived);
    ackedMovesLost += Math.max(0, lost - (moves.unconfirmed[id] ?? 0));
    counterIncrementsLost += Math.max(0, before + after - gained);
  }
  return { ackedMovesLost, jobsRecoveredTwice: jobsOnBothSides(moves, snapshot.jobs), counterIncrementsLost };
}

/**
 * Every take of a job beyond its first, on either side of the failover, from the workers' own
 * record: the run's double executions, which the promoted replica's `runs` counters undercount.
 */
export function takesBeyondFirst(takes: FailoverSides): number {
  let again = 0;
  for (let id = 1; id < takes.before.length; id++) again += Math.max(0, (takes.before[id] ?? 0) + (takes.after[id] ?? 0) - 1);
  return again;
}

/**
 * The jobs 1..last counted on both sides of the failover: recovered twice (the sweepers' moves), or
 * run twice (the workers' takes; the promoted replica cannot say so, as a `runs` increment made on
 * the old primary and never replicated is gone with it).
 */
export function jobsOnBothSides(sides: FailoverSides, last = sides.before.length - 1): number {
  let both = 0;
  for (let id = 1; id <= last; id++) if ((sides.before[id] ?? 0) > 0 && (sides.after[id] ?? 0) > 0) both++;
  return both;
}

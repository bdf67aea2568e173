/**
 * A library run's AuditCounts: the figures its audit tallied like any run's (audit/rules.ts
 * JobTally), those it reads from the library's own layout, and null for what only the model
 * queue's consequences measure (cycles, workers, the observer, live leases). Pure.
 *
 * A library's counter figures are measured only where it keeps the counter they are read from:
 * null, not 0, where it keeps none (NO_STALL_COUNT, NO_COUNTER), so that the report shows "—" and
 * a run is not called clean on a count nobody made.
 */
import type { JobTally } from '../audit/rules.js';
import type { AuditCounts } from '../shared/model.js';

type CounterFigures = 'lostIncrements' | 'extraIncrements' | 'overcountedStalls' | 'overcountedStallCount' | 'deadLetterEscapes' | 'deadLetteredEarly';

type OwnFigures = Pick<AuditCounts, 'lostJobs' | 'misplaced' | 'unreclaimed'> & Partial<Pick<AuditCounts, CounterFigures>>;

/**
 * No stall count per job: nothing to find counted twice, and no job dead-lettered for its stalls
 * (node-resque fails every dead worker's job; Bee-Queue never fails a job for stalling).
 */
export const NO_STALL_COUNT = { overcountedStalls: null, overcountedStallCount: null, deadLetterEscapes: null, deadLetteredEarly: null } as const;

/** No counter of recoveries at all (Bee-Queue): no increment to lose or add either. */
export const NO_COUNTER = { ...NO_STALL_COUNT, lostIncrements: null, extraIncrements: null } as const;

export function libraryCounts(tally: JobTally, own: OwnFigures): AuditCounts {
  const figures = tally.figures;
  return {
    ...figures,
    deadLetterEscapes: 0,
    deadLetteredEarly: 0,
    duplicatePendingAtEnd: figures.duplicatePending,
    ...own,
    forgottenStalls: null,
    forgottenStallCount: null,
    doubleExecutions: null,
    windowInNeither: null,
    windowInBoth: null,
    unacknowledgedMoves: 0,
    stolenLeases: null,
    misreported: null,
    // A library's snapshot reads its own layout by job id (id-readers.ts); its stray entries are not counted.
    strayEntries: null,
  };
}

/** In how many of `lists` (arrays by id, as the snapshots read them: id-readers.ts) job `id` stands: a list holding it twice counts once, that is a duplicate. */
export function placesOf(id: number, lists: readonly ArrayLike<number>[]): number {
  return lists.reduce((sum, list) => sum + ((list[id] ?? 0) > 0 ? 1 : 0), 0);
}

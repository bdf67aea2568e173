/**
 * A library run's AuditCounts: the figures its audit tallied like any run's (audit/rules.ts
 * JobTally), those it reads from the library's own layout, and null for what only the model
 * queue's consequences measure (cycles, workers, the observer, live leases). Pure.
 */
import type { JobTally } from '../audit/rules.js';
import type { AuditCounts } from '../model.js';

type OwnFigures = Pick<AuditCounts, 'lostJobs' | 'misplaced' | 'unreclaimed' | 'deadLetterEscapes' | 'deadLetteredEarly'> &
  Partial<Pick<AuditCounts, 'lostIncrements' | 'extraIncrements'>>;

export function libraryCounts(tally: JobTally, own: OwnFigures): AuditCounts {
  const figures = tally.figures;
  return {
    ...figures,
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
  };
}

/**
 * Where each figure of a run comes from. Some are read from the server's state alone (a duplicate
 * entry in pending is there for anyone to see with LRANGE); some only from the sweepers' own
 * records of what they moved (with a sorted-set pending, or once a job is dead-lettered, the
 * server's final state of a loop run looks like an atomic run's, and only those records show the
 * second move); some set one against the other. The report says which, figure by figure.
 */
import { ANOMALIES, FIGURES, type AuditCounts, type FigureSource, type FigureSources, type SourcedFigure } from '../shared/model.js';

/** Each figure's source when it is measured: FIGURES says, and the forgotten stalls' total is theirs. */
function sourceOf(name: SourcedFigure): FigureSource | undefined {
  if (name === 'forgottenStallCount') return sourceOf('forgottenStalls');
  if (name === 'overcountedStallCount') return sourceOf('overcountedStalls');
  return FIGURES.find((figure) => figure.field === name)?.source;
}

/**
 * The sources of one run's figures: null for a figure not measured. Moves the server shows but no
 * sweeper heard back (faults) are counted as recoveries, and beyond a job's first as double
 * recoveries, from the server; with --cycles the true
 * stall counts behind the counter's figures (escapes, over-counts, early dead-letters) and the
 * duplicates taken out of pending during the run come from the re-leaser's record; across a
 * failover (`failedOver`) the double executions come from the workers' own records.
 */
export function figureSources(counts: AuditCounts, cycles: number, failedOver = false): FigureSources {
  const sources = Object.fromEntries(
    [...ANOMALIES, 'recoveries', 'forgottenStallCount', 'overcountedStallCount'].map((name) => {
      const figure = name as SourcedFigure;
      return [figure, counts[figure] === null ? null : (sourceOf(figure) ?? null)];
    }),
  ) as Record<SourcedFigure, FigureSource | null>;
  if (counts.unacknowledgedMoves > 0) {
    sources.recoveries = 'server+sweepers';
    // With one cycle the moves beyond a job's first count the unacknowledged ones too (the cycles'
    // sums count the sweepers' records alone).
    if (cycles <= 1 && sources.doubleRecoveries === 'sweepers') sources.doubleRecoveries = 'server+sweepers';
  }
  if (cycles > 1) {
    // The real stalls behind these come from the re-leaser's record of the stalls it caused.
    for (const figure of ['deadLetterEscapes', 'overcountedStalls', 'overcountedStallCount', 'deadLetteredEarly'] as const) sources[figure] = 'server+releaser';
    // The re-leaser took jobs out of pending during the run: the duplicates it found there are its
    // record, not the server's final state, and they are counted in with the ones still there.
    sources.duplicatePending = 'server+releaser';
  }
  // Across a failover the promoted replica's `runs` counters lack the old primary's last
  // increments: the double executions are counted from the workers' own record of their takes.
  if (failedOver && sources.doubleExecutions !== null) sources.doubleExecutions = 'workers';
  return sources;
}

/** What each source means, in the words the table's legend and the docs use. */
export const SOURCE_WORDS: { readonly [source in FigureSource]: string } = {
  server: "the server's state",
  sweepers: "the sweepers' own records",
  'server+sweepers': "the server's state against the sweepers' records",
  'server+releaser': "the server's state against the re-leaser's record",
  observer: 'what the observer saw on the server during the run',
  workers: "the workers' own records",
};

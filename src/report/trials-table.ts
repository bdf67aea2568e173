/**
 * The --trials table: for each mode its reproduction rate and the min / median / max of every
 * anomaly count and of jobs/s, then one plain line per mode. A count the trials did not measure
 * shows as —.
 */
import { Chalk } from 'chalk';
import Table from 'cli-table3';
import type { Spread, TrialSummary } from '../audit/trials.js';
import { NOT_MEASURED, headWords } from './legend.js';
import { ANOMALIES, FIGURES, type Anomaly } from '../shared/model.js';
import { groupFigure, groupThousands, percent, plural, wrapLines } from '../shared/text.js';
import { renderFittedTable } from './fitted-table.js';
import { headingOf } from './figure-heading.js';
import type { TableLayout } from './report.js';

/** Always shown; the other anomaly columns only where some trial counted one (with --wide: measured one). */
function always(name: Anomaly): boolean {
  return FIGURES.some((figure) => figure.field === name && figure.trialsAlways === true);
}

function formatSpread(s: Spread | null): string {
  if (s === null) return NOT_MEASURED;
  return `${groupFigure(s.min)} / ${groupFigure(s.median)} / ${groupFigure(s.max)}`;
}

function formatRate(summary: Pick<TrialSummary, 'reproduced' | 'trials' | 'reproductionRate'>): string {
  return `${summary.reproduced}/${summary.trials} (${percent(summary.reproductionRate)})`;
}

/**
 * Fitted (the default): one column per mode and a row per figure, like the race table; wide: a
 * row per mode with every figure across, as it always was.
 */
export function renderTrialsTable(summaries: readonly TrialSummary[], layout: TableLayout): string {
  const paint = new Chalk({ level: layout.color ? 1 : 0 });
  const worst = (s: TrialSummary, name: Anomaly): number => s[name]?.max ?? 0;
  const spread = (s: TrialSummary, name: Anomaly): string =>
    s[name] === null ? NOT_MEASURED : worst(s, name) === 0 ? paint.green(formatSpread(s[name])) : paint.red(formatSpread(s[name]));
  const rate = (s: TrialSummary): string => (s.reproduced === 0 ? paint.green(formatRate(s)) : paint.red(formatRate(s)));
  // The wide table: every anomaly the trials measured, at 0 as well. One no mode's trials measured
  // is left out, as in the race table.
  const measured = (name: Anomaly): boolean => summaries.some((s) => s[name] !== null);
  const anomalies = ANOMALIES.filter((name) => measured(name) && (always(name) || layout.wide || summaries.some((s) => worst(s, name) > 0)));
  const modes = summaries.map((s) => s.mode);
  let table: string;
  if (layout.wide) {
    const wide = new Table({
      head: ['mode', 'trials', 'reproduced', ...anomalies.map((name) => headingOf(name, modes)), 'jobs/s'],
      style: { head: [], border: [] },
      chars: { 'left-mid': '', mid: '', 'mid-mid': '', 'right-mid': '' },
    });
    for (const s of summaries) wide.push([s.mode, String(s.trials), rate(s), ...anomalies.map((name) => spread(s, name)), formatSpread(s.jobsPerSec)]);
    table = wide.toString();
  } else {
    table = renderFittedTable(
      summaries.map((s) => s.mode),
      [
        { label: 'trials', cells: summaries.map((s) => groupThousands(s.trials)) },
        { label: 'reproduced', cells: summaries.map(rate) },
        ...anomalies.map((name) => ({ label: headWords(headingOf(name, modes)), cells: summaries.map((s) => spread(s, name)) })),
        { label: 'jobs/s', cells: summaries.map((s) => formatSpread(s.jobsPerSec)) },
      ],
      layout.width,
    );
  }
  return ['min / median / max per trial', table, ...trialsSummaryLines(summaries).map((line) => wrapLines(line, layout.width))].join('\n');
}

/** What the trials of each mode came to, a sentence per mode: under the trials table, and on the page. */
export function trialsSummaryLines(summaries: readonly TrialSummary[]): string[] {
  return summaries.map((s) =>
    s.reproduced === 0
      ? `${s.mode}: clean in ${s.trials === 2 ? 'both trials' : `all ${plural(s.trials, 'trial')}`}.`
      : `${s.mode}: anomalies in ${formatRate(s)} of the trials${describeWorst(s)}.`,
  );
}

function describeWorst(s: TrialSummary): string {
  const shown = ANOMALIES.flatMap((name) => {
    const spread = s[name];
    return spread && spread.max > 0 ? [`${headWords(headingOf(name, [s.mode]))} median ${groupFigure(spread.median)}, max ${groupFigure(spread.max)}`] : [];
  });
  return shown.length > 0 ? `; ${shown.join('; ')}` : '';
}

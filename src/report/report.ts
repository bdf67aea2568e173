/**
 * Two reporters of one report: a table with a plain-words readout for people, and one JSON object
 * for machines (nothing else on stdout). Both only format what the run measured.
 */
import { Chalk } from 'chalk';
import Table from 'cli-table3';
import { serverHeadline } from '../server/connection.js';
import { groupThousands, plural, wrapLines } from '../text.js';
import { renderFittedTable } from './fitted-table.js';
import { consequenceLines, hasCycles, hasFaults, hasWorkers, observed } from './consequences.js';
import type { RaceReport } from './json.js';
import { STRATEGIES } from '../sweepers/strategies.js';
import { ANOMALIES, type AuditCounts, type Mode, type RunResult } from '../model.js';

export interface Column {
  readonly head: string;
  readonly value: (run: RunResult) => string | number;
  /** Anomaly columns are green at zero and red otherwise. */
  readonly anomaly?: keyof AuditCounts;
  /** Columns that apply only to some runs show only when one of them is in the report. */
  readonly applies?: (run: RunResult) => boolean;
  /**
   * A row of the default (fitted) table. Other anomalies are summed there into "other anomalies"
   * and named under it when not zero; other figures show with --wide.
   */
  readonly headline?: true;
}

export const COLUMNS: readonly Column[] = [
  { head: 'mode', value: (r) => r.mode },
  { head: 'sweepers', value: (r) => r.sweepers },
  { head: 'jobs', value: (r) => r.jobs, headline: true },
  { head: 'recoveries', value: (r) => r.recoveries, headline: true },
  { head: 'double\nrecoveries', value: (r) => r.doubleRecoveries, anomaly: 'doubleRecoveries', headline: true },
  { head: 'duplicate\npending', value: (r) => r.duplicatePending, anomaly: 'duplicatePending', headline: true },
  { head: 'lost\nincrements', value: (r) => r.lostIncrements, anomaly: 'lostIncrements', headline: true },
  { head: 'extra\nincrements', value: (r) => r.extraIncrements, anomaly: 'extraIncrements' },
  { head: 'lost\njobs', value: (r) => r.lostJobs, anomaly: 'lostJobs', headline: true },
  { head: 'misplaced', value: (r) => r.misplaced, anomaly: 'misplaced' },
  { head: 'unreclaimed', value: (r) => r.unreclaimed, anomaly: 'unreclaimed' },
  { head: 'stolen\nleases', value: (r) => r.stolenLeases, anomaly: 'stolenLeases', applies: (r) => r.live > 0 || r.stolenLeases > 0 },
  // The figures a mode or a flag was chosen for are rows of their own where they apply.
  { head: 'mis-\nreported', value: (r) => r.misreported, anomaly: 'misreported', applies: (r) => STRATEGIES[r.mode].ownColumn === 'misreported' || r.misreported > 0, headline: true },
  { head: 'retries', value: (r) => r.retries, applies: (r) => STRATEGIES[r.mode].ownColumn === 'retries' || r.retries > 0, headline: true },
  { head: 'unacked\nmoves', value: (r) => r.unacknowledgedMoves, applies: (r) => hasFaults(r) || r.unacknowledgedMoves > 0, headline: true },
  { head: 'noscript\nfallbacks', value: (r) => r.noscriptFallbacks, applies: (r) => hasFaults(r) || r.noscriptFallbacks > 0, headline: true },
  { head: 'double\nexecutions', value: (r) => r.doubleExecutions, anomaly: 'doubleExecutions', applies: hasWorkers, headline: true },
  { head: 'dead-letter\nescapes', value: (r) => r.deadLetterEscapes, anomaly: 'deadLetterEscapes', applies: hasCycles, headline: true },
  { head: 'window in\nneither', value: (r) => r.windowInNeither, anomaly: 'windowInNeither', applies: observed, headline: true },
  { head: 'window in\nboth', value: (r) => r.windowInBoth, anomaly: 'windowInBoth', applies: observed, headline: true },
  { head: 'samples', value: (r) => r.samples ?? 0, applies: observed },
  { head: 'round trips\nper job', value: (r) => roundTripsPerJob(r) },
  { head: 'wall ms', value: (r) => r.wallMs.toFixed(0) },
  { head: 'jobs/s', value: (r) => r.jobsPerSec, headline: true },
];

/** A column's head on one line: "double recoveries", "misreported". */
export function columnName(column: Pick<Column, 'head'>): string {
  return column.head.replace(/-\n/g, '').replace(/\n/g, ' ');
}

/** Commands sent per recovery, to two decimals; '-' when nothing was recovered. */
export function roundTripsPerJob(run: Pick<RunResult, 'roundTrips' | 'recoveries'>): string {
  return run.recoveries > 0 ? (run.roundTrips / run.recoveries).toFixed(2) : '-';
}

function columnsFor(runs: readonly RunResult[]): readonly Column[] {
  return COLUMNS.filter((column) => !column.applies || runs.some(column.applies));
}

/** A run's readout; with several queues it says which queue on which node. */
export function runReadout(report: Pick<RaceReport, 'totals'>, run: RunResult): string {
  return report.totals ? `queue ${run.queue} on ${run.node ?? '?'}: ${readout(run)}` : readout(run);
}

export interface TableLayout {
  readonly color: boolean;
  /** The width to fit (see text.ts); ignored with `wide`. */
  readonly width: number;
  /** Every column, one row per run, however wide. */
  readonly wide: boolean;
}

function painter(color: boolean): (text: string, count: number) => string {
  const paint = new Chalk({ level: color ? 1 : 0 });
  return (text, count) => (count === 0 ? paint.green(text) : paint.red(text));
}

/** The anomalies the fitted table sums into one row: those with no row of their own. */
const FOLDED = COLUMNS.filter((column) => column.anomaly !== undefined && !column.headline);

function otherAnomalies(run: RunResult): number {
  return FOLDED.reduce((sum, column) => sum + (column.anomaly ? run[column.anomaly] : 0), 0);
}

/**
 * The default table: the headline figures as rows, one column per run (per mode's sum with
 * several queues, whose queues the readouts name), then what "other anomalies" holds.
 */
function fittedTable(report: RaceReport, layout: TableLayout): Laid {
  const colour = painter(layout.color);
  const runs = report.totals ?? report.runs;
  const columns = columnsFor(runs).filter((column) => column.headline);
  const rows = columns.map((column) => ({
    label: columnName(column),
    cells: runs.map((run) => {
      const text = groupThousands(column.value(run));
      return column.anomaly ? colour(text, run[column.anomaly]) : text;
    }),
  }));
  // With the anomalies, before jobs/s.
  rows.splice(rows.length - 1, 0, { label: 'other anomalies', cells: runs.map((run) => colour(groupThousands(otherAnomalies(run)), otherAnomalies(run))) });
  const named = runs.flatMap((run) => {
    const counts = FOLDED.filter((column) => column.anomaly && run[column.anomaly] > 0).map((column) => `${groupThousands(column.anomaly ? run[column.anomaly] : 0)} ${columnName(column)}`);
    return counts.length > 0 ? [`${run.mode} ${counts.join(', ')}`] : [];
  });
  return {
    before: report.totals && report.runs.length > report.totals.length ? [`each column sums its mode's queues (${plural(report.runs.length, 'queue')} in all; each queue's row: --wide or --json)`] : [],
    table: renderFittedTable(runs.map((run) => run.mode), rows, layout.width),
    after: named.length > 0 ? [`other anomalies: ${named.join('; ')} (each its own column with --wide)`] : [],
  };
}

/** Every column, one row per run (and per mode's sum), as the table always was. */
function wideTable(report: RaceReport, layout: TableLayout): Laid {
  const colour = painter(layout.color);
  const columns = columnsFor(report.runs);
  const table = new Table({
    head: columns.map((c) => c.head),
    style: { head: [], border: [] },
    // No rule between rows: a row's lines are held together by the cell borders.
    chars: { 'left-mid': '', mid: '', 'mid-mid': '', 'right-mid': '' },
    colAligns: columns.map((c) => (c.head === 'mode' ? 'left' : 'right')),
  });
  const rows = report.totals ? [...report.runs, ...report.totals.map((t) => ({ ...t, mode: `${t.mode} total` as Mode }))] : report.runs;
  for (const run of rows) {
    table.push(
      columns.map((column) => {
        const value = column.value(run);
        const text = column.head === 'mode' ? String(value) : groupThousands(value);
        return column.anomaly ? colour(text, run[column.anomaly]) : text;
      }),
    );
  }
  return { before: [], table: table.toString(), after: [] };
}

interface Laid {
  readonly before: readonly string[];
  readonly table: string;
  readonly after: readonly string[];
}

export function renderTable(report: RaceReport, layout: TableLayout): string {
  const cluster = report.primaries ? [`cluster: ${report.primaries.length} primaries (${report.primaries.join(', ')})`] : [];
  const laid = layout.wide ? wideTable(report, layout) : fittedTable(report, layout);
  const readouts = report.runs.flatMap((run) => [runReadout(report, run), ...consequenceLines(run)]);
  // The table is laid out to fit; the sentences around it wrap at the same width.
  const fit = (lines: readonly string[]): string[] => lines.map((line) => wrapLines(line, layout.width));
  return [...fit([serverHeadline(report.server, report.embedded), ...cluster, ...laid.before]), laid.table, ...fit([...laid.after, ...readouts])].join('\n');
}

/** One line in plain words per run, from its own counts. */
export function readout(run: RunResult): string {
  const anomalies = ANOMALIES.filter((name) => run[name] > 0);
  const head = `${run.mode} (${plural(run.sweepers, 'sweeper')}, ${plural(run.jobs, 'job')}):`;
  if (anomalies.length === 0) {
    return `${head} every expired lease was reclaimed exactly once and every stall was counted (${plural(run.recoveries, 'recovery', 'recoveries')}, 0 anomalies).`;
  }
  const parts: string[] = [];
  if (run.jobsRecoveredMoreThanOnce > 0) {
    parts.push(`recovered ${plural(run.jobsRecoveredMoreThanOnce, 'job')} more than once (${plural(run.doubleRecoveries, 'extra recovery', 'extra recoveries')})`);
  }
  if (run.duplicatePending > 0) parts.push(`left ${plural(run.duplicatePending, 'duplicate entry', 'duplicate entries')} in pending (jobs that would run twice)`);
  if (run.lostIncrements > 0) parts.push(`lost ${plural(run.lostIncrements, 'stall-counter increment')}`);
  if (run.extraIncrements > 0) parts.push(`counted ${plural(run.extraIncrements, 'stall')} that no sweep recorded`);
  if (run.lostJobs > 0) parts.push(`lost ${plural(run.lostJobs, 'job')} (in no set at all)`);
  if (run.misplaced > 0) parts.push(`misplaced ${plural(run.misplaced, 'job')}`);
  if (run.doubleExecutions > 0) parts.push(`executed jobs again ${plural(run.doubleExecutions, 'time')} (double executions)`);
  if (run.deadLetterEscapes > 0) parts.push(`let ${plural(run.deadLetterEscapes, 'job')} escape the dead letter (stalled ${run.maxStalled}+ times, not in dead)`);
  if (run.windowInNeither > 0) parts.push(`was seen mid-sweep with a job in no place ${plural(run.windowInNeither, 'time')}`);
  if (run.windowInBoth > 0) parts.push(`was seen with a job in two places at once ${plural(run.windowInBoth, 'time')}`);
  if (run.unreclaimed > 0) parts.push(`left ${plural(run.unreclaimed, 'expired lease')} unreclaimed${run.cutShort ? ' (its sweepers hit their sweep limit)' : ''}`);
  if (run.stolenLeases > 0) parts.push(`took ${plural(run.stolenLeases, 'job')} whose lease was still valid (stolen from a busy worker)`);
  if (run.misreported > 0) parts.push(`returned moves that disagree with the server for ${plural(run.misreported, 'job')} (returned yet still in active, gone from active yet never returned, or no job id at all)`);
  const cut = run.cutShort ? ` The run was cut short: a sweeper stopped after ${plural(run.maxSweeps, 'sweep')} (--max-sweeps).` : '';
  return `${head} ${parts.join(', ')}.${cut}`;
}


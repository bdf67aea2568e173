/**
 * Two reporters of one report: a table with a plain-words readout for people, and one JSON object
 * for machines (nothing else on stdout). Both only format what the run measured.
 */
import { Chalk } from 'chalk';
import Table from 'cli-table3';
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
}

export const COLUMNS: readonly Column[] = [
  { head: 'mode', value: (r) => r.mode },
  { head: 'sweepers', value: (r) => r.sweepers },
  { head: 'jobs', value: (r) => r.jobs },
  { head: 'recoveries', value: (r) => r.recoveries },
  { head: 'double\nrecoveries', value: (r) => r.doubleRecoveries, anomaly: 'doubleRecoveries' },
  { head: 'duplicate\npending', value: (r) => r.duplicatePending, anomaly: 'duplicatePending' },
  { head: 'lost\nincrements', value: (r) => r.lostIncrements, anomaly: 'lostIncrements' },
  { head: 'extra\nincrements', value: (r) => r.extraIncrements, anomaly: 'extraIncrements' },
  { head: 'lost\njobs', value: (r) => r.lostJobs, anomaly: 'lostJobs' },
  { head: 'misplaced', value: (r) => r.misplaced, anomaly: 'misplaced' },
  { head: 'unreclaimed', value: (r) => r.unreclaimed, anomaly: 'unreclaimed' },
  { head: 'stolen\nleases', value: (r) => r.stolenLeases, anomaly: 'stolenLeases', applies: (r) => r.live > 0 || r.stolenLeases > 0 },
  { head: 'mis-\nreported', value: (r) => r.misreported, anomaly: 'misreported', applies: (r) => STRATEGIES[r.mode].ownColumn === 'misreported' || r.misreported > 0 },
  { head: 'retries', value: (r) => r.retries, applies: (r) => STRATEGIES[r.mode].ownColumn === 'retries' || r.retries > 0 },
  { head: 'unacked\nmoves', value: (r) => r.unacknowledgedMoves, applies: (r) => hasFaults(r) || r.unacknowledgedMoves > 0 },
  { head: 'noscript\nfallbacks', value: (r) => r.noscriptFallbacks, applies: (r) => hasFaults(r) || r.noscriptFallbacks > 0 },
  { head: 'double\nexecutions', value: (r) => r.doubleExecutions, anomaly: 'doubleExecutions', applies: hasWorkers },
  { head: 'dead-letter\nescapes', value: (r) => r.deadLetterEscapes, anomaly: 'deadLetterEscapes', applies: hasCycles },
  { head: 'window in\nneither', value: (r) => r.windowInNeither, anomaly: 'windowInNeither', applies: observed },
  { head: 'window in\nboth', value: (r) => r.windowInBoth, anomaly: 'windowInBoth', applies: observed },
  { head: 'samples', value: (r) => r.samples ?? 0, applies: observed },
  { head: 'round trips\nper job', value: (r) => roundTripsPerJob(r) },
  { head: 'wall ms', value: (r) => r.wallMs.toFixed(0) },
  { head: 'jobs/s', value: (r) => r.jobsPerSec },
];

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

export function renderTable(report: RaceReport, color: boolean): string {
  const paint = new Chalk({ level: color ? 1 : 0 });
  const columns = columnsFor(report.runs);
  const table = new Table({
    head: columns.map((c) => c.head),
    style: { head: [], border: [] },
  });
  const rows = report.totals ? [...report.runs, ...report.totals.map((t) => ({ ...t, mode: `${t.mode} total` as Mode }))] : report.runs;
  for (const run of rows) {
    table.push(
      columns.map((column) => {
        const text = String(column.value(run));
        if (!column.anomaly) return text;
        return run[column.anomaly] === 0 ? paint.green(text) : paint.red(text);
      }),
    );
  }
  const server = `${report.server.kind} ${report.server.version} at ${report.server.url}`;
  const cluster = report.primaries ? [`cluster: ${report.primaries.length} primaries (${report.primaries.join(', ')})`] : [];
  const readouts = report.runs.flatMap((run) => [runReadout(report, run), ...consequenceLines(run)]);
  return [`server: ${server}`, ...cluster, table.toString(), ...readouts].join('\n');
}

/** One line in plain words per run, from its own counts. */
export function readout(run: RunResult): string {
  const anomalies = ANOMALIES.filter((name) => run[name] > 0);
  const head = `${run.mode} (${run.sweepers} sweeper${run.sweepers === 1 ? '' : 's'}, ${run.jobs} jobs):`;
  if (anomalies.length === 0) {
    return `${head} every expired lease was reclaimed exactly once and every stall was counted (${run.recoveries} recoveries, 0 anomalies).`;
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

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

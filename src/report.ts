/**
 * Two reporters of one report: a table with a plain-words readout for people, and one JSON object
 * for machines (nothing else on stdout). Both only format what the run measured.
 */
import { Chalk } from 'chalk';
import Table from 'cli-table3';
import { ANOMALIES, type AuditCounts } from './audit.js';
import type { ServerInfo } from './connection.js';
import type { Mode } from './options.js';
import type { RunResult } from './run.js';

export interface RaceReport {
  readonly server: ServerInfo & { readonly url: string };
  readonly runs: readonly RunResult[];
  /** One summed row per mode (see totals.ts). */
  readonly totals?: readonly RunResult[];
  /** Several queues per mode, or a cluster: the table gets each queue's node and the totals. */
  readonly perQueue?: boolean;
  /** The cluster's primaries (`host:port`), when the server is a cluster. */
  readonly primaries?: readonly string[];
}

/** The JSON contract: fields are only ever added, never renamed or removed. */
export function reportJson(report: RaceReport): object {
  return {
    server: { kind: report.server.kind, version: report.server.version, url: report.server.url, ...(report.primaries ? { primaries: report.primaries } : {}) },
    runs: report.runs.map(runJson),
    ...(report.totals ? { totals: report.totals.map(runJson) } : {}),
  };
}

function runJson(run: RunResult): object {
  return {
      mode: run.mode,
      queue: run.queue,
      sweepers: run.sweepers,
      jobs: run.jobs,
      batch: run.batch,
      maxStalled: run.maxStalled,
      stalledBefore: run.stalledBefore,
      recoveries: run.recoveries,
      doubleRecoveries: run.doubleRecoveries,
      duplicatePending: run.duplicatePending,
      lostIncrements: run.lostIncrements,
      extraIncrements: run.extraIncrements,
      lostJobs: run.lostJobs,
      misplaced: run.misplaced,
      unreclaimed: run.unreclaimed,
      wallMs: run.wallMs,
      jobsPerSec: run.jobsPerSec,
      roundTrips: run.roundTrips,
      sweeps: run.sweeps,
      cutShort: run.cutShort,
      callMsP50: run.callMsP50,
      callMsP99: run.callMsP99,
      callMsMax: run.callMsMax,
      serverCallMsP99: run.serverCallMsP99,
      node: run.node ?? null,
  };
}

interface Column {
  readonly head: string;
  readonly value: (run: RunResult) => string | number;
  /** Anomaly columns are green at zero and red otherwise. */
  readonly anomaly?: keyof AuditCounts;
}

const COLUMNS: readonly Column[] = [
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
  { head: 'wall ms', value: (r) => r.wallMs.toFixed(0) },
  { head: 'jobs/s', value: (r) => r.jobsPerSec },
];

export function renderTable(report: RaceReport, color: boolean): string {
  const paint = new Chalk({ level: color ? 1 : 0 });
  const table = new Table({
    head: COLUMNS.map((c) => c.head),
    style: { head: [], border: [] },
  });
  const rows = report.perQueue ? [...report.runs, ...(report.totals ?? []).map((t) => ({ ...t, mode: `${t.mode} total` as Mode }))] : report.runs;
  for (const run of rows) {
    table.push(
      COLUMNS.map((column) => {
        const text = String(column.value(run));
        if (!column.anomaly) return text;
        return run[column.anomaly] === 0 ? paint.green(text) : paint.red(text);
      }),
    );
  }
  const server = `${report.server.kind} ${report.server.version} at ${report.server.url}`;
  const cluster = report.primaries ? [`cluster: ${report.primaries.length} primaries (${report.primaries.join(', ')})`] : [];
  const readouts = report.runs.map((run) => (report.perQueue ? `queue ${run.queue} on ${run.node ?? '?'}: ${readout(run)}` : readout(run)));
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
  if (run.unreclaimed > 0) parts.push(`left ${plural(run.unreclaimed, 'expired lease')} unreclaimed${run.cutShort ? ' (its sweepers hit their sweep limit)' : ''}`);
  return `${head} ${parts.join(', ')}.`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

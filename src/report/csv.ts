/**
 * --csv: one row per run, every field quoted and a header row first, as redis-benchmark --csv
 * does. The headers are the JSON's own field names (docs/json.md), so a column means what the
 * field of that name means; every column is on every row, so the file's shape does not depend on
 * which modes ran or which flags were given. A figure the run did not measure is an empty field.
 */
import { runJson } from './json.js';
import { ANOMALIES, type RunResult } from '../model.js';

/** The columns, in order: who and where, the settings, the verdict, the figures, the costs. */
export const CSV_FIELDS = [
  'trial',
  'mode',
  'queue',
  'node',
  'sweepers',
  'jobs',
  'batch',
  'maxStalled',
  'stalledBefore',
  'pending',
  'live',
  'clean',
  'anomalies',
  'recoveries',
  ...ANOMALIES,
  'retries',
  'unacknowledgedMoves',
  'noscriptFallbacks',
  'samples',
  'executions',
  'roundTrips',
  'sweeps',
  'cutShort',
  'wallMs',
  'jobsPerSec',
  'callMsP50',
  'callMsP99',
  'callMsMax',
  'serverCallMsP99',
] as const;

export function csvField(value: unknown): string {
  return `"${value === null || value === undefined ? '' : String(value).replaceAll('"', '""')}"`;
}

export function renderCsv(runs: readonly RunResult[]): string {
  const rows = runs.map((run) => {
    // Every anomaly figure, even those the JSON leaves out where they cannot arise (as 0).
    const fields: Record<string, unknown> = { ...Object.fromEntries(ANOMALIES.map((name) => [name, run[name]])), ...runJson(run) };
    return CSV_FIELDS.map((name) => fields[name]);
  });
  return [[...CSV_FIELDS], ...rows].map((row) => row.map(csvField).join(',')).join('\n');
}

/**
 * --csv: one row per run, every field quoted and a header row first, as redis-benchmark --csv
 * does. The headers are the JSON's own field names (docs/json.md), so a column means what the
 * field of that name means; every column is on every row, so the file's shape does not depend on
 * which modes ran or which flags were given. A figure the run did not measure is an empty field.
 * The one exception is the library (LIBRARY_COLUMNS): see there.
 */
import { runJson, type RunJson } from './json.js';
import { FIGURES, type RunResult } from '../shared/model.js';

/** Who and where, the settings, the verdict. */
const HEAD = [
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
] as const satisfies readonly (keyof RunJson)[];

/** After the anomalies: a figure's detail, and the figures other than anomalies in the order they have here. */
const AFTER_ANOMALIES = [
  'forgottenStallCount',
  'overcountedStallCount',
  'jobsRecoveredMoreThanOnce',
  'mostPendingEntries',
  'retries',
  'unacknowledgedMoves',
  'noscriptFallbacks',
  'workers',
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
  // Added after the sweepers' own figure had long been placed: last, so that every column before
  // them keeps the position a reader may take it by.
  'workerNoscriptFallbacks',
  'releaserNoscriptFallbacks',
  'observerNoscriptFallbacks',
] as const satisfies readonly (keyof RunJson)[];

/**
 * The columns, in order: who and where, the settings, the verdict, the recoveries and every
 * anomaly of FIGURES, any other figure that AFTER_ANOMALIES does not place, then the rest.
 */
export function csvFields(): readonly string[] {
  const placed: readonly string[] = [...HEAD, ...AFTER_ANOMALIES];
  const figures = FIGURES.filter((figure) => !placed.includes(figure.field));
  const first = figures.filter((figure) => figure.anomaly || figure.field === 'recoveries').map((figure) => figure.field);
  const others = figures.filter((figure) => !first.includes(figure.field)).map((figure) => figure.field);
  return [...HEAD, ...first, ...others, ...AFTER_ANOMALIES];
}

/**
 * The library a library mode raced and its version: the JSON's `library` object, one column per
 * field, each headed by the field's path. Only a CSV holding a library mode's run has them, so
 * that a run of the model queue alone prints the CSV it always has; and they come last, so that
 * such a CSV's header is the model queue's with these two added, and a reader that takes the
 * other columns by position reads both alike. A run of one of the tool's own modes beside a
 * library's (`--lib bullmq --mode atomic`) has them empty, as its JSON has no `library`.
 */
const LIBRARY_COLUMNS = ['library.name', 'library.version'] as const;

export function csvField(value: unknown): string {
  return `"${value === null || value === undefined ? '' : String(value).replaceAll('"', '""')}"`;
}

export function renderCsv(runs: readonly RunResult[]): string {
  const fields = csvFields();
  const withLibrary = runs.some((run) => run.library !== undefined);
  const header = withLibrary ? [...fields, ...LIBRARY_COLUMNS] : [...fields];
  const rows = runs.map((run) => {
    const json = runJson(run);
    const byName = json as unknown as Readonly<Record<string, unknown>>;
    const values = fields.map((name) => byName[name]);
    return withLibrary ? [...values, json.library?.name, json.library?.version] : values;
  });
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\n');
}

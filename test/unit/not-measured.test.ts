/**
 * A queue that keeps no counter: its counter figures are null, not 0, and every output says so —
 * `—` in the table, the trials table and the page, an empty CSV field, null in the JSON (which
 * the schema takes), null in the totals and the trials' spreads — while a run that measured them
 * beside it keeps its numbers. The run is clean on what it measured, and its readout does not
 * vouch for a counter it does not have.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeTrials } from '../../src/audit/trials.js';
import { racePage } from '../../src/html/page.js';
import { NO_COUNTER, NO_STALL_COUNT } from '../../src/libraries/counts.js';
import { NO_CONSEQUENCES, type RunResult } from '../../src/shared/model.js';
import { renderCsv } from '../../src/report/csv.js';
import { reportJson, runJson } from '../../src/report/json.js';
import { readout, renderTable } from '../../src/report/report.js';
import { totalsPerMode } from '../../src/report/totals.js';
import { renderTrialsTable } from '../../src/report/trials-table.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { SERVER, runResult } from '../helpers/run-result.js';

const PAGE = { command: 'emq-race', generatedAt: '2026-01-01T00:00:00.000Z', version: '0.0.0' };
const LAYOUT = { color: false, width: 200, wide: false };
const COUNTER_FIGURES = Object.keys(NO_COUNTER) as (keyof typeof NO_COUNTER)[];

/** A run of a queue with no counter, as a library's audit reports it. */
function unmeasured(over: Partial<RunResult> = {}): RunResult {
  return runResult({ ...NO_COUNTER, ...over });
}

test('the counter figures a library does not keep are null in the JSON, the schema takes them, and the run is clean on the rest', () => {
  const json = runJson(unmeasured()) as unknown as Record<string, unknown>;
  for (const field of COUNTER_FIGURES) assert.equal(json[field], null, field);
  assert.equal(json.overcountedStallCount, null);
  assert.equal(json.clean, true);
  assert.equal(json.anomalies, 0);
  const sources = json.sources as Record<string, unknown>;
  for (const field of ['lostIncrements', 'extraIncrements', 'overcountedStalls', 'deadLetteredEarly', 'deadLetterEscapes', 'overcountedStallCount'])
    assert.equal(sources[field], null, `${field} has no source`);
  const runs = [unmeasured(), unmeasured({ trial: 2, duplicatePending: 3, doubleRecoveries: 3 })];
  assertMatchesSchema(reportJson({ server: SERVER, runs, totals: totalsPerMode(runs), trials: summarizeTrials(runs) }), 'a run with no counter');
});

test('the table shows — for each, beside a run that measured them, and says what — means', () => {
  const runs = [unmeasured(), runResult({ mode: 'loop', lostIncrements: 4, overcountedStalls: 2, overcountedStallCount: 2, deadLetteredEarly: 1 })];
  const table = renderTable({ server: SERVER, runs }, LAYOUT);
  assert.match(table, /^lost increments +— +4$/m, table);
  assert.match(table, /^over-counted stalls +— +2$/m, table);
  assert.match(table, /^dead-lettered early +— +1$/m, table);
  assert.match(table, /— : not measured in this run\./);
  const wide = renderTable({ server: SERVER, runs }, { ...LAYOUT, wide: true });
  assert.match(wide, /│ +— +│/, wide);
});

test('a table none of whose runs measured a figure leaves its row out, in the default table and the wide one, as the page does', () => {
  for (const layout of [LAYOUT, { ...LAYOUT, width: 400, wide: true }]) {
    const table = renderTable({ server: SERVER, runs: [unmeasured(), unmeasured({ mode: 'loop' })] }, layout);
    assert.doesNotMatch(table, /increments|over-counted|dead-lettered/, table);
    assert.doesNotMatch(table, /not measured/, 'no dash, so no word for one');
    assert.match(table, /duplicate pending/, 'what the runs measured stays');
  }
});

test('the CSV leaves them empty, never 0', () => {
  const [header, row] = renderCsv([unmeasured()])
    .split('\n')
    .map((line) => line.split(','));
  for (const field of COUNTER_FIGURES) {
    const column = (header ?? []).indexOf(`"${field}"`);
    assert.ok(column > 0, `${field} has a column`);
    assert.equal(row?.[column], '""', field);
  }
});

test('totals: none measured stays null, some measured is their sum', () => {
  const [none] = totalsPerMode([unmeasured(), unmeasured({ queue: 'race-test-2' })]);
  for (const field of [...COUNTER_FIGURES, 'overcountedStallCount'] as const) assert.equal(none?.[field], null, field);
  const [some] = totalsPerMode([
    runResult({ ...NO_STALL_COUNT, lostIncrements: 2 }),
    runResult({ ...NO_STALL_COUNT, lostIncrements: 3, queue: 'race-test-2' }),
  ]);
  assert.equal(some?.lostIncrements, 5);
  assert.equal(some?.overcountedStalls, null);
  assert.equal(some?.overcountedStallCount, null);
});

test('trials: a figure no trial measured is null; — in the trials table beside a mode that measured it, and left out where none did', () => {
  const trials = summarizeTrials([unmeasured({ trial: 1 }), unmeasured({ trial: 2 })]);
  const [summary] = trials as unknown as Record<string, unknown>[];
  for (const field of ['lostIncrements', 'extraIncrements', 'overcountedStalls', 'deadLetteredEarly', 'deadLetterEscapes'])
    assert.equal(summary?.[field], null, field);
  assert.doesNotMatch(renderTrialsTable(trials, LAYOUT), /increments/);
  assert.doesNotMatch(renderTrialsTable(trials, { ...LAYOUT, width: 400, wide: true }), /increments/);
  const beside = summarizeTrials([
    unmeasured({ trial: 1 }),
    unmeasured({ trial: 2 }),
    runResult({ mode: 'loop', trial: 1, lostIncrements: 3 }),
    runResult({ mode: 'loop', trial: 2, lostIncrements: 5 }),
  ]);
  const table = renderTrialsTable(beside, LAYOUT);
  assert.match(table, /^lost increments +— +3/m, table);
});

test('the page shows a dash in their cells beside a run that measured them, and leaves out a row no run measured', () => {
  const runs = [unmeasured(), runResult({ mode: 'loop', lostIncrements: 4, overcountedStalls: 2, overcountedStallCount: 2, deadLetteredEarly: 1 })];
  const page = racePage(JSON.parse(JSON.stringify(reportJson({ server: SERVER, runs }))), PAGE);
  for (const field of ['lostIncrements', 'overcountedStalls', 'deadLetteredEarly']) {
    assert.match(page, new RegExp(`<td class="num anomaly na" data-run="0" data-field="${field}">—</td>`), field);
    assert.match(page, new RegExp(`<td class="num anomaly bad" data-run="1" data-field="${field}">`), field);
  }
  const alone = racePage(JSON.parse(JSON.stringify(reportJson({ server: SERVER, runs: [unmeasured()] }))), PAGE);
  assert.doesNotMatch(alone, /<th scope="row">lost increments<\/th>/);
});

test('the readout of a clean run with no counter says nothing of counting', () => {
  const line = readout(unmeasured());
  assert.doesNotMatch(line, /count/);
  assert.match(line, /reclaimed exactly once \(10 recoveries, 0 anomalies\)\.$/);
  assert.match(readout(runResult()), /every stall was counted/, 'a run that measured the counter still says so');
});

test('--wide prints every anomaly a run measured, at 0 as well; a figure no run measured stays out', () => {
  const runs = [runResult(), runResult({ mode: 'loop', lostIncrements: 4 })];
  const fitted = renderTable({ server: SERVER, runs }, LAYOUT);
  assert.doesNotMatch(fitted, /dead-letter escapes/, 'fitted: escapes only with --cycles or when counted');
  const wide = renderTable({ server: SERVER, runs }, { ...LAYOUT, width: 400, wide: true });
  assert.match(wide, /escapes/, wide);
  assert.match(wide, /leases/, wide);
  assert.doesNotMatch(wide, /forgotten/, 'forgotten stalls are measured only with --cycles');
  const trials = summarizeTrials([runResult({ trial: 1 }), runResult({ trial: 2 })]);
  assert.doesNotMatch(renderTrialsTable(trials, LAYOUT), /escapes|stolen/);
  const wideTrials = renderTrialsTable(trials, { ...LAYOUT, width: 400, wide: true });
  assert.match(wideTrials, /escapes/, wideTrials);
  assert.match(wideTrials, /stolen/, wideTrials);
});

test('an escape under --cycles may be a job in dead that stalled past its limit: the readout says so', () => {
  const cycled = runResult({ mode: 'loop', deadLetterEscapes: 5, consequences: { ...NO_CONSEQUENCES, cycles: 3 } });
  assert.match(readout(cycled), /let 5 jobs escape the dead letter \(stalled 3\+ times, then run again, or not in dead\)/);
  assert.match(readout(runResult({ mode: 'loop', deadLetterEscapes: 5 })), /let 5 jobs escape the dead letter \(stalled 3\+ times, not in dead\)/);
});

test("a library's run carries no batch, and a library with no stall limit no max-stalled: null in the JSON, empty in the CSV, left off the page", () => {
  const library = (mode: RunResult['mode'], name: 'bullmq' | 'node-resque' | 'bee-queue') =>
    runResult({ mode, batch: 100, maxStalled: 3, library: { name, version: '1.0.0' } });
  const runs = [
    runResult({ mode: 'atomic', batch: 100, maxStalled: 3 }),
    library('bullmq', 'bullmq'),
    library('node-resque', 'node-resque'),
    library('bee-queue', 'bee-queue'),
  ];
  const json = runs.map(runJson);
  assert.deepEqual(
    json.map((run) => [run.mode, run.batch, run.maxStalled]),
    [
      ['atomic', 100, 3],
      // BullMQ's maxStalledCount is set from --max-stalled; its check reads every stalled job at once.
      ['bullmq', null, 3],
      ['node-resque', null, null],
      ['bee-queue', null, null],
    ],
  );
  assertMatchesSchema(reportJson({ server: SERVER, runs }), "libraries' runs");
  const [header, ...rows] = renderCsv(runs).split('\n');
  const columns = (header ?? '').split(',');
  const cell = (row: string | undefined, name: string) => (row ?? '').split(',')[columns.indexOf(`"${name}"`)];
  assert.deepEqual(
    rows.map((row) => [cell(row, 'batch'), cell(row, 'maxStalled')]),
    [
      ['"100"', '"3"'],
      ['""', '"3"'],
      ['""', '""'],
      ['""', '""'],
    ],
  );
  const facts = (page: string) => [...page.matchAll(/<dt>([^<]*)<\/dt><dd>([^<]*)<\/dd>/g)].map((m) => `${m[1]}=${m[2]}`);
  const onlyLibraries = facts(racePage(reportJson({ server: SERVER, runs: runs.slice(2) }), { ...PAGE }));
  assert.ok(!onlyLibraries.some((fact) => /^(batch|max-stalled)=/.test(fact)), onlyLibraries.join('; '));
  const mixed = facts(racePage(reportJson({ server: SERVER, runs }), { ...PAGE }));
  assert.ok(mixed.includes('batch=100') && mixed.includes('max-stalled=3'), mixed.join('; '));
});

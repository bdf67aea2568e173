/**
 * One source per concept: the modes come from the strategy table and the figures from FIGURES, with
 * no other list to keep. The JSON Schema is checked against the tool's own words (the modes, a fully
 * populated run's fields, a trial summary's, the stated sources), every mode's run is validated
 * against it, and a mode and a figure defined here, registered into the tables, show up wherever the
 * tables say they should: the mode in `--mode all`, the schema check, the table and the page, on a
 * real server; the figure in the table, the CSV, the JSON, the totals, the trials table and the page.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LAPSED_LOCK_SOURCES } from '../../src/libraries/bullmq/lapsed-lock.js';
import { summarizeTrials } from '../../src/audit/trials.js';
import { parseModes } from '../../src/cli/options.js';
import { racePage } from '../../src/html/page.js';
import { ANOMALIES, FIGURES, NO_CONSEQUENCES, registerFigure, type RunResult } from '../../src/shared/model.js';
import { renderCsv } from '../../src/report/csv.js';
import { reportJson, runJson } from '../../src/report/json.js';
import { readout, renderTable } from '../../src/report/report.js';
import { totalsPerMode } from '../../src/report/totals.js';
import { renderTrialsTable } from '../../src/report/trials-table.js';
import { STRATEGIES, modeSets, modes, registerStrategy } from '../../src/sweepers/strategies.js';
import { runCli } from '../helpers/cli.js';
import { assertMatchesSchema, schemaGaps, type SchemaWords } from '../helpers/json-schema.js';
import { SERVER, failoverFigures, runResult } from '../helpers/run-result.js';
import { forOneServerKind } from '../helpers/servers.js';

const PAGE = { command: 'emq-race', generatedAt: '2026-01-01T00:00:00.000Z', version: '0.0.0' };
const LAYOUT = { color: false, width: 200, wide: false };

/** A run with every field the JSON can carry: workers, re-leases, the observer, a fault, a library, a failover drill and lapsed locks. */
function fullRun(over: Partial<RunResult> = {}): RunResult {
  return runResult({
    consequences: { ...NO_CONSEQUENCES, faults: ['sweeper-crash'], workers: 2, cycles: 2, observe: true, notes: ['a note'] },
    samples: 5,
    executions: 12,
    forgottenStalls: 0,
    forgottenStallCount: 0,
    node: '127.0.0.1:1',
    library: { name: 'bullmq', version: '6.7.0' },
    failover: failoverFigures(),
    lapsedLock: {
      lapsedJobs: 20,
      recovered: 20,
      executedTwice: 20,
      lateCompletionsRefused: 20,
      lateCompletionsAccepted: 0,
      secondRunsRefused: 0,
      refusal: 'Missing lock for job 1. moveToFinished',
      sources: LAPSED_LOCK_SOURCES,
    },
    ...over,
  });
}

/** What the tool prints, read from the tables at the moment of asking. */
function toolWords(): SchemaWords {
  const full = fullRun();
  const json = runJson(full);
  const [summary] = summarizeTrials([full]);
  return {
    modes: modes(),
    runFields: [...new Set([...Object.keys(json), ...FIGURES.map((figure) => figure.field)])],
    trialFields: Object.keys(summary ?? {}),
    sourced: Object.keys(json.sources),
  };
}

test('the schema holds exactly the modes of the strategy table and every field the JSON types carry', () => {
  assert.deepEqual(schemaGaps(toolWords()), []);
});

test("every mode's run, and its trials' summary, match the schema", () => {
  for (const mode of modes()) {
    const runs = [fullRun({ mode }), fullRun({ mode, trial: 2, doubleRecoveries: 3 })];
    assertMatchesSchema(reportJson({ server: SERVER, runs, totals: totalsPerMode(runs), trials: summarizeTrials(runs) }), `a ${mode} run`);
  }
});

test('every shipped anomaly has a sentence of its own in the readout, not the fallback that names a figure by its heading', () => {
  for (const name of ANOMALIES) {
    const text = readout(runResult({ [name]: 1, ...(name === 'doubleRecoveries' ? { jobsRecoveredMoreThanOnce: 1 } : {}) } as Partial<RunResult>));
    assert.doesNotMatch(text, /showed/, `${name}: ${text}`);
    assert.doesNotMatch(text, /: \./, `${name}: a sentence, not an empty one`);
  }
});

test('a figure added to FIGURES alone reaches the table, the CSV, the JSON, the totals, the trials table and the page', () => {
  const undo = registerFigure({ field: 'staleReads', heading: 'stale\nreads', anomaly: true, source: 'server', headline: true, section: 'race' });
  try {
    const stale = (count: number, over: Partial<RunResult> = {}): RunResult => runResult({ ...over, staleReads: count } as Partial<RunResult>);
    const runs = [stale(7), stale(0, { mode: 'loop' })];

    const table = renderTable({ server: SERVER, runs }, LAYOUT);
    assert.match(table, /^stale reads +7 +0$/m, table);
    assert.match(table, /the server's state \([^)]*stale reads/, 'the legend names its source');
    assert.match(renderTable({ server: SERVER, runs }, { ...LAYOUT, wide: true }), /stale +│[^\n]*\n[^\n]*reads/);

    const [header, first, second] = renderCsv(runs)
      .split('\n')
      .map((line) => line.split(','));
    const column = (header ?? []).indexOf('"staleReads"');
    assert.ok(column > 0, 'a CSV column');
    assert.deepEqual([first?.[column], second?.[column]], ['"7"', '"0"']);

    assert.match(readout(stale(7)), /: showed 7 stale reads\.$/, 'the readout names it, by its heading, with no sentence of its own');

    const json = runJson(stale(7)) as unknown as Record<string, unknown>;
    assert.deepEqual([json.staleReads, json.anomalies, json.clean], [7, 7, false], 'an anomaly: counted, and the run is not clean');

    const [total] = totalsPerMode([stale(7), stale(5, { queue: 'race-test-2' })]) as unknown as Record<string, unknown>[];
    assert.equal(total?.staleReads, 12, 'summed over the queues');

    const trials = summarizeTrials([stale(7, { trial: 1 }), stale(3, { trial: 2 }), stale(0, { mode: 'loop' })]);
    const trialsTable = renderTrialsTable(trials, LAYOUT);
    assert.match(trialsTable, /^stale reads +3 \/ 5 \/ 7 +0 \/ 0 \/ 0$/m, trialsTable);
    assert.match(trialsTable, /stale reads median 5, max 7/);

    const page = racePage(JSON.parse(JSON.stringify(reportJson({ server: SERVER, runs }))), PAGE);
    assert.match(page, /<th scope="row">stale reads<\/th><td class="num anomaly bad" data-run="0" data-field="staleReads">7<\/td>/);
    assert.match(page, /<g class="bar-row" data-mode="atomic" data-anomaly="staleReads" data-value="7">/);
    const trialsPage = racePage(JSON.parse(JSON.stringify(reportJson({ server: SERVER, runs, trials }))), PAGE);
    assert.match(trialsPage, /data-anomaly="staleReads" data-min="3" data-median="5" data-max="7"/);

    // Not yet in the schema: the check names each place it must be added.
    const gaps = schemaGaps(toolWords());
    for (const gap of ['run lacks "staleReads"', 'trialSummary lacks "staleReads"', 'run.sources lacks "staleReads"'])
      assert.ok(gaps.includes(gap), gaps.join('\n'));
  } finally {
    undo();
  }
  assert.deepEqual(schemaGaps(toolWords()), [], 'taken out again');
});

// The subject is the tool's own tables of modes and figures, the same on either server kind: one kind for this file.
forOneServerKind(import.meta.url, 'a mode added to the strategy table alone', (handle) => {
  test('runs in --mode all, is named by the schema check, and has its column in the table and the page', async () => {
    // A throw-away mode: the shipped atomic sweep under another name, in `all` but not in `both`.
    const undo = registerStrategy('lease', { ...STRATEGIES.atomic, summary: 'a mode defined by a test', inBoth: false, inAll: true });
    const dir = mkdtempSync(join(tmpdir(), 'emq-race-tables-'));
    try {
      assert.deepEqual(parseModes('all'), modeSets().all);
      assert.equal(parseModes('all').at(-1), 'lease');
      assert.ok(!parseModes('both').includes('lease' as never));
      assert.ok(schemaGaps(toolWords()).includes('the mode enum lacks "lease"'));

      const args = ['--url', handle.url, '--mode', 'all', '--jobs', '60', '--loop-jobs', '60', '--sweepers', '2'];
      const page = join(dir, 'race.html');
      const shown = await runCli([...args, '--queue', 'tables-text', '--html', page]);
      assert.equal(shown.code, 0, shown.stderr);
      const heads = shown.stdout.split('\n').find((line) => /^ +atomic /.test(line)) ?? '';
      assert.deepEqual(heads.trim().split(/ +/), modeSets().all, shown.stdout);
      assert.match(shown.stdout, /^lease \(2 sweepers, 60 jobs\): every expired lease was reclaimed exactly once/m);
      const html = readFileSync(page, 'utf8');
      assert.match(html, /data-field="mode">lease<\/th>/);
      assert.match(html, /<g class="bar-row" data-mode="lease" data-anomaly="doubleRecoveries" data-value="0">/);

      const json = await runCli([...args, '--queue', 'tables-json', '--json']);
      assert.equal(json.code, 0, json.stderr);
      const report = JSON.parse(json.stdout) as { runs: { mode: string; recoveries: number; clean: boolean }[] };
      assert.deepEqual(
        report.runs.map((r) => r.mode),
        modeSets().all,
      );
      const lease = report.runs.find((r) => r.mode === 'lease');
      assert.deepEqual([lease?.recoveries, lease?.clean], [60, true], 'its race was audited like any other');
    } finally {
      undo();
      rmSync(dir, { recursive: true, force: true });
    }
    assert.ok(!modes().includes('lease' as never), 'taken out again');
  });
});

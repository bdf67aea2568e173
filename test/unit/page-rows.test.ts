/**
 * The page's race table and readout follow the terminal's: a row the terminal shows for a flag
 * (unacknowledged moves and NOSCRIPT fallbacks under --fault, samples under --observe) is on the
 * page at 0 too, and the lines the terminal prints under a run's sentence (what the faults did)
 * are in the page's readout. A clean run cut short says so, as the terminal and the page read it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { racePage } from '../../src/html/page.js';
import { pageReadouts } from '../../src/html/report-files.js';
import { reportJson } from '../../src/report/json.js';
import { readout, renderTable } from '../../src/report/report.js';
import { NO_CONSEQUENCES, type RunResult } from '../../src/shared/model.js';
import { SERVER, runResult } from '../helpers/run-result.js';

const PAGE = { command: 'emq-race', generatedAt: '2026-01-01T00:00:00.000Z', version: '0.0.0' };

/** The fields of the page's race table, one per row. */
const pageFields = (runs: readonly RunResult[]): string[] => {
  const page = racePage(JSON.parse(JSON.stringify(reportJson({ server: SERVER, runs }))), PAGE);
  return [...new Set([...page.matchAll(/data-run="0" data-field="([^"]+)"/g)].map((m) => m[1] ?? ''))];
};

const crashed = runResult({
  consequences: { ...NO_CONSEQUENCES, faults: ['sweeper-crash'] },
  faultCounts: { crashes: 1, lostReplies: 0, reconnects: 0, scriptFlushes: 0, clientKills: 0 },
  unacknowledgedMoves: 0,
  noscriptFallbacks: 0,
});

test('--fault: unacknowledged moves and NOSCRIPT fallbacks are rows at 0, on the page as in the terminal', () => {
  const terminal = renderTable({ server: SERVER, runs: [crashed] }, { color: false, width: 200, wide: false });
  assert.match(terminal, /^unacked moves +0$/m);
  assert.match(terminal, /^noscript fallbacks +0$/m);
  const fields = pageFields([crashed]);
  assert.ok(fields.includes('unacknowledgedMoves') && fields.includes('noscriptFallbacks'), fields.join(', '));
  // Without the flag neither is shown, in either.
  assert.ok(!pageFields([runResult()]).includes('noscriptFallbacks'));
});

test('--observe: the samples row at 0, on the page as in the terminal', () => {
  const watched = runResult({ consequences: { ...NO_CONSEQUENCES, observe: true }, samples: 0, windowInNeither: 0, windowInBoth: 0 });
  assert.match(renderTable({ server: SERVER, runs: [watched] }, { color: false, width: 200, wide: true }), /\bsamples\b/);
  assert.ok(pageFields([watched]).includes('samples'), pageFields([watched]).join(', '));
  assert.ok(!pageFields([runResult()]).includes('samples'));
});

test("the page's readout carries the lines the terminal prints under a run: what the faults did", () => {
  const lines = pageReadouts({ server: SERVER, runs: [crashed] }, [crashed]);
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.equal(lines[1], 'faults on atomic: one sweeper crashed at its crash point.');
  assert.deepEqual(pageReadouts({ server: SERVER, runs: [runResult()] }, [runResult()]).length, 1);
});

test('a clean run cut short by --max-sweeps says so, as a run with anomalies does', () => {
  const clean = readout(runResult({ recoveries: 10, cutShort: true, maxSweeps: 3 }));
  assert.match(clean, /\(10 recoveries, 0 anomalies\)\. The run was cut short: a sweeper stopped after 3 sweeps \(--max-sweeps\)\.$/);
  assert.doesNotMatch(readout(runResult({ recoveries: 10 })), /cut short/);
});

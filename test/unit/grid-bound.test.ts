/** The bound a grid cell's one-call race is held to: round trips and the server's own time, pure. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gridCell, modeCell, raceBoundMs, type CellRun } from '../../src/grid/json.js';
import type { LatencyReport } from '../../src/server/latency-proxy.js';
import { runResult } from '../helpers/run-result.js';

/** To a thousandth of a ms, so that 5 × 1.1 is 5.5. */
const ms = (value: number): number => Math.round(value * 1000) / 1000;

test('with the round trip the limit, each sweeper pays its share of the calls and one empty call more', () => {
  // 4,000 jobs at batch 100: 40 calls, 5 per sweeper of 8, each 1 ms + 100 × 1 µs; then 1 ms.
  assert.equal(ms(raceBoundMs(4000, 8, 100, 1, 1)), 5 * 1.1 + 1);
  // One sweeper makes every call.
  assert.equal(ms(raceBoundMs(4000, 1, 100, 1, 1)), 40 * 1.1 + 1);
});

test("with the server's one thread the limit, every job's server time end to end", () => {
  // 64 sweepers over 40 calls: 1 call each (1.1 ms), but the jobs take 4,000 × 1 µs = 4 ms of the server.
  assert.equal(ms(raceBoundMs(4000, 64, 100, 1, 1)), 4 + 1);
});

test("a cell's bound needs a round trip measured through the proxy and each run's server time", () => {
  const run = (over: Partial<CellRun> = {}) =>
    ({ mode: 'atomic', jobs: 4000, wallMs: 13, doubleRecoveries: 0, trial: 1, sweepers: 8, batch: 100, serverUsPerJob: 1, ...over }) as CellRun;
  const cell = modeCell('atomic', [run(), run({ trial: 2 })], 1);
  assert.equal(cell.boundJobsPerSec, 615_385, '8,000 jobs in 2 × 6.5 ms');
  assert.equal(cell.overBound, 0.5, '8,000 jobs in 2 × 13 ms against 2 × 6.5');
  assert.equal(modeCell('atomic', [run()]).boundJobsPerSec, null, 'straight to the server: no round trip measured');
  assert.equal(modeCell('atomic', [run({ serverUsPerJob: null })], 1).overBound, null, 'no server time: no bound');
});

test("a run its sweep limit cut short counts, in its cell's pace and bound, only the leases it reclaimed", () => {
  const run = (over: Partial<CellRun> = {}) =>
    ({
      mode: 'atomic',
      jobs: 4000,
      wallMs: 2,
      doubleRecoveries: 0,
      unreclaimed: 3200,
      cutShort: true,
      trial: 1,
      sweepers: 8,
      batch: 100,
      serverUsPerJob: 1,
      ...over,
    }) as CellRun;
  const cell = modeCell('atomic', [run(), run({ trial: 2, unreclaimed: 0, cutShort: false, wallMs: 8 })], 1);
  // 800 + 4,000 jobs in 10 ms; the bounds: 8 calls (1 per sweeper, 1.1 ms, and no empty call:
  // the sweepers stopped at their limit) and 40 calls (5 each, + 1 for the empty call).
  assert.equal(cell.jobsPerSec, 480_000);
  assert.equal(cell.boundJobsPerSec, Math.round(4800 / ((1.1 + 6.5) / 1000)));
});

test('a trial summed over several queues has no bound: their sweepers share the server, or race apart on several nodes', () => {
  const rtt = { median: 1, p99: 1 };
  const latency: LatencyReport = { requestedMs: 1, jitterMs: 0, measuredRttMs: rtt, pings: 10, directRttMs: rtt, heldBackMs: 0 };
  const one = runResult({ jobs: 4000, batch: 100, sweepers: 8, wallMs: 13, serverUsPerJob: 1 });
  const alone = gridCell(1, { sweepers: 8 }, ['atomic'], { runs: [one], latency }, 20);
  assert.equal(alone.modes[0]?.overBound, 0.5, 'one queue: held to its bound');
  const summed = { ...one, jobs: 16_000, queue: '4 queues' };
  const side = gridCell(1, { sweepers: 8 }, ['atomic'], { runs: [one, one, one, one], totals: [summed], latency }, 20);
  assert.equal(side.modes[0]?.boundJobsPerSec, null);
  assert.equal(side.modes[0]?.overBound, null);
});

/** The rounds' totals, a pure reducer: each figure summed round by round, checked exactly. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NO_ROUNDS, addRound } from '../../src/race/rounds.js';
import { LatencyLog } from '../../src/server/call-latency.js';

const round = (n: number, cutShort = false) => ({
  wallMs: 10 * n,
  commands: 100 * n,
  sweeps: n,
  cutShort,
  noscriptFallbacks: n - 1,
  retries: 2 * n,
  strayIds: 0,
  latencies: [new LatencyLog()],
});

test('no rounds add up to nothing', () => {
  assert.deepEqual(NO_ROUNDS, { wallMs: 0, commands: 0, sweeps: 0, cutShort: false, noscriptFallbacks: 0, retries: 0, strayIds: 0, latencies: [] });
});

test('rounds add their counts and times, and keep every latency log', () => {
  const totals = [round(1), round(2), round(3)].reduce(addRound, NO_ROUNDS);
  assert.deepEqual(
    { ...totals, latencies: totals.latencies.length },
    { wallMs: 60, commands: 600, sweeps: 6, cutShort: false, noscriptFallbacks: 3, retries: 12, strayIds: 0, latencies: 3 },
  );
});

test('one round cut short makes the run cut short', () => {
  assert.equal([round(1), round(2, true), round(3)].reduce(addRound, NO_ROUNDS).cutShort, true);
});

test('adding a round leaves the earlier totals as they were', () => {
  const first = addRound(NO_ROUNDS, round(1));
  addRound(first, round(2));
  assert.equal(first.commands, 100);
  assert.equal(first.latencies.length, 1);
});

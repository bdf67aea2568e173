/** The readout's last line: where a large run's time went, phase by phase, the largest first. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { phasesLines, PHASES_SHOWN_ABOVE } from '../../src/report/report.js';
import { runResult } from '../helpers/run-result.js';

const phasesMs = { claim: 2, seed: 10_100, race: 7_000, audit: 4_049, clean: 3_500 };

test('a run over the threshold names each phase in seconds, the largest first, after their sum', () => {
  const lines = phasesLines([runResult({ jobs: 1_000_000, phasesMs })]);
  assert.deepEqual(lines, ['where the time went: atomic 24.7 s (seeding 10.1 s, race 7.0 s, audit 4.0 s, clean-up 3.5 s, claim 0.0 s)']);
});

test('runs at or below the threshold, or without phases (a library run, a totals row), add no line', () => {
  assert.deepEqual(phasesLines([runResult({ jobs: PHASES_SHOWN_ABOVE, phasesMs })]), []);
  assert.deepEqual(phasesLines([runResult({ jobs: 1_000_000 })]), []);
});

test('several runs share the one line, each under its mode', () => {
  const [line] = phasesLines([runResult({ jobs: 200_000, phasesMs }), runResult({ mode: 'loop', jobs: 200_000, phasesMs: { ...phasesMs, race: 60_000 } })]);
  assert.match(line ?? '', /^where the time went: atomic 24\.7 s \(.*\); loop 77\.7 s \(race 60\.0 s, seeding 10\.1 s/);
});

test('several runs of one mode (queues side by side, trials) are told apart by queue and trial', () => {
  const [line] = phasesLines([
    runResult({ jobs: 200_000, phasesMs, queue: 'race-q-atomic-1', trial: 1 }),
    runResult({ jobs: 200_000, phasesMs, queue: 'race-q-atomic-2', trial: 1 }),
  ]);
  assert.match(line ?? '', /^where the time went: atomic on race-q-atomic-1, trial 1, 24\.7 s \(.*\); atomic on race-q-atomic-2, trial 1, 24\.7 s \(/);
});

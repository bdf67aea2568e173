/** The readout's last line: where a large run's time went, phase by phase, the largest first. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeTrials } from '../../src/audit/trials.js';
import { loopJobsNote, printReport } from '../../src/cli/race-output.js';
import type { MainFlags } from '../../src/cli/race-flags.js';
import type { RaceOptions } from '../../src/shared/model.js';
import { phasesLines, PHASES_SHOWN_ABOVE, renderTable, trialPhasesLines } from '../../src/report/report.js';
import { runResult, SERVER } from '../helpers/run-result.js';

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

test('several runs of one mode (queues side by side) are told apart by queue, and by trial where there are several', () => {
  const [line] = phasesLines([
    runResult({ jobs: 200_000, phasesMs, queue: 'race-q-atomic-1', trial: 1 }),
    runResult({ jobs: 200_000, phasesMs, queue: 'race-q-atomic-2', trial: 1 }),
  ]);
  assert.match(line ?? '', /^where the time went: atomic on race-q-atomic-1, 24\.7 s \(.*\); atomic on race-q-atomic-2, 24\.7 s \(/);
  const [trials] = phasesLines([
    runResult({ jobs: 200_000, phasesMs, queue: 'race-q-atomic-1', trial: 1 }),
    runResult({ jobs: 200_000, phasesMs, queue: 'race-q-atomic-1', trial: 2 }),
  ]);
  assert.match(trials ?? '', /^where the time went: atomic on race-q-atomic-1, trial 1, 24\.7 s \(.*\); atomic on race-q-atomic-1, trial 2, 24\.7 s \(/);
});

test("the line is the readout's last, after the note of a round-trip mode run on fewer jobs", () => {
  const runs = [runResult({ jobs: 200_000, phasesMs }), runResult({ mode: 'loop', jobs: 100_000, phasesMs })];
  const lines = renderTable({ server: SERVER, runs }, { color: false, width: 200, wide: false }, loopJobsNote(runs, 200_000)).split('\n');
  assert.match(lines.at(-1) ?? '', /^where the time went: atomic 24\.7 s /);
  assert.equal(lines.at(-2), 'loop ran on 100,000 of the 200,000 jobs (--loop-jobs: a round trip per command is slow by nature)');
});

test('under --trials, each mode once: its phases summed over its trials, and only modes over the threshold', () => {
  const runs = [
    runResult({ jobs: 200_000, phasesMs, trial: 1 }),
    runResult({ mode: 'loop', jobs: 100_000, phasesMs, trial: 1 }),
    runResult({ jobs: 200_000, phasesMs: { claim: 1, seed: 900, race: 1_000, audit: 951, clean: 500 }, trial: 2 }),
  ];
  assert.deepEqual(trialPhasesLines(runs), [
    'where the time went: atomic, 2 trials, 28.0 s (seeding 11.0 s, race 8.0 s, audit 5.0 s, clean-up 4.0 s, claim 0.0 s)',
  ]);
  assert.deepEqual(trialPhasesLines(runs.slice(1, 2)), []);
});

test('under --trials with queues side by side, a trial counts each phase at its longest queue, not their sum', () => {
  const other = { claim: 5, seed: 12_000, race: 1_000, audit: 4_000, clean: 3_000 };
  const runs = [
    runResult({ jobs: 200_000, phasesMs, trial: 1, queue: 'q-1' }),
    runResult({ jobs: 200_000, phasesMs: other, trial: 1, queue: 'q-2' }),
    runResult({ jobs: 200_000, phasesMs, trial: 2, queue: 'q-1' }),
    runResult({ jobs: 200_000, phasesMs: other, trial: 2, queue: 'q-2' }),
  ];
  // Each trial: seeding 12.0, race 7.0, audit 4.049, clean-up 3.5, claim 0.005 s.
  assert.deepEqual(trialPhasesLines(runs), [
    'where the time went: atomic, 2 trials, 2 queues side by side, 53.1 s (seeding 24.0 s, race 14.0 s, audit 8.1 s, clean-up 7.0 s, claim 0.0 s)',
  ]);
});

test('the --trials readout ends the same way: the note of a loop run on fewer jobs, then where the time went', () => {
  const runs = [1, 2].flatMap((trial) => [runResult({ jobs: 200_000, phasesMs, trial }), runResult({ mode: 'loop', jobs: 1_000, phasesMs, trial })]);
  let printed = '';
  const io = { out: (text: string) => void (printed += text), err: () => undefined, env: { COLUMNS: '200' }, stdoutIsTty: false };
  const options = { jobs: 200_000, trials: 2 } as RaceOptions;
  printReport({ server: SERVER, runs, trials: summarizeTrials(runs) }, runs, options, { queues: 1, wide: false } as MainFlags, io);
  const lines = printed.trimEnd().split('\n');
  assert.match(lines.at(-1) ?? '', /^where the time went: atomic, 2 trials, 49\.3 s \(seeding 20\.2 s, /);
  assert.equal(lines.at(-2), 'loop ran on 1,000 of the 200,000 jobs (--loop-jobs: a round trip per command is slow by nature)');
});

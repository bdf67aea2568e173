/**
 * --expect as pure functions: its terms, how repeated flags merge, the check that named modes run,
 * and the verdict over runs with the line that names what missed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EmqError, ExitCode } from '../../src/shared/errors.js';
import { checkExpectedModes, mergeExpectations, parseExpectation, parseTerm } from '../../src/cli/expect.js';
import { describeMet, describeMisses, formatExpectation, judge, outcomeFor, verdictLine } from '../../src/report/verdict.js';
import { runResult } from '../helpers/run-result.js';
import type { Expectation, Mode } from '../../src/shared/model.js';

function usage(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof EmqError);
    assert.equal(err.exitCode, ExitCode.usage);
    assert.match(err.message, pattern);
    return true;
  });
}

/** What the expectation asks of each mode, as `mode=outcome` (or `mode=-` where nothing). */
function asks(expect: Expectation, modes: readonly Mode[] = ['atomic', 'loop', 'watch', 'claim', 'function', 'script']): string {
  return modes.map((mode) => `${mode}=${outcomeFor(expect, mode)?.outcome ?? '-'}`).join(',');
}

test('clean and race keep their meaning; race also asks every other mode to be clean', () => {
  assert.equal(asks(parseExpectation('clean')), 'atomic=clean,loop=clean,watch=clean,claim=clean,function=clean,script=clean');
  assert.equal(asks(parseExpectation('race')), 'atomic=clean,loop=race,watch=clean,claim=clean,function=clean,script=clean');
  assert.deepEqual(Object.keys(parseExpectation('clean').modes), [], 'clean names no mode');
  assert.deepEqual(Object.keys(parseExpectation('race').modes), ['loop'], "race names the loop, which must run, and no library's port");
});

test('per-mode terms judge the modes they name and no other', () => {
  const expect = parseExpectation('atomic=clean, function=clean,script=clean,loop=race');
  assert.equal(asks(expect), 'atomic=clean,loop=race,watch=-,claim=-,function=clean,script=clean');
  assert.equal(formatExpectation(expect), 'atomic=clean,function=clean,script=clean,loop=race');
  assert.deepEqual(parseExpectation(formatExpectation(expect)), expect, 'the formatted form parses back to the same expectation');
});

test('bad terms are usage errors that say what --expect accepts', () => {
  usage(() => parseExpectation('dirty'), /^--expect: "dirty" is not an expectation; expected clean, race, or MODE=clean/);
  usage(() => parseExpectation('fast=clean'), /^--expect: "fast" in "fast=clean" is not a mode; expected one of atomic, loop/);
  usage(() => parseExpectation('atomic=dirty'), /^--expect: "dirty" in "atomic=dirty" is not an outcome; expected clean or race/);
  usage(() => parseExpectation('atomic=clean=race'), /^--expect: "atomic=clean=race" is not an expectation/);
  usage(() => parseExpectation('atomic=clean,'), /^--expect: "atomic=clean," has an empty term/);
  usage(() => parseTerm('atomic'), /^--expect: "atomic" is not an expectation/);
});

test('repeated --expect merges when the terms agree and is refused when they do not, never last-wins', () => {
  // Commander hands the previous value to the parser: this is what `--expect A --expect B` does.
  const twice = (a: string, b: string): Expectation => parseExpectation(b, parseExpectation(a));
  assert.equal(asks(twice('atomic=clean', 'loop=race'), ['atomic', 'loop', 'watch']), 'atomic=clean,loop=race,watch=-');
  assert.equal(asks(twice('race', 'script=clean')), asks(parseExpectation('race')));
  assert.deepEqual(Object.keys(twice('race', 'script=clean').modes).sort(), ['loop', 'script'], 'script is named now, so it must run');
  assert.equal(formatExpectation(twice('race', 'loop=race')), 'race,loop=race');
  assert.equal(formatExpectation(twice('clean', 'clean')), 'clean');
  usage(() => twice('clean', 'race'), /^--expect: clean \(every run clean, loop too\) and race disagree on loop; give one of them$/);
  usage(() => twice('race', 'clean'), /^--expect: race and clean \(every run clean, loop too\) disagree on loop/);
  usage(() => twice('clean', 'loop=race'), /disagree on loop/);
  usage(() => twice('atomic=clean', 'atomic=race'), /^--expect: atomic=clean and atomic=race disagree on atomic/);
  usage(() => twice('race', 'atomic=race'), /^--expect: race \(the loop races, every other mode clean, atomic too\) and atomic=race disagree on atomic/);
  usage(() => parseExpectation('loop=race,loop=clean'), /disagree on loop/);
  // Merging is symmetric in what it accepts.
  const a = parseExpectation('atomic=clean');
  const b = parseExpectation('race');
  assert.equal(asks(mergeExpectations(a, b)), asks(mergeExpectations(b, a)));
});

test('a mode named in --expect must be among the modes run', () => {
  checkExpectedModes(parseExpectation('clean'), ['atomic']);
  checkExpectedModes(parseExpectation('atomic=clean,loop=race'), ['atomic', 'loop', 'watch']);
  usage(
    () => checkExpectedModes(parseExpectation('loop=race'), ['atomic']),
    /^--expect loop=race: loop is not among the modes run \(--mode atomic\); add it to --mode or leave it out of --expect$/,
  );
  usage(() => checkExpectedModes(parseExpectation('watch=clean,claim=clean'), ['atomic']), /^--expect watch=clean: watch, claim are not among the modes run/);
  usage(
    () => checkExpectedModes(parseExpectation('race'), ['atomic']),
    /^--expect race: expects the loop to race and every other mode to be clean, and needs a loop run/,
  );
  // A library's run has no loop: the line says how to expect each of its modes by name.
  usage(
    () => checkExpectedModes(parseExpectation('race'), ['bullmq', 'bullmq-naive', 'bullmq-guarded']),
    /this run has no loop; expect each of its modes by name instead \(MODE=race or MODE=clean; its modes: bullmq, bullmq-naive, bullmq-guarded\)$/,
  );
});

test('the verdict: per mode and overall, from every run of each mode', () => {
  const atomic = runResult({ mode: 'atomic', queue: 'q-atomic' });
  const loop = runResult({ mode: 'loop', queue: 'q-loop', doubleRecoveries: 7, duplicatePending: 7, lostIncrements: 2, jobsRecoveredMoreThanOnce: 5 });
  const pass = judge(parseExpectation('atomic=clean,loop=race'), [atomic, loop]);
  assert.equal(pass.pass, true);
  assert.equal(pass.expect, 'atomic=clean,loop=race');
  assert.deepEqual(
    pass.modes.map((m) => [m.mode, m.expected, m.pass, m.runs, m.misses.length]),
    [
      ['atomic', 'clean', true, 1, 0],
      ['loop', 'race', true, 1, 0],
    ],
  );
  assert.equal(describeMisses(pass), undefined);
  // A pass has its line too: what each judged mode was expected to do.
  assert.equal(verdictLine(pass), 'expectation met: atomic=clean, loop=race');

  const fail = judge(parseExpectation('clean'), [atomic, loop]);
  assert.equal(fail.pass, false);
  assert.deepEqual(fail.modes.find((m) => m.mode === 'loop')?.misses, [
    { queue: 'q-loop', trial: 1, anomalies: 16, figures: { doubleRecoveries: 7, duplicatePending: 7, lostIncrements: 2 } },
  ]);
  assert.equal(describeMisses(fail), '--expect clean missed: loop expected clean, but showed doubleRecoveries 7, duplicatePending 7, lostIncrements 2');
  assert.equal(verdictLine(fail), describeMisses(fail), 'a miss prints what missed');

  // A mode the per-mode form does not name is not judged.
  assert.deepEqual(
    judge(parseExpectation('atomic=clean'), [atomic, loop]).modes.map((m) => m.mode),
    ['atomic'],
  );
});

test('race with a dirty script is reported for what it is: the script missed, with its figures', () => {
  const loop = runResult({ mode: 'loop', duplicatePending: 3 });
  const script = runResult({ mode: 'script', duplicatePending: 480, doubleRecoveries: 480, misreported: 2 });
  const verdict = judge(parseExpectation('race'), [loop, script]);
  assert.equal(verdict.pass, false);
  assert.deepEqual(
    verdict.modes.map((m) => [m.mode, m.expected, m.pass]),
    [
      ['loop', 'race', true],
      ['script', 'clean', false],
    ],
  );
  assert.equal(describeMisses(verdict), '--expect race missed: script expected clean, but showed doubleRecoveries 480, duplicatePending 480, misreported 2');
});

test('over trials and queues every run counts; the line says how many missed and sums their figures', () => {
  const runs = [
    runResult({ mode: 'loop', trial: 1, duplicatePending: 4 }),
    runResult({ mode: 'loop', trial: 2 }),
    runResult({ mode: 'loop', trial: 3 }),
    runResult({ mode: 'atomic', trial: 1, lostJobs: 1 }),
    runResult({ mode: 'atomic', trial: 2, lostJobs: 2, unreclaimed: 1 }),
    runResult({ mode: 'atomic', trial: 3 }),
  ];
  const verdict = judge(parseExpectation('atomic=clean,loop=race'), runs);
  assert.deepEqual(
    verdict.modes.map((m) => [m.mode, m.runs, m.misses.map((miss) => miss.trial)]),
    [
      ['loop', 3, [2, 3]],
      ['atomic', 3, [1, 2]],
    ],
  );
  assert.equal(
    describeMisses(verdict),
    '--expect atomic=clean,loop=race missed: loop expected a race, but 2 of 3 runs showed no anomaly (every anomaly figure 0); atomic expected clean, but 2 of 3 runs showed lostJobs 3, unreclaimed 1 (summed over those runs)',
  );
});

test('a named mode that did not run (a server without Functions) misses', () => {
  const verdict = judge(parseExpectation('atomic=clean,function=clean'), [runResult({ mode: 'atomic' })]);
  assert.deepEqual(
    verdict.modes.map((m) => [m.mode, m.pass, m.runs]),
    [
      ['atomic', true, 1],
      ['function', false, 0],
    ],
  );
  assert.equal(describeMisses(verdict), '--expect atomic=clean,function=clean missed: function expected clean, but did not run');
});

test('clean or race judges a mode asked for with --mode that did not run: it misses, named', () => {
  const asked = ['atomic', 'function'] as const;
  for (const [terms, line] of [
    ['clean', '--expect clean missed: function expected clean, but did not run'],
    ['race', '--expect race missed: function expected clean, but did not run'],
  ] as const) {
    const verdict = judge(
      parseExpectation(terms),
      [runResult({ mode: 'atomic' }), ...(terms === 'race' ? [runResult({ mode: 'loop', duplicatePending: 2 })] : [])],
      [...asked, ...(terms === 'race' ? (['loop'] as const) : [])],
    );
    assert.equal(verdict.pass, false, terms);
    assert.deepEqual(
      verdict.modes.filter((m) => m.mode === 'function').map((m) => [m.pass, m.runs]),
      [[false, 0]],
    );
    assert.equal(describeMisses(verdict), line);
  }
});

test('a met expectation over several runs says how many held it', () => {
  const runs = [1, 2, 3].flatMap((trial) => [runResult({ mode: 'atomic', trial }), runResult({ mode: 'loop', trial, duplicatePending: trial })]);
  const verdict = judge(parseExpectation('race'), runs);
  assert.equal(verdict.pass, true);
  assert.equal(describeMet(verdict), 'expectation met: atomic=clean (3 of 3 runs), loop=race (3 of 3 runs)');
  assert.equal(verdictLine(judge(parseExpectation('atomic=clean'), runs.slice(0, 1))), 'expectation met: atomic=clean');
});

/**
 * The report in each queue's own words (QueueWords, model.ts): a library's runs are labelled and
 * read out with its list, its stalled jobs and its counter, from its entry in libraries/table.ts;
 * the model queue's runs keep the words they always had; a row or column that holds both gets a
 * heading true of each; every trials table and page label follows the same table.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeTrials } from '../../src/audit/trials.js';
import { figureLabel } from '../../src/html/bars.js';
import { LIBRARIES } from '../../src/libraries/table.js';
import { NO_COUNTER, NO_STALL_COUNT } from '../../src/libraries/counts.js';
import { FIGURES, MODEL_QUEUE_WORDS, type Mode, type RunResult } from '../../src/shared/model.js';
import { figureHeading } from '../../src/report/figure-heading.js';
import { readout, renderTable } from '../../src/report/report.js';
import { renderTrialsTable } from '../../src/report/trials-table.js';
import { queueWords } from '../../src/sweepers/strategies.js';
import { SERVER, runResult } from '../helpers/run-result.js';

const LAYOUT = { color: false, width: 200, wide: false };

/** A naive port's run: every job pushed twice. */
function raced(mode: Mode, over: Partial<RunResult> = {}): RunResult {
  return runResult({
    mode,
    recoveries: 20,
    doubleRecoveries: 10,
    jobsRecoveredMoreThanOnce: 10,
    duplicatePending: 10,
    duplicatePendingAtEnd: 10,
    mostPendingEntries: 2,
    ...over,
  });
}

test('each mode reads its words through the strategy table: a library its own, the tool and an unknown mode the model queue', () => {
  assert.equal(queueWords('bullmq-naive'), LIBRARIES.bullmq.words);
  assert.equal(queueWords('node-resque'), LIBRARIES['node-resque'].words);
  assert.equal(queueWords('bee-queue-guarded'), LIBRARIES['bee-queue'].words);
  assert.equal(queueWords('atomic'), MODEL_QUEUE_WORDS);
  assert.equal(queueWords('no-such-mode'), MODEL_QUEUE_WORDS);
});

test('a library run names its own list in the row, the legend and the readout; the model queue keeps "pending"', () => {
  const cases = [
    ['bullmq-naive', 'wait', {}],
    ['node-resque-naive', 'failed', NO_STALL_COUNT],
    ['bee-queue-naive', 'waiting', NO_COUNTER],
  ] as const;
  for (const [mode, list, counters] of cases) {
    const table = renderTable({ server: SERVER, runs: [raced(mode, counters)] }, LAYOUT);
    assert.match(table, new RegExp(`^duplicate in ${list} +10$`, 'm'), table);
    assert.match(table, new RegExp(`From the server's state \\(duplicate in ${list},`), table);
    // BullMQ's entries are takes: a job marked to fail (defa) fails at its next take without running.
    const entries = mode === 'bullmq-naive' ? 'that would be taken up to' : 'that would run up to';
    assert.match(table, new RegExp(`left 10 duplicate entries in ${list} \\(jobs ${entries} 2 times\\)`), table);
    assert.doesNotMatch(table, /pending/, table);
  }
  const model = renderTable({ server: SERVER, runs: [raced('loop')] }, LAYOUT);
  assert.match(model, /^duplicate pending +10$/m);
  assert.match(model, /left 10 duplicate entries in pending \(jobs that would run up to 2 times\)/);
});

test('beside the model queue, the row holds both lists: "duplicate entries", and each readout names its own', () => {
  const table = renderTable({ server: SERVER, runs: [raced('loop'), raced('bullmq-naive')] }, LAYOUT);
  assert.match(table, /^duplicate entries +10 +10$/m, table);
  assert.match(table, /^loop .*left 10 duplicate entries in pending /m);
  assert.match(table, /^bullmq-naive .*left 10 duplicate entries in wait /m);
  const wide = renderTable({ server: SERVER, runs: [raced('loop'), raced('bee-queue-naive', NO_COUNTER)] }, { ...LAYOUT, wide: true });
  assert.match(wide, /│ +duplicate │/);
  assert.match(wide, /│ +entries │/, wide);
});

test('every heading a library renames has one true of both for a table that mixes it with the model queue', () => {
  for (const library of Object.values(LIBRARIES)) {
    for (const field of Object.keys(library.words.headings)) {
      const figure = FIGURES.find((f) => f.field === field);
      assert.ok(figure, field);
      const mode = library.modes[0]?.mode as Mode;
      const mixed = figureHeading(figure, ['atomic', mode]);
      assert.notEqual(mixed, figure.heading, `${field}: the model's heading is not true of ${mode}`);
      assert.notEqual(mixed, library.words.headings[field], `${field}: ${mode}'s heading is not true of the model queue`);
    }
  }
});

test("the clean readouts: the library's stalled jobs and counter; Bee-Queue's says nothing of a counter", () => {
  assert.match(
    readout(runResult({ mode: 'bullmq' })),
    /: every job whose lock lapsed was recovered exactly once and every stall was counted in its job's stc \(10 recoveries, 0 anomalies\)\.$/,
  );
  assert.match(
    readout(runResult({ mode: 'node-resque-guarded', ...NO_STALL_COUNT })),
    /: every dead worker's job was pushed onto failed exactly once and every failure was counted in stat:failed \(10 recoveries/,
  );
  const bee = readout(runResult({ mode: 'bee-queue', ...NO_COUNTER }));
  assert.match(bee, /: every stalled job was moved back to waiting exactly once \(10 recoveries, 0 anomalies\)\.$/);
  assert.doesNotMatch(bee, /count/);
  assert.match(readout(runResult()), /: every expired lease was reclaimed exactly once and every stall was counted \(10 recoveries, 0 anomalies\)\.$/);
});

test("a library's counter and stalled jobs in the readout of a run that found anomalies", () => {
  const resque = readout(raced('node-resque', { ...NO_STALL_COUNT, extraIncrements: 3, lostIncrements: 2, lostJobs: 1, unreclaimed: 1 }));
  assert.match(resque, /lost 2 stat:failed increments \(pushes onto failed that stat:failed does not count\)/);
  assert.match(resque, /counted 3 failures in stat:failed with no job pushed/);
  assert.match(resque, /lost 1 job \(in none of failed, the queue or a registered worker's hands\)/);
  assert.match(resque, /left 1 job held by a dead worker still registered/);
  const bull = readout(raced('bullmq-naive', { lostIncrements: 4, unreclaimed: 2, deadLetteredEarly: 1 }));
  assert.match(bull, /lost 4 stc increments \(moves the job's stc does not show\)/);
  // BullMQ marks such a job to fail (defa): it fails it only when a worker next takes it.
  assert.match(bull, /marked 1 healthy job to fail \(defa: BullMQ fails each at its next take\) after 1 stall \(dead-lettered early/);
  assert.doesNotMatch(bull, /sent \d+ healthy jobs? to failed/);
  const escaped = readout(raced('bullmq-naive', { deadLetterEscapes: 2 }));
  assert.match(escaped, /let 2 jobs escape the dead letter \(stalled 3\+ times, neither in failed nor marked to fail \(defa\)\)/);
  assert.match(bull, /left 2 jobs in active, their locks lapsed/);
  assert.match(readout(raced('bee-queue-naive', { ...NO_COUNTER, unreclaimed: 3 })), /left 3 jobs in active\.$/);
  const model = readout(raced('loop', { lostIncrements: 4, unreclaimed: 2, lostJobs: 1 }));
  assert.match(model, /lost 4 stall-counter increments \(recoveries the counter does not show: two sweeps read the same count and wrote back the same value\)/);
  assert.match(model, /lost 1 job \(in no set at all\)/);
  assert.match(model, /left 2 expired leases unreclaimed/);
});

test('the trials table and the page label a library trial with its list', () => {
  const trials = summarizeTrials([raced('bullmq-naive', { trial: 1 }), raced('bullmq-naive', { trial: 2 })]);
  const table = renderTrialsTable(trials, LAYOUT);
  assert.match(table, /^duplicate in wait +10 \/ 10 \/ 10$/m, table);
  assert.match(table, /anomalies in 2\/2 \(100%\) of the trials; .*duplicate in wait median 10, max 10/);
  assert.equal(figureLabel('duplicatePending', ['bee-queue']), 'duplicate in waiting');
  assert.equal(figureLabel('duplicatePending', ['atomic']), 'duplicate pending');
  assert.equal(figureLabel('duplicatePending', ['atomic', 'bee-queue']), 'duplicate entries');
});

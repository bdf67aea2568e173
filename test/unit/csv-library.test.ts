/**
 * The CSV names the library a row came from: a CSV holding a library's run (--lib) ends each row
 * with the JSON's `library` object as two columns, `library.name` and `library.version`; a run of
 * the model queue alone prints the CSV it did before they were added, byte for byte.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvFields, renderCsv } from '../../src/report/csv.js';
import { runResult } from '../helpers/run-result.js';

/** The model queue's header, as the CSV printed it before the library's columns existed (the helpers' fallbacks added at its end). */
const MODEL_HEADER =
  '"trial","mode","queue","node","sweepers","jobs","batch","maxStalled","stalledBefore","pending","live","clean","anomalies","recoveries","doubleRecoveries","duplicatePending","lostIncrements","extraIncrements","forgottenStalls","overcountedStalls","lostJobs","misplaced","unreclaimed","strayEntries","doubleExecutions","deadLetterEscapes","deadLetteredEarly","windowInNeither","windowInBoth","stolenLeases","misreported","forgottenStallCount","overcountedStallCount","jobsRecoveredMoreThanOnce","mostPendingEntries","retries","unacknowledgedMoves","noscriptFallbacks","workers","samples","executions","roundTrips","sweeps","cutShort","wallMs","jobsPerSec","callMsP50","callMsP99","callMsMax","serverCallMsP99","workerNoscriptFallbacks","releaserNoscriptFallbacks","observerNoscriptFallbacks"';

test('a run of the model queue alone: the CSV it always printed, byte for byte, with no library column', () => {
  const runs = [runResult(), runResult({ mode: 'loop', queue: 'race-test-loop', doubleRecoveries: 2, callMsP50: null })];
  assert.equal(
    renderCsv(runs),
    [
      MODEL_HEADER,
      '"1","atomic","race-test","","2","10","5","3","0","list","0","true","0","10","0","0","0","0","","0","0","0","0","0","0","0","0","0","0","0","0","","0","0","0","0","0","0","0","","","4","4","false","10","1000","1","2","3","","","",""',
      '"1","loop","race-test-loop","","2","10","5","3","0","list","0","false","2","10","2","0","0","0","","0","0","0","0","0","0","0","0","0","0","0","0","","0","0","0","0","0","0","0","","","4","4","false","10","1000","","2","3","","","",""',
    ].join('\n'),
  );
});

test("a library's runs: library.name and library.version after every other column, on every row", () => {
  const bullmq = { name: 'bullmq', version: '6.7.0' } as const;
  const runs = [runResult({ mode: 'bullmq', library: bullmq }), runResult({ mode: 'bullmq-naive', library: bullmq })];
  const [header, ...rows] = renderCsv(runs).split('\n');
  assert.equal(header, `${MODEL_HEADER},"library.name","library.version"`);
  assert.deepEqual(
    rows.map((row) => row.split(',').slice(-2)),
    [
      ['"bullmq"', '"6.7.0"'],
      ['"bullmq"', '"6.7.0"'],
    ],
  );
  assert.deepEqual(
    rows.map((row) => row.split(',').length),
    [csvFields().length + 2, csvFields().length + 2],
  );
});

test("a mode of the tool's own beside a library's (--lib bullmq --mode atomic): its library fields are empty, as its JSON has no library", () => {
  const runs = [runResult({ mode: 'atomic' }), runResult({ mode: 'bee-queue', library: { name: 'bee-queue', version: '2.0.0' } })];
  const [header, ...rows] = renderCsv(runs).split('\n');
  assert.equal(header, `${MODEL_HEADER},"library.name","library.version"`);
  assert.deepEqual(
    rows.map((row) => row.split(',').slice(0, 2).concat(row.split(',').slice(-2))),
    [
      ['"1"', '"atomic"', '""', '""'],
      ['"1"', '"bee-queue"', '"bee-queue"', '"2.0.0"'],
    ],
  );
});

/** The lines under the table for a failover drill and for lapsed locks: the run's own counts, never the flags' values or a claim the figures do not make. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LAPSED_LOCK_SOURCES } from '../../src/libraries/bullmq/lapsed-lock.js';
import { consequenceLines } from '../../src/report/consequences.js';
import { readout, renderTable } from '../../src/report/report.js';
import { totalsPerMode } from '../../src/report/totals.js';
import type { FailoverFigures, RunResult } from '../../src/shared/model.js';
import { SERVER, failoverFigures, runResult } from '../helpers/run-result.js';

// No lag, no WAIT: the line's cut and failover alone.
const FIGURES = failoverFigures({ replicaLagMs: 0, waitReplicas: null, withoutWait: null, keptServer: null });

const line = (over: Partial<FailoverFigures>): string =>
  consequenceLines(
    runResult({ failover: { ...FIGURES, ...over }, faultCounts: { crashes: 0, lostReplies: 0, reconnects: 0, scriptFlushes: 0, clientKills: 0 } }),
  ).join('\n');

test('the cut and the failover as the drill counted them', () => {
  assert.match(line({}), /link was cut after 5 answered sweep calls and the primary killed 2 calls later;/);
  // Calls in flight at the 5th were answered before the link could be cut: 6 replicated, not 5.
  assert.match(line({ callsBeforeCut: 6 }), /link was cut after 6 answered sweep calls \(--failover-after 5, and 1 more in flight then\) and/);
  assert.match(line({ callsBeforeCut: 3 }), /link was cut once the sweeps had run dry, after 3 answered sweep calls \(fewer than --failover-after 5\)/);
  // The sweeps ran dry before M calls after the cut.
  assert.match(
    line({ calls: 10_000, callsAfterCut: 16 }),
    /and the primary killed once the sweeps had run dry, 16 calls later \(fewer than --failover-calls 10000\);/,
  );
});

test("jobs run twice: said from the workers' own records when the run had workers, and not at all without them", () => {
  assert.match(
    line({ jobsRunTwice: 20 }),
    /counter increments lost 20; by the workers' own records, jobs run twice \(taken before the failover and again after it\) 20\./,
  );
  assert.match(line({ jobsRunTwice: 0 }), /jobs run twice \(taken before the failover and again after it\) 0\./);
  assert.doesNotMatch(line({ jobsRunTwice: null }), /run twice/);
});

test("WAIT's replies as the sweepers counted them: each count of replicas reached, and the timeouts among them", () => {
  // A WAIT for two replicas that reached one timed out as much as one that reached none: both are said.
  const cases = [
    {
      waitReplicas: { replicas: 1, timeoutMs: 500 },
      waitReplies: [
        { replicas: 0, waits: 4 },
        { replicas: 1, waits: 1_040 },
      ],
      waitTimeouts: 4,
      unconfirmedMoves: 400,
      said: /; WAIT 1 500 sent 1,044 times: 4 reached none, 1,040 reached 1 replica; it timed out 4 times, leaving 400 moves unconfirmed \(/,
    },
    {
      waitReplicas: { replicas: 2, timeoutMs: 100 },
      waitReplies: [
        { replicas: 1, waits: 6 },
        { replicas: 2, waits: 1 },
      ],
      waitTimeouts: 6,
      unconfirmedMoves: 60,
      said: /; WAIT 2 100 sent 7 times: 6 reached 1 replica, 1 reached 2 replicas; it timed out 6 times, leaving 60 moves unconfirmed/,
    },
  ];
  for (const { said, ...figures } of cases) assert.match(line(figures), said);
  assert.doesNotMatch(line({ waitReplicas: null, waitReplies: [] }), /WAIT/);
});

test("lapsed locks: the line gives the handlers' count of jobs run again, never that a second worker ran them all", () => {
  const lapsed = (executedTwice: number): string =>
    consequenceLines(
      runResult({
        lapsedLock: {
          lapsedJobs: 200,
          recovered: 1_600,
          executedTwice,
          lateCompletionsRefused: 200,
          lateCompletionsAccepted: 0,
          secondRunsRefused: 200,
          refusal: 'Missing lock for job 1. moveToFinished',
          sources: LAPSED_LOCK_SOURCES,
        },
        faultCounts: { crashes: 0, lostReplies: 0, reconnects: 0, scriptFlushes: 0, clientKills: 0 },
      }),
    ).join('\n');
  // The naive port: eight moves a job, yet only some of the jobs ran again (the rest were failed unrun).
  const line = lapsed(4);
  assert.match(
    line,
    /200 jobs whose locks lapsed while their worker still ran them: the check made 1,600 moves of them back to wait, 4 of them executed more than once/,
  );
  assert.doesNotMatch(line, /a second worker ran them/);
});

test("lapsed locks: the extra recoveries no duplicate entry shows are said to show in active where the second worker's refused takes left theirs, not to be the sweepers' word alone", () => {
  const readoutOf = (secondRunsRefused: number): string =>
    readout(
      runResult({
        mode: 'bullmq-naive',
        jobs: 40,
        recoveries: 160,
        doubleRecoveries: 120,
        jobsRecoveredMoreThanOnce: 40,
        duplicatePending: 0,
        duplicatePendingAtEnd: 0,
        lapsedLock: {
          lapsedJobs: 40,
          recovered: 160,
          executedTwice: 40,
          lateCompletionsRefused: 40,
          lateCompletionsAccepted: 0,
          secondRunsRefused,
          refusal: 'Missing lock for job 1. moveToFinished',
          sources: LAPSED_LOCK_SOURCES,
        },
      }),
    );
  const refused = readoutOf(40);
  assert.match(refused, /shows none of the 120 extra recoveries as duplicate entries \(the second worker took the entries from wait\)/);
  assert.match(
    refused,
    /known from the sweepers' own records \(on the server, only as the entries that the second worker's refused takes of 40 jobs left in active\)/,
  );
  assert.doesNotMatch(refused, /records alone/);
  assert.match(readoutOf(0), /known from the sweepers' own records alone\./);
});

test("a flushed script cache: the sweepers' fallbacks alone as before, and with the workers', the re-leaser's or the observer's, the sum and each one's", () => {
  const flushed = (over: Parameters<typeof runResult>[0]): string =>
    consequenceLines(
      runResult({
        consequences: { ...runResult().consequences, faults: ['script-flush'] },
        faultCounts: { crashes: 0, lostReplies: 0, reconnects: 0, scriptFlushes: 8, clientKills: 0 },
        noscriptFallbacks: 28,
        ...over,
      }),
    ).join('\n');
  assert.match(flushed({}), /the script cache was flushed 8 times \(28 NOSCRIPT fallbacks to EVAL\)\./);
  assert.match(
    flushed({ workerNoscriptFallbacks: 3, observerNoscriptFallbacks: 0 }),
    /\(31 NOSCRIPT fallbacks to EVAL: 28 by the sweepers, 3 by the workers, 0 by the observer\)\./,
  );
  assert.match(flushed({ releaserNoscriptFallbacks: 1_200 }), /\(1,228 NOSCRIPT fallbacks to EVAL: 28 by the sweepers, 1,200 by the re-leaser\)\./);
});

test("the workers', the re-leaser's or the observer's fallbacks outside script-flush: a line of their own, and the table says its row is the sweepers' alone", () => {
  const failedOver = (workers: number | undefined): RunResult =>
    runResult({
      failover: { ...FIGURES, jobsRunTwice: 200 },
      faultCounts: { crashes: 0, lostReplies: 0, reconnects: 0, scriptFlushes: 0, clientKills: 0 },
      consequences: { ...runResult().consequences, faults: ['failover'], workers: workers === undefined ? 0 : 2 },
      noscriptFallbacks: 2,
      workerNoscriptFallbacks: workers,
    });
  assert.match(
    consequenceLines(failedOver(4)).join('\n'),
    /\n {2}scripts on atomic: 6 NOSCRIPT fallbacks to EVAL: 2 by the sweepers, 4 by the workers \(the promoted replica held none of the scripts the run had loaded on the primary\)\.$/,
  );
  // None of theirs: the sweepers' count is the table's row, and no line repeats it.
  assert.doesNotMatch(consequenceLines(failedOver(0)).join('\n'), /scripts on/);
  assert.doesNotMatch(consequenceLines(failedOver(undefined)).join('\n'), /scripts on/);
  const table = (runs: readonly RunResult[]): string => renderTable({ server: SERVER, runs }, { color: false, width: 200, wide: false });
  assert.match(table([failedOver(4)]), /^noscript fallbacks +2\n(?:.*\n)*noscript fallbacks: the sweepers' alone; the workers' are in the lines below\n/m);
  assert.doesNotMatch(table([failedOver(0)]), /the sweepers' alone/);
  // No fault at all (a cache emptied by another client): the line is there all the same, without the failover's reason.
  const observed = runResult({ observerNoscriptFallbacks: 3, releaserNoscriptFallbacks: 1 });
  assert.deepEqual(consequenceLines(observed), [
    '  scripts on atomic: 4 NOSCRIPT fallbacks to EVAL: 0 by the sweepers, 1 by the re-leaser, 3 by the observer.',
  ]);
  // Several queues: the row sums the sweepers' counts of every queue, the lines give each queue's total.
  const queues = [7, 9].map((sweepers, i) =>
    runResult({
      queue: `q${i}`,
      consequences: { ...runResult().consequences, faults: ['script-flush'] },
      faultCounts: { crashes: 0, lostReplies: 0, reconnects: 0, scriptFlushes: 3, clientKills: 0 },
      noscriptFallbacks: sweepers,
      workerNoscriptFallbacks: 10,
    }),
  );
  const summed = renderTable({ server: SERVER, runs: queues, totals: totalsPerMode(queues) }, { color: false, width: 200, wide: false });
  assert.match(summed, /^noscript fallbacks +16\n(?:.*\n)*noscript fallbacks: the sweepers' alone; the workers' are in the lines below\n/m);
  assert.match(summed, /\(17 NOSCRIPT fallbacks to EVAL: 7 by the sweepers, 10 by the workers\)/);
  assert.match(summed, /\(19 NOSCRIPT fallbacks to EVAL: 9 by the sweepers, 10 by the workers\)/);
});

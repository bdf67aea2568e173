/**
 * What a run's jobs/s counts: the expired jobs seeded for a race that ran to its end, the leases
 * reclaimed for one its sweep limit cut short, in each run and in the totals of several queues.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobsPerSec, jobsRaced, type LapsedLockFigures } from '../../src/shared/model.js';
import { sumLapsedLock, totalsPerMode } from '../../src/report/totals.js';
import { LAPSED_LOCK_SOURCES } from '../../src/libraries/bullmq/lapsed-lock.js';
import { runResult } from '../helpers/run-result.js';

test('a race run to its end counts every job seeded; one cut short, only the leases it reclaimed', () => {
  assert.equal(jobsRaced({ jobs: 1000, unreclaimed: 0, cutShort: false }), 1000);
  // Left over without a sweep limit (a fault, a user script): still the jobs seeded, the leftovers are their own column.
  assert.equal(jobsRaced({ jobs: 1000, unreclaimed: 40, cutShort: false }), 1000);
  assert.equal(jobsRaced({ jobs: 1000, unreclaimed: 800, cutShort: true }), 200);
  assert.equal(jobsRaced({ jobs: 1000, unreclaimed: 1000, cutShort: true }), 0);
});

test('totals over queues side by side: the jobs each raced, over the longest wall time', () => {
  const [total] = totalsPerMode([
    runResult({ jobs: 1000, unreclaimed: 600, cutShort: true, wallMs: 100 }),
    runResult({ jobs: 1000, unreclaimed: 0, cutShort: false, wallMs: 200, queue: 'race-test-2' }),
  ]);
  assert.equal(total?.jobs, 2000);
  assert.equal(total?.cutShort, true);
  assert.equal(total?.jobsPerSec, jobsPerSec(400 + 1000, 200));
  assert.equal(total?.jobsPerSec, 7000);
});

test("totals over a cluster's queues: the server's µs per job over all their jobs, and every queue's workers", () => {
  const consequences = (workers: number) => ({ ...runResult().consequences, workers });
  const [total] = totalsPerMode([
    runResult({ jobs: 1000, serverUsPerJob: 4, consequences: consequences(2) }),
    runResult({ jobs: 3000, serverUsPerJob: 6, consequences: consequences(2), queue: 'race-test-2' }),
  ]);
  assert.equal(total?.serverUsPerJob, (4 * 1000 + 6 * 3000) / 4000);
  assert.equal(total?.consequences.workers, 4);
  // One queue that did not measure it: not the other's figure.
  const [partial] = totalsPerMode([runResult({ serverUsPerJob: 4 }), runResult({ serverUsPerJob: null, queue: 'race-test-2' })]);
  assert.equal(partial?.serverUsPerJob, null);
});

test("totals over queues of --fault lapsed-lock: each of the fault's counts summed, not the first queue's", () => {
  const lapsed = (n: number, refusal: string | null): LapsedLockFigures => ({
    lapsedJobs: n,
    recovered: 3 * n,
    executedTwice: n,
    lateCompletionsRefused: n,
    lateCompletionsAccepted: 0,
    secondRunsRefused: 1,
    refusal,
    sources: LAPSED_LOCK_SOURCES,
  });
  const [total] = totalsPerMode([
    runResult({ jobs: 30, lapsedLock: lapsed(30, null) }),
    runResult({ jobs: 30, lapsedLock: lapsed(30, 'Missing lock for job 4. moveToFinished'), queue: 'race-test-2' }),
  ]);
  assert.deepEqual(
    { ...total?.lapsedLock, sources: undefined },
    {
      lapsedJobs: 60,
      recovered: 180,
      executedTwice: 60,
      lateCompletionsRefused: 60,
      lateCompletionsAccepted: 0,
      secondRunsRefused: 2,
      refusal: 'Missing lock for job 4. moveToFinished',
      sources: undefined,
    },
  );
  assert.equal(sumLapsedLock([undefined]), undefined);
});

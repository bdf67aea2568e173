/** The failover drill's audit rule, on snapshots made by hand. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failoverLosses, jobsOnBothSides, takesBeyondFirst } from '../../src/audit/failover-rules.js';
import { blankSnapshot } from '../../src/audit/rules.js';

function moves(jobs: number, before: Record<number, number>, after: Record<number, number>, unconfirmed: Record<number, number> = {}) {
  const fill = (values: Record<number, number>): Uint32Array => {
    const array = new Uint32Array(jobs + 1);
    for (const [id, n] of Object.entries(values)) array[Number(id)] = n;
    return array;
  };
  return { before: fill(before), after: fill(after), unconfirmed: fill(unconfirmed) };
}

test('a move before the failover the new primary does not show is lost; its job moved again after is recovered twice', () => {
  const snapshot = blankSnapshot(3, 0);
  // Job 1 moved before and survived; job 2 moved before (lost) and again after; job 3 untouched.
  snapshot.stalled.set([Number.NaN, 1, 1, 0]);
  const losses = failoverLosses(snapshot, moves(3, { 1: 1, 2: 1 }, { 2: 1 }));
  assert.deepEqual(losses, { ackedMovesLost: 1, jobsRecoveredTwice: 1, counterIncrementsLost: 1 });
});

test('a lost move WAIT did not confirm was never acknowledged: counted as a lost increment only', () => {
  const snapshot = blankSnapshot(2, 0);
  snapshot.stalled.set([Number.NaN, 1, 1]);
  const losses = failoverLosses(snapshot, moves(2, { 1: 1, 2: 1 }, { 1: 1 }, { 1: 1 }));
  assert.deepEqual(losses, { ackedMovesLost: 0, jobsRecoveredTwice: 1, counterIncrementsLost: 1 });
});

test('counters seeded above zero: only the rise counts', () => {
  const snapshot = blankSnapshot(1, 2);
  snapshot.stalled.set([Number.NaN, 3]);
  assert.deepEqual(failoverLosses(snapshot, moves(1, { 1: 1 }, {})), { ackedMovesLost: 0, jobsRecoveredTwice: 0, counterIncrementsLost: 0 });
});

test("jobs run twice: taken by a worker before the failover and again after it, by the workers' own records", () => {
  const takes = (jobs: number, before: Record<number, number>, after: Record<number, number>) => {
    const { before: b, after: a } = moves(jobs, before, after);
    return { before: b, after: a };
  };
  // Job 1 taken before only; job 2 before and after; job 3 twice after only (not across the failover); job 4 twice before and once after.
  assert.equal(jobsOnBothSides(takes(4, { 1: 1, 2: 1, 4: 2 }, { 2: 1, 3: 2, 4: 1 })), 2);
  assert.equal(jobsOnBothSides(takes(3, {}, {})), 0);
  // Index 0 names no job: a stray count there is not a job.
  const stray = takes(1, {}, {});
  stray.before[0] = 1;
  stray.after[0] = 1;
  assert.equal(jobsOnBothSides(stray), 0);
  // Every take beyond a job's first, on either side: 0 + 1 + 1 + 2 (the double executions).
  assert.equal(takesBeyondFirst(takes(4, { 1: 1, 2: 1, 4: 2 }, { 2: 1, 3: 2, 4: 1 })), 4);
  assert.equal(takesBeyondFirst(takes(3, {}, {})), 0);
  assert.equal(takesBeyondFirst(stray), 0);
});

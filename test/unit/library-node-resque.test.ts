/**
 * The node-resque library's pure parts: the audit of node-resque's keys on hand-made snapshots
 * (each count checked exactly), its keys in the run's namespace, and the job id read from a
 * payload.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditResque, blankResqueSnapshot, type ResqueSnapshot } from '../../src/libraries/node-resque/audit.js';
import { jobIdOf, resqueKeys } from '../../src/libraries/node-resque/keys.js';
import { libraryOf } from '../../src/libraries/table.js';

interface Facts {
  failed?: number;
  queued?: number;
  held?: number;
  moves?: number;
}

/** A snapshot of jobs 1..n as `facts` describe them, `stat:failed` at `counter`, and the callers' moves. */
function snapshotOf(facts: readonly Facts[], counter: number): { snapshot: ResqueSnapshot; moves: Uint32Array } {
  const s = blankResqueSnapshot(facts.length);
  const moves = new Uint32Array(facts.length + 1);
  facts.forEach((f, i) => {
    s.inFailed[i + 1] = f.failed ?? 0;
    s.inQueue[i + 1] = f.queued ?? 0;
    s.held[i + 1] = f.held ?? 0;
    moves[i + 1] = f.moves ?? 0;
  });
  s.statFailed = counter;
  return { snapshot: s, moves };
}

test('a clean recovery: each job once in failed, one push each, stat:failed at the jobs: every anomaly 0', () => {
  const { snapshot, moves } = snapshotOf(
    [
      { failed: 1, moves: 1 },
      { failed: 1, moves: 1 },
      { failed: 1, moves: 1 },
    ],
    3,
  );
  const counts = auditResque(snapshot, moves);
  assert.equal(counts.recoveries, 3);
  for (const field of ['doubleRecoveries', 'duplicatePending', 'lostIncrements', 'extraIncrements', 'lostJobs', 'misplaced', 'unreclaimed'] as const) {
    assert.equal(counts[field], 0, field);
  }
  assert.equal(counts.mostPendingEntries, 1);
  assert.equal(counts.forgottenStalls, null);
  assert.equal(counts.doubleExecutions, null);
});

test('a job pushed by three callers: two duplicates in failed, two double recoveries, most entries three', () => {
  const { snapshot, moves } = snapshotOf(
    [
      { failed: 3, moves: 3 },
      { failed: 1, moves: 1 },
    ],
    4,
  );
  const counts = auditResque(snapshot, moves);
  assert.equal(counts.duplicatePending, 2);
  assert.equal(counts.doubleRecoveries, 2);
  assert.equal(counts.jobsRecoveredMoreThanOnce, 1);
  assert.equal(counts.mostPendingEntries, 3);
  assert.equal(counts.extraIncrements, 0);
});

test('stat:failed against the pushes: a rise with no push is an extra increment, a push it lacks a lost one', () => {
  const facts = [
    { failed: 1, moves: 1 },
    { failed: 1, moves: 1 },
  ];
  assert.equal(auditResque(snapshotOf(facts, 7).snapshot, snapshotOf(facts, 7).moves).extraIncrements, 5);
  const lacking = snapshotOf(facts, 1);
  const counts = auditResque(lacking.snapshot, lacking.moves);
  assert.equal(counts.lostIncrements, 1);
  assert.equal(counts.extraIncrements, 0);
});

test('a job nowhere is lost, failed and still queued misplaced, still held by a registered worker unreclaimed', () => {
  const { snapshot, moves } = snapshotOf([{}, { failed: 1, queued: 1, moves: 1 }, { held: 1 }, { failed: 1, held: 1, moves: 1 }], 2);
  const counts = auditResque(snapshot, moves);
  assert.equal(counts.lostJobs, 1);
  assert.equal(counts.misplaced, 2);
  assert.equal(counts.unreclaimed, 2);
});

test("node-resque's keys live under the queue's hash tag, in the library's namespace", () => {
  const keys = resqueKeys('q1');
  assert.equal(keys.namespace, 'emq:{q1}:node-resque');
  assert.equal(keys.workers, 'emq:{q1}:node-resque:workers');
  assert.equal(keys.failed, 'emq:{q1}:node-resque:failed');
  assert.equal(keys.statFailed, 'emq:{q1}:node-resque:stat:failed');
  assert.equal(keys.workingOn('dead-1'), 'emq:{q1}:node-resque:worker:dead-1:emq-race');
  assert.equal(keys.pingOf('dead-1'), 'emq:{q1}:node-resque:worker:ping:dead-1');
});

test("a payload's job id is its first argument, within the run's jobs", () => {
  assert.equal(jobIdOf({ class: 'emq-race', args: [4] }, 10), 4);
  assert.equal(jobIdOf({ args: ['4'] }, 10), 4);
  assert.equal(jobIdOf({ args: [11] }, 10), undefined);
  assert.equal(jobIdOf({ args: [] }, 10), undefined);
  assert.equal(jobIdOf(null, 10), undefined);
});

test('the node-resque modes belong to node-resque', () => {
  for (const mode of ['node-resque', 'node-resque-naive', 'node-resque-guarded']) assert.equal(libraryOf(mode), 'node-resque');
});

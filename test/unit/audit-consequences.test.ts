/** The arithmetic of what the race costs, tested directly (no server involved). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CycleTally,
  doubleExecutions,
  extraMoves,
  isDeadLetterEscape,
  isDeadLetteredEarly,
  overcount,
  placement,
  reconcileGap,
  sampleVerdict,
  withCycleSums,
} from '../../src/audit/consequence-rules.js';
import { STATE_CODES } from '../../src/audit/job-state.js';
import { type AuditDoubts, auditJobs, blankSnapshot, heldCounts, type JobSnapshot } from '../../src/audit/rules.js';
import { checkConsequenceOptions } from '../../src/consequences/plan.js';
import { EmqError } from '../../src/shared/errors.js';
import { collectFault, faultsForMode } from '../../src/consequences/faults/names.js';
import { STRATEGIES } from '../../src/sweepers/strategies.js';

const { active, pending, dead, done } = STATE_CODES;

describe('reconcileGap', () => {
  const out = (moved = 0, entries = 0) => ({ inActive: 0, placed: true, moved, entries });
  const loop = (allowance = 1) => ({ allowance, trusted: true, holds: true });
  const atomic = (allowance = 1) => ({ allowance, trusted: true, holds: false });
  const script = (allowance = 1) => ({ allowance, trusted: false, holds: false });
  test('a counter rise no sweeper heard of, job out of active and placed, a call in doubt: one unacknowledged move', () => {
    assert.deepEqual(reconcileGap(-1, out(), atomic()), { gap: 0, unacknowledged: 1 });
  });
  test('no more than the allowance: a second unexplained rise stays an extra increment', () => {
    assert.deepEqual(reconcileGap(-2, out(), atomic()), { gap: -1, unacknowledged: 1 });
    // Two calls lost while holding it (a re-leased job, --cycles): two.
    assert.deepEqual(reconcileGap(-2, out(), loop(2)), { gap: 0, unacknowledged: 2 });
  });
  test('no call in doubt for the job, or the job still in active: nothing is reconciled', () => {
    assert.deepEqual(reconcileGap(-1, out(), undefined), { gap: -1, unacknowledged: 0 });
    assert.deepEqual(reconcileGap(-1, out(), atomic(0)), { gap: -1, unacknowledged: 0 });
    assert.deepEqual(reconcileGap(-1, { ...out(), inActive: 1 }, atomic()), { gap: -1, unacknowledged: 0 });
  });
  test('lost increments are never reconciled', () => {
    assert.deepEqual(reconcileGap(2, out(), loop()), { gap: 2, unacknowledged: 0 });
  });
  test("a loop's push whose reply was lost: an entry in pending no move explains is a move, and its stall a lost increment", () => {
    // Recorded no move, in pending once, counter untouched (the write comes after the push).
    assert.deepEqual(reconcileGap(0, out(0, 1), loop()), { gap: 1, unacknowledged: 1 });
    // Two pushes recorded, three entries, the counter raised twice.
    assert.deepEqual(reconcileGap(0, out(2, 3), loop()), { gap: 1, unacknowledged: 1 });
  });
  test('a script whose reply was lost shows both ways at once: one move, not two', () => {
    assert.deepEqual(reconcileGap(-1, out(0, 1), atomic()), { gap: 0, unacknowledged: 1 });
  });
  test('fewer entries than moves (taken out by a worker, or dead-lettered) reconcile nothing; nor do more without a call in doubt', () => {
    assert.deepEqual(reconcileGap(1, out(2, 1), loop()), { gap: 1, unacknowledged: 0 });
    assert.deepEqual(reconcileGap(0, out(0, 1), undefined), { gap: 0, unacknowledged: 0 });
  });
  test('a job in no place is no move: a claim cut off between its count and its push lost it, and the count is its own', () => {
    const lost = { inActive: 0, placed: false, moved: 0, entries: 0 };
    assert.deepEqual(reconcileGap(-1, lost, loop()), { gap: 0, unacknowledged: 0 });
    // A one-call mode holds no job: there the rise stays unexplained.
    assert.deepEqual(reconcileGap(-1, lost, atomic()), { gap: -1, unacknowledged: 0 });
  });
  test("a user's script is trusted with neither its entries nor its counter: out of active and placed is one move", () => {
    // It pushes twice and counts twice: one move reconciled, the rest stays what it is.
    assert.deepEqual(reconcileGap(-2, out(0, 2), script()), { gap: -1, unacknowledged: 1 });
    assert.deepEqual(reconcileGap(0, out(0, 2), atomic()), { gap: 1, unacknowledged: 1 });
  });
});

describe('placement', () => {
  test('one place whose state names it', () => {
    assert.equal(placement(1, 0, 0, 0, 0, active), 'placed');
    assert.equal(placement(0, 1, 0, 0, 0, pending), 'placed');
    assert.equal(placement(0, 0, 1, 0, 0, dead), 'placed');
  });
  test('a finished job (run, out of running, state done) is neither lost nor misplaced', () => {
    assert.equal(placement(0, 0, 0, 0, 1, done), 'placed');
    assert.equal(placement(0, 0, 0, 0, 2, done), 'placed');
  });
  test('a job run whose state a late write turned back to pending is misplaced, not lost', () => {
    assert.equal(placement(0, 0, 0, 0, 1, pending), 'misplaced');
  });
  test('in no place and never run: lost', () => {
    assert.equal(placement(0, 0, 0, 0, 0, active), 'lost');
  });
  test('two places at once: finished and dead, or pending and dead', () => {
    assert.equal(placement(0, 0, 1, 0, 1, dead), 'misplaced');
    assert.equal(placement(0, 2, 1, 0, 0, dead), 'misplaced');
  });
  test('taken by a worker, not finished: in running with state pending', () => {
    assert.equal(placement(0, 0, 0, 1, 1, pending), 'placed');
  });
});

test('doubleExecutions: runs beyond the first', () => {
  assert.equal(doubleExecutions(Number.NaN), 0);
  assert.equal(doubleExecutions(0), 0);
  assert.equal(doubleExecutions(1), 0);
  assert.equal(doubleExecutions(3), 2);
});

test('isDeadLetterEscape: reached max-stalled and not dead-lettered then', () => {
  const swept = (inDead: number, runs = 0) => ({ inDead, runs, unreclaimed: false });
  assert.equal(isDeadLetterEscape(3, 0, 3, swept(1)), false, 'dead at its third stall');
  assert.equal(isDeadLetterEscape(3, 0, 3, swept(0)), true, 'third stall, still not dead');
  assert.equal(isDeadLetterEscape(4, 0, 3, swept(1)), true, 'stalled a fourth time before it went dead');
  assert.equal(isDeadLetterEscape(2, 0, 3, swept(0)), false, 'below max-stalled');
  assert.equal(isDeadLetterEscape(1, 2, 3, swept(0)), true, 'stalled-before counts');
  assert.equal(isDeadLetterEscape(1, 0, 1, swept(1, 1)), true, 'in dead, but a worker ran it after its last stall');
  assert.equal(isDeadLetterEscape(1, 0, 2, swept(0, 1)), false, 'ran below its limit: a job recovered as it should be');
  assert.equal(isDeadLetterEscape(1, 0, 1, { inDead: 0, runs: 0, unreclaimed: true }), false, 'never swept: unreclaimed, not escaped');
  assert.equal(isDeadLetterEscape(2, 0, 1, { inDead: 0, runs: 0, unreclaimed: true }), true, 'leased again past its limit, then left unswept');
});

test('sampleVerdict: no place, one, or two at once', () => {
  const none = { inActive: 0, inPending: 0, inDead: 0, inRunning: 0, done: 0 };
  assert.equal(sampleVerdict(none), 'neither');
  assert.equal(sampleVerdict({ ...none, inPending: 1 }), 'one');
  assert.equal(sampleVerdict({ ...none, inRunning: 1, done: 1 }), 'both');
  assert.equal(sampleVerdict({ ...none, inActive: 1, inPending: 1 }), 'both');
});

describe('CycleTally', () => {
  test('a correct run over three stalls of each job has no extra moves', () => {
    const tally = new CycleTally(2);
    tally.addMoves(Uint32Array.from([0, 1, 1]));
    tally.addRelease(1, 1);
    tally.addRelease(2, 1);
    tally.addMoves(Uint32Array.from([0, 1, 1]));
    assert.deepEqual([...tally.trueStalls], [0, 2, 2]);
    assert.deepEqual([...tally.totalMoves], [0, 2, 2]);
    assert.equal(tally.doubleRecoveries, 0);
    assert.equal(tally.earlierDuplicatePending, 0);
  });
  test('moves beyond one per stall and duplicate entries taken from pending are summed', () => {
    const tally = new CycleTally(2);
    tally.addMoves(Uint32Array.from([0, 2, 1]));
    tally.addRelease(1, 2);
    tally.addMoves(Uint32Array.from([0, 3, 0]));
    assert.equal(tally.doubleRecoveries, 3); // job 1: 5 moves over 2 stalls
    assert.equal(tally.earlierDuplicatePending, 1);
    assert.equal(tally.jobsRecoveredMoreThanOnce, 1);
  });
  test('ids outside the run are ignored', () => {
    const tally = new CycleTally(2);
    tally.addRelease(7, 3);
    assert.equal(tally.earlierDuplicatePending, 0);
  });
  test('extraMoves', () => {
    assert.equal(extraMoves(5, 2), 3);
    assert.equal(extraMoves(1, 2), 0);
  });
});

/** One unanswered call of a one-call built-in mode (batch 100), over `size` ids. */
const blindCall = (size: number): AuditDoubts => ({ held: new Uint32Array(size), blindMoves: 100, oneCall: true, trusted: true });
/** Round-trip calls lost while these jobs were held. */
const heldAt = (ids: number[], size: number): AuditDoubts => ({ held: heldCounts(ids, size), blindMoves: 0, oneCall: false, trusted: true });

function snapshot(over: Partial<JobSnapshot> & { jobs: number }): JobSnapshot {
  return { ...blankSnapshot(over.jobs, 0), ...over };
}

describe('auditJobs with the new counts', () => {
  test('a crashed script call: moved on the server, unknown to the sweeper, reconciled', () => {
    const snap = snapshot({ jobs: 1, inPending: Uint32Array.from([0, 1]), stalled: Float64Array.from([0, 1]), state: Uint8Array.from([0, pending]) });
    const counts = auditJobs(snap, new Uint32Array(2), { doubts: blindCall(2) });
    assert.equal(counts.unacknowledgedMoves, 1);
    assert.equal(counts.extraIncrements, 0);
    assert.equal(counts.recoveries, 1);
    const strict = auditJobs(snap, new Uint32Array(2));
    assert.equal(strict.extraIncrements, 1, 'without a call in doubt it stays an anomaly');
  });
  test('a job run twice by workers and finished', () => {
    const snap = snapshot({
      jobs: 1,
      stalled: Float64Array.from([0, 1]),
      state: Uint8Array.from([0, done]),
      runs: Float64Array.from([0, 2]),
      inRunning: new Uint8Array(2),
    });
    const counts = auditJobs(snap, Uint32Array.from([0, 2]));
    assert.equal(counts.doubleExecutions, 1);
    assert.equal(counts.lostJobs, 0);
    assert.equal(counts.misplaced, 0);
    // Across a failover the workers' own takes count them: the promoted replica's `runs` say 2
    // where the workers took the job three times (one increment died with the old primary).
    assert.equal(auditJobs(snap, Uint32Array.from([0, 2]), { takesBeyondFirst: 2 }).doubleExecutions, 2);
    assert.equal(
      auditJobs(snap, Uint32Array.from([0, 2]), { takesBeyondFirst: null }).doubleExecutions,
      null,
      'a failover without workers: nothing counts them',
    );
  });
  test('dead-letter escapes need max-stalled and the true stalls', () => {
    const snap = snapshot({
      jobs: 2,
      inPending: Uint32Array.from([0, 1, 0]),
      inDead: Uint8Array.from([0, 0, 1]),
      stalled: Float64Array.from([0, 2, 3]),
      state: Uint8Array.from([0, pending, dead]),
    });
    const counts = auditJobs(snap, Uint32Array.from([0, 3, 3]), { maxStalled: 3, trueStalls: Uint32Array.from([0, 3, 3]) });
    assert.equal(counts.deadLetterEscapes, 1);
    assert.equal(counts.lostIncrements, 1);
  });
  test('over-counted stalls and early dead-letters: a counter above the real stalls, in both places a job can end', () => {
    // Job 1 stalled once and was counted twice (the second sweep read the first one's 1 and wrote 2): over-counted, still pending.
    // Job 2 stalled once and was counted three times: over-counted and, at max-stalled 3, dead-lettered early.
    // Job 3 stalled three times and is in dead: counted right, dead-lettered in time.
    // Job 4 stalled once, two moves, both sweeps wrote back 1: the page's lost increment, but its counter is right.
    const snap = snapshot({
      jobs: 4,
      inPending: Uint32Array.from([0, 1, 0, 0, 2]),
      inDead: Uint8Array.from([0, 0, 1, 1, 0]),
      stalled: Float64Array.from([0, 2, 3, 3, 1]),
      state: Uint8Array.from([0, pending, dead, dead, pending]),
    });
    const counts = auditJobs(snap, Uint32Array.from([0, 2, 3, 3, 2]), { maxStalled: 3, trueStalls: Uint32Array.from([0, 1, 1, 3, 1]) });
    assert.equal(counts.overcountedStalls, 2);
    assert.equal(counts.overcountedStallCount, 3);
    assert.equal(counts.deadLetteredEarly, 1);
    assert.equal(counts.deadLetterEscapes, 0);
    assert.equal(counts.lostIncrements, 1, 'job 4: two moves, one rise');
    // Without --cycles every job stalled once: the same rule with one stall each.
    const once = auditJobs(snap, Uint32Array.from([0, 2, 3, 3, 2]), { maxStalled: 3 });
    assert.equal(once.overcountedStalls, 3, 'job 3 now stalled once and shows 3');
    assert.equal(once.deadLetteredEarly, 2);
    assert.equal(overcount(1, 2, 0), 1);
    assert.equal(overcount(2, 5, 3), 0, 'stalled-before counts as real stalls');
    assert.equal(overcount(1, Number.NaN, 0), 0, 'no hash: the counter never rose');
    assert.equal(isDeadLetteredEarly(1, 1, 3, 1), true);
    assert.equal(isDeadLetteredEarly(2, 1, 3, 1), false, 'stalled-before 1 plus 2 stalls reach max-stalled 3');
    assert.equal(isDeadLetteredEarly(1, 0, 3, 0), false, 'not in dead');
  });
  test('withCycleSums takes moves and pending entries per stall from the tally', () => {
    const tally = new CycleTally(1);
    tally.addMoves(Uint32Array.from([0, 2]));
    tally.addRelease(1, 2);
    tally.addMoves(Uint32Array.from([0, 1]));
    const snap = snapshot({ jobs: 1, inPending: Uint32Array.from([0, 1]), stalled: Float64Array.from([0, 2]), state: Uint8Array.from([0, pending]) });
    const counts = withCycleSums(auditJobs(snap, tally.totalMoves), tally, 2, { samples: 9, windowInNeither: 2, windowInBoth: 1 });
    assert.equal(counts.doubleRecoveries, 1);
    assert.equal(counts.duplicatePending, 1);
    assert.equal(counts.duplicatePendingAtEnd, 0, 'the one duplicate was taken out by the re-leaser: none at the end');
    assert.equal(counts.lostIncrements, 1);
    assert.equal(counts.windowInNeither, 2);
    assert.equal(counts.windowInBoth, 1);
  });
  test("withCycleSums with one cycle keeps the audit's moves beyond the first, which count unacknowledged ones", () => {
    const tally = new CycleTally(1);
    tally.addMoves(Uint32Array.from([0, 1]));
    // Recorded once, in pending twice, the counter never written: the second push's reply was lost.
    const snap = snapshot({ jobs: 1, inPending: Uint32Array.from([0, 2]), stalled: Float64Array.from([0, 1]), state: Uint8Array.from([0, pending]) });
    const counts = withCycleSums(auditJobs(snap, tally.totalMoves, { doubts: heldAt([1], 2) }), tally, 1);
    assert.equal(counts.unacknowledgedMoves, 1);
    assert.equal(counts.doubleRecoveries, 1);
    assert.equal(counts.jobsRecoveredMoreThanOnce, 1);
    assert.equal(counts.duplicatePending, 1);
  });
});

describe('fault and consequence options', () => {
  test('--fault collects names once each, and refuses unknown ones', () => {
    assert.deepEqual(collectFault('client-kill', collectFault('sweeper-crash')), ['sweeper-crash', 'client-kill']);
    assert.deepEqual(collectFault('client-kill', ['client-kill']), ['client-kill']);
    assert.throws(
      () => collectFault('meteor'),
      (err: unknown) => err instanceof EmqError && err.exitCode === 2 && /--fault: "meteor"/.test(err.message),
    );
  });
  test('script-flush says it cannot reach the loop', () => {
    const { applied, notes } = faultsForMode(['script-flush', 'sweeper-crash'], 'loop', STRATEGIES.loop.faultsThatMiss ?? {});
    assert.deepEqual(applied, ['sweeper-crash']);
    assert.match(notes[0] ?? '', /script-flush does not apply to loop/);
    assert.deepEqual(faultsForMode(['script-flush'], 'atomic', STRATEGIES.atomic.faultsThatMiss ?? {}).applied, ['script-flush']);
    // Only the modes that call a script are flushed at: the others say so, and nothing is flushed for them.
    for (const mode of ['loop', 'watch', 'claim', 'function'] as const) {
      const missed = faultsForMode(['script-flush'], mode, STRATEGIES[mode].faultsThatMiss ?? {});
      assert.deepEqual(missed.applied, [], mode);
      assert.match(missed.notes[0] ?? '', new RegExp(`script-flush does not apply to ${mode}`));
    }
  });
  test('workers with cycles, failover with cycles or the observer, and script-flush on a shared server, are usage errors', () => {
    const base = { faults: [], workers: 0, cycles: 1, observe: false, allowServerWide: false } as const;
    assert.throws(() => checkConsequenceOptions({ ...base, workers: 2, cycles: 2 }, true), /--workers cannot go with --cycles 2/);
    assert.throws(() => checkConsequenceOptions({ ...base, faults: ['script-flush'] }, false), /--allow-server-wide/);
    // The failover drill says which flag it refuses, and why: its waits do not cover the re-leaser or the observer.
    assert.throws(
      () => checkConsequenceOptions({ ...base, faults: ['failover'], cycles: 3 }, true),
      /--fault failover cannot go with --cycles 3: the drill waits for the sweepers and the workers .*not for the re-leaser/,
    );
    assert.throws(
      () => checkConsequenceOptions({ ...base, faults: ['failover'], observe: true }, true),
      /--fault failover cannot go with --observe: .*the observer of --observe/,
    );
    checkConsequenceOptions({ ...base, faults: ['script-flush'] }, true);
    checkConsequenceOptions({ ...base, faults: ['script-flush'], allowServerWide: true }, false);
    checkConsequenceOptions({ ...base, workers: 2 }, false);
    checkConsequenceOptions({ ...base, workers: 2, observe: true }, true);
    checkConsequenceOptions({ ...base, cycles: 3, observe: true }, true);
  });
});

describe('auditJobs under faults, with workers and cycles', () => {
  test("a one-call mode's unanswered call whose jobs workers then ran: moves, not extra increments", () => {
    // Job 1: moved by the lost call, then taken and run by a worker: out of every list, done, counted once.
    const snap = snapshot({
      jobs: 1,
      stalled: Float64Array.from([0, 1]),
      state: Uint8Array.from([0, done]),
      runs: Float64Array.from([0, 1]),
      inRunning: new Uint8Array(2),
    });
    const counts = auditJobs(snap, new Uint32Array(2), { doubts: blindCall(2) });
    assert.equal(counts.unacknowledgedMoves, 1);
    assert.equal(counts.recoveries, 1);
    assert.equal(counts.extraIncrements, 0);
    assert.equal(counts.lostJobs, 0);
  });
});

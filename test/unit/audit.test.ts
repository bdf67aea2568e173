/** The audit's arithmetic, on hand-made snapshots: each count is checked exactly. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STATE_CODES, excess, missingJobs, stateCode } from '../../src/audit/job-state.js';
import {
  auditJobs,
  blankSnapshot,
  forgottenStalls,
  incrementGap,
  isClean,
  isMisplaced,
  isStolen,
  isUnreclaimed,
  heldCounts,
  movesPerJob,
  placeCount,
  type JobSnapshot,
} from '../../src/audit/rules.js';
import { MoveLog } from '../../src/sweepers/move-log.js';

interface JobFacts {
  moves?: number;
  pending?: number;
  active?: boolean;
  expired?: boolean;
  dead?: boolean;
  stalled?: number;
  state?: keyof typeof STATE_CODES;
}

function snapshotOf(jobs: JobFacts[], stalledBefore = 0): { snapshot: JobSnapshot; moves: Uint32Array } {
  const n = jobs.length;
  const snapshot = blankSnapshot(n, stalledBefore);
  const moves = new Uint32Array(n + 1);
  jobs.forEach((job, index) => {
    const id = index + 1;
    moves[id] = job.moves ?? 0;
    snapshot.inPending[id] = job.pending ?? 0;
    snapshot.inActive[id] = job.active ? 1 : 0;
    snapshot.activeExpired[id] = job.active && job.expired ? 1 : 0;
    snapshot.inDead[id] = job.dead ? 1 : 0;
    if (job.stalled !== undefined) snapshot.stalled[id] = job.stalled;
    snapshot.state[id] = STATE_CODES[job.state ?? 'missing'];
  });
  return { snapshot, moves };
}

test('excess counts what is beyond the first', () => {
  assert.equal(excess(0), 0);
  assert.equal(excess(1), 0);
  assert.equal(excess(2), 1);
  assert.equal(excess(8), 7);
});

test('incrementGap is signed: positive for lost increments, negative for extra ones', () => {
  assert.equal(incrementGap(2, 1, 0), 1);
  assert.equal(incrementGap(1, 1, 0), 0);
  assert.equal(incrementGap(0, 1, 0), -1);
  assert.equal(incrementGap(1, 3, 2), 0);
  assert.equal(incrementGap(1, Number.NaN, 0), 1, 'a missing counter counts as never incremented');
});

test('placeCount and isMisplaced', () => {
  assert.equal(placeCount(0, 0, 0), 0);
  assert.equal(placeCount(1, 3, 1), 3);
  assert.equal(isMisplaced(0, 0, 0, STATE_CODES.pending), false, 'a lost job is not also misplaced');
  assert.equal(isMisplaced(0, 1, 0, STATE_CODES.pending), false);
  assert.equal(isMisplaced(0, 2, 0, STATE_CODES.pending), false, 'duplicates in one place are not misplacement');
  assert.equal(isMisplaced(0, 1, 0, STATE_CODES.dead), true);
  assert.equal(isMisplaced(1, 0, 0, STATE_CODES.active), false);
  assert.equal(isMisplaced(1, 0, 0, STATE_CODES.pending), true);
  assert.equal(isMisplaced(0, 0, 1, STATE_CODES.dead), false);
  assert.equal(isMisplaced(1, 1, 0, STATE_CODES.pending), true);
});

test('stateCode maps the state field', () => {
  assert.equal(stateCode('active'), STATE_CODES.active);
  assert.equal(stateCode('pending'), STATE_CODES.pending);
  assert.equal(stateCode('dead'), STATE_CODES.dead);
  assert.equal(stateCode(null), STATE_CODES.missing);
  assert.equal(stateCode('running'), STATE_CODES.other);
});

test('a clean run: every job moved once and counted once', () => {
  const { snapshot, moves } = snapshotOf(
    [
      { moves: 1, pending: 1, stalled: 1, state: 'pending' },
      { moves: 1, dead: true, stalled: 3, state: 'dead' },
    ],
    2,
  );
  // job 1 started at 2 too; it reached 3 and would be dead in a real run, but the audit only counts.
  snapshot.stalled[1] = 3;
  const counts = auditJobs(snapshot, moves);
  assert.deepEqual(counts, {
    recoveries: 2,
    doubleRecoveries: 0,
    duplicatePending: 0,
    duplicatePendingAtEnd: 0,
    mostPendingEntries: 1,
    lostIncrements: 0,
    extraIncrements: 0,
    // Each counter ends at stalled-before plus its one stall: neither above nor (without max-stalled) dead early.
    overcountedStalls: 0,
    overcountedStallCount: 0,
    deadLetteredEarly: 0,
    // Without re-leases (no trueStalls) the true stall count is not known: not measured.
    forgottenStalls: null,
    forgottenStallCount: null,
    lostJobs: 0,
    misplaced: 0,
    unreclaimed: 0,
    jobsRecoveredMoreThanOnce: 0,
    // No workers, no observer, no live jobs, no cross-check: none of these was measured.
    doubleExecutions: null,
    deadLetterEscapes: 0,
    windowInNeither: null,
    windowInBoth: null,
    unacknowledgedMoves: 0,
    stolenLeases: null,
    misreported: null,
    strayEntries: 0,
  });
  assert.ok(isClean(counts));
});

test('every anomaly is counted exactly on a mixed snapshot', () => {
  const { snapshot, moves } = snapshotOf([
    // moved 3 times, 3 entries in pending, counter rose by 1: 2 extra recoveries, 2 duplicates, 2 lost
    { moves: 3, pending: 3, stalled: 1, state: 'pending' },
    // moved twice, once in pending (a set-like push), counter rose by 2: 1 extra recovery, nothing lost,
    // but one stall counted twice: an over-counted stall
    { moves: 2, pending: 1, stalled: 2, state: 'pending' },
    // never moved but its counter rose: 1 extra increment, and it is unreclaimed in active
    { moves: 0, active: true, expired: true, stalled: 1, state: 'active' },
    // moved once but in no place at all: a lost job
    { moves: 1, stalled: 1, state: 'pending' },
    // in pending and dead at once: misplaced
    { moves: 1, pending: 1, dead: true, stalled: 1, state: 'dead' },
    // seeded expired, now in active with a lease in the future, never moved nor counted: a sweep
    // renewed its lease instead of recovering it, so it is unreclaimed too
    { moves: 0, active: true, expired: false, stalled: 0, state: 'active' },
    // in pending with a state that says dead: misplaced
    { moves: 1, pending: 1, stalled: 1, state: 'dead' },
  ]);
  const counts = auditJobs(snapshot, moves);
  assert.deepEqual(counts, {
    recoveries: 8,
    doubleRecoveries: 3,
    duplicatePending: 2,
    duplicatePendingAtEnd: 2,
    mostPendingEntries: 3,
    lostIncrements: 2,
    extraIncrements: 1,
    overcountedStalls: 1,
    overcountedStallCount: 1,
    // No max-stalled given: dead-letters are not judged.
    deadLetteredEarly: 0,
    forgottenStalls: null,
    forgottenStallCount: null,
    lostJobs: 1,
    misplaced: 2,
    unreclaimed: 2,
    jobsRecoveredMoreThanOnce: 2,
    doubleExecutions: null,
    deadLetterEscapes: 0,
    windowInNeither: null,
    windowInBoth: null,
    unacknowledgedMoves: 0,
    stolenLeases: null,
    misreported: null,
    strayEntries: 0,
  });
  assert.equal(isClean(counts), false);
});

test('lost and extra increments do not cancel out', () => {
  const { snapshot, moves } = snapshotOf([
    { moves: 2, pending: 2, stalled: 1, state: 'pending' },
    { moves: 0, active: true, stalled: 1, state: 'active' },
  ]);
  const counts = auditJobs(snapshot, moves);
  assert.equal(counts.lostIncrements, 1);
  assert.equal(counts.extraIncrements, 1);
});

test('forgotten stalls: counters below the stalls each job truly had, measured only where the true count is known', () => {
  const { snapshot, moves } = snapshotOf([
    // stalled 3 times, counted 3: nothing forgotten
    { moves: 3, pending: 1, stalled: 3, state: 'pending' },
    // stalled 3 times, counted 1 (two sweeps wrote back the same value twice): 2 forgotten
    { moves: 4, pending: 1, stalled: 1, state: 'pending' },
    // stalled twice, counted 3 (more than it stalled): nothing forgotten; an extra increment instead
    { moves: 2, pending: 1, stalled: 3, state: 'pending' },
  ]);
  const trueStalls = Uint32Array.from([0, 3, 3, 2]);
  const counts = auditJobs(snapshot, moves, { trueStalls });
  assert.equal(counts.forgottenStalls, 1);
  assert.equal(counts.forgottenStallCount, 2);
  assert.equal(counts.lostIncrements, 3, "the page's lost increments count recoveries, not stalls: 4 moves, 1 counted");
  assert.equal(counts.extraIncrements, 1);
  assert.equal(isClean(counts), false);
  assert.equal(forgottenStalls(3, 1, 0), 2);
  assert.equal(forgottenStalls(1, Number.NaN, 0), 1, 'a missing counter counts as never incremented');
  assert.equal(forgottenStalls(2, 5, 2), 0, 'stalled-before is not a stall of the run');
});

test('not measured is not zero: workers, live jobs and a cross-check make their counts numbers', () => {
  const { snapshot, moves } = snapshotOf([{ moves: 1, pending: 1, stalled: 1, state: 'pending' }]);
  const withWorkers = { ...snapshot, runs: Float64Array.from([Number.NaN, 1]), inRunning: new Uint8Array(2) };
  // Finished by a worker: its state would be done; what matters here is that runs were read.
  assert.equal(auditJobs(withWorkers, moves).doubleExecutions, 0);
  assert.equal(auditJobs(snapshot, moves).doubleExecutions, null);
  assert.equal(auditJobs(snapshot, moves, { crossCheck: true }).misreported, 0);
  const live = blankSnapshot(1, 0, 1);
  live.inActive[2] = 1;
  live.stalled[2] = 0;
  assert.equal(auditJobs(live, new Uint32Array(3)).stolenLeases, 0);
});

test('the cross-check counts a move whose reply was lost as returned, and holds returns to the entries they left', () => {
  // Job 1: moved by a call whose reply a killed connection lost (out of active, counted, in pending).
  // Job 2: returned twice by one call that pushed it once. Job 3: moved once, returned once.
  const { snapshot, moves } = snapshotOf([
    { moves: 0, pending: 1, stalled: 1, state: 'pending' },
    { moves: 2, pending: 1, stalled: 1, state: 'pending' },
    { moves: 1, pending: 1, stalled: 1, state: 'pending' },
  ]);
  // One unanswered call of the user's script (a one-call mode, batch 100), whose traces are not trusted.
  const doubts = { held: new Uint32Array(4), blindMoves: 100, oneCall: true, trusted: false };
  const inDoubt = auditJobs(snapshot, moves, { crossCheck: true, doubts });
  assert.equal(inDoubt.unacknowledgedMoves, 1);
  assert.equal(inDoubt.misreported, 0, 'the lost reply is no misreport, and entries are not held to without movesLeaveEntries');
  assert.equal(auditJobs(snapshot, moves, { crossCheck: true, doubts, movesLeaveEntries: true }).misreported, 1);
  assert.equal(auditJobs(snapshot, moves, { crossCheck: true }).misreported, 1, 'without calls in doubt job 1 left active unreturned');
  assert.equal(auditJobs(snapshot, moves, { movesLeaveEntries: true }).misreported, null, 'no cross-check, nothing measured');
});

test('movesPerJob sums every sweeper record, and counts apart the ids that name no job of the run', () => {
  const a = new MoveLog();
  const b = new MoveLog();
  a.add(1, 'pending');
  a.add(2, 'dead');
  b.add(1, 'pending');
  b.add(99, 'pending'); // not a seeded job: no job's move, counted apart
  b.add(4, 'pending');
  const { moves, beyond } = movesPerJob(3, [a, b]);
  assert.deepEqual([...moves], [0, 2, 1, 0]);
  assert.equal(beyond, 2);
});

test('MoveLog grows and remembers destinations', () => {
  const log = new MoveLog();
  for (let id = 1; id <= 5000; id++) log.add(id, id % 2 ? 'pending' : 'dead');
  assert.equal(log.length, 5000);
  const entries = [...log];
  assert.deepEqual(entries[0], { id: 1, destination: 'pending' });
  assert.deepEqual(entries[4999], { id: 5000, destination: 'dead' });
  assert.throws(() => log.add(0, 'pending'));
});

test('missingJobs: the jobs read without a state, all counted, the lowest named, at most the limit, index 0 no job', () => {
  const { missing, active, pending, dead, done } = STATE_CODES;
  const state = Uint8Array.from([missing, active, missing, pending, dead, missing, done, missing]);
  assert.deepEqual(missingJobs(state, 10), { ids: ['2', '5', '7'], count: 3 });
  assert.deepEqual(missingJobs(state, 2), { ids: ['2', '5'], count: 3 }, 'past the limit: counted, not named');
  assert.deepEqual(missingJobs(Uint8Array.from([missing, active, pending]), 10), { ids: [], count: 0 });
});

test('calls in doubt: moves the server shows that no sweeper heard back are recoveries, double recoveries and, uncounted, lost increments', () => {
  const { snapshot, moves } = snapshotOf([
    // a loop's push ran, its reply was lost, so the counter was never written
    { moves: 0, pending: 1, stalled: 0, state: 'active' },
    // pushed twice, the second reply lost: one recorded move, two entries, counted once
    { moves: 1, pending: 2, stalled: 1, state: 'pending' },
    // a script ran whole, its reply lost: out of active, counter raised, in pending once
    { moves: 0, pending: 1, stalled: 1, state: 'pending' },
    // recorded and answered: nothing to reconcile
    { moves: 1, pending: 1, stalled: 1, state: 'pending' },
  ]);
  // Round trips lost while jobs 1, 2 and 3 were held.
  const counts = auditJobs(snapshot, moves, { doubts: { held: heldCounts([1, 2, 3], 5), blindMoves: 0, oneCall: false, trusted: true } });
  assert.equal(counts.unacknowledgedMoves, 3);
  assert.equal(counts.recoveries, 5);
  assert.equal(counts.doubleRecoveries, 1);
  assert.equal(counts.jobsRecoveredMoreThanOnce, 1);
  assert.equal(counts.duplicatePending, 1);
  assert.equal(counts.lostIncrements, 2);
  assert.equal(counts.extraIncrements, 0);
  // Without a call in doubt the same state is counted from the records alone.
  const strict = auditJobs(snapshot, moves);
  assert.equal(strict.unacknowledgedMoves, 0);
  assert.equal(strict.recoveries, 2);
  assert.equal(strict.extraIncrements, 1);
});

test('isUnreclaimed: an expired lease left, or one renewed with nothing done to the job', () => {
  const job = { inActive: 1, activeExpired: 0, inPending: 0, inDead: 0, inRunning: 0 };
  assert.equal(isUnreclaimed({ ...job, activeExpired: 1 }, 0, 0, 0), true, 'still expired in active');
  assert.equal(isUnreclaimed(job, 0, 0, 0), true, 'its lease pushed into the future, never moved nor counted');
  assert.equal(isUnreclaimed(job, 0, Number.NaN, 0), true, 'nor a counter written');
  assert.equal(isUnreclaimed(job, 1, 1, 0), false, 'moved and counted: a worker may hold it again');
  assert.equal(isUnreclaimed(job, 0, 1, 0), false, 'counted: a move the tool did not hear of');
  assert.equal(isUnreclaimed({ ...job, inRunning: 1 }, 0, 0, 0), false, 'a worker holds it');
  assert.equal(isUnreclaimed({ ...job, inPending: 1 }, 0, 0, 0), false, 'in pending as well: misplaced, not unreclaimed');
  assert.equal(isUnreclaimed({ ...job, inActive: 0, inPending: 1 }, 1, 1, 0), false, 'recovered');
});

test('isStolen: a live job that a sweep touched, also when it only pushed it to pending or dead', () => {
  assert.equal(isStolen(0, 1, 0, 0), false, 'untouched in active');
  assert.equal(isStolen(1, 1, 0, 0), true, 'recorded as moved');
  assert.equal(isStolen(0, 0, 0, 0), true, 'out of active');
  assert.equal(isStolen(0, 1, 1, 0), true, 'its counter changed');
  assert.equal(isStolen(0, 1, 0, 0, 1, 0), true, 'in pending while its worker still holds it: it will run twice');
  assert.equal(isStolen(0, 1, 0, 0, 0, 1), true, 'in dead while its worker still holds it');
});

test('stray entries: what the snapshot counted is the figure, 0 on a clean read', () => {
  const { snapshot, moves } = snapshotOf([{ moves: 1, pending: 1, stalled: 1, state: 'pending' }]);
  assert.equal(auditJobs(snapshot, moves).strayEntries, 0);
  const counts = auditJobs({ ...snapshot, strayEntries: 3 }, moves);
  assert.equal(counts.strayEntries, 3);
  assert.equal(isClean(counts), false);
});

/** Job 1 expired and recovered (in pending, counted once); job 2 live: in active, its counter as seeded. */
function recoveredBesideLive(): ReturnType<typeof blankSnapshot> {
  const live = blankSnapshot(1, 0, 1);
  live.inPending[1] = 1;
  live.stalled[1] = 1;
  live.state[1] = STATE_CODES.pending;
  live.inActive[2] = 1;
  live.stalled[2] = 0;
  return live;
}

test('a live job pushed to pending while its lease holds: a stolen lease, though it never left active', () => {
  const live = recoveredBesideLive();
  live.inPending[2] = 1;
  const moves = new Uint32Array(3);
  moves[1] = 1;
  assert.equal(auditJobs(live, moves).stolenLeases, 1);
});

test("under the cross-check, a live job a user's script returns but the server shows untouched is a misreport, not a stolen lease", () => {
  // Job 2 is live and untouched; the script returned its id all the same.
  const live = recoveredBesideLive();
  const moves = new Uint32Array(3);
  moves[1] = 1;
  moves[2] = 1;
  const checked = auditJobs(live, moves, { crossCheck: true });
  assert.equal(checked.stolenLeases, 0);
  assert.equal(checked.misreported, 1);
  // A strategy whose records are its moves: the same record is a stolen lease.
  assert.equal(auditJobs(live, moves).stolenLeases, 1);
  // And a live job the script did move is stolen whatever it returned.
  live.inActive[2] = 0;
  live.inPending[2] = 1;
  assert.equal(auditJobs(live, new Uint32Array(3), { crossCheck: true }).stolenLeases, 1);
});

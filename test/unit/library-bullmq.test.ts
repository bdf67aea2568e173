/**
 * The BullMQ library's pure parts: the audit of BullMQ's keys on hand-made snapshots (each count
 * checked exactly), the tested version range, --max-stalled as BullMQ's maxStalledCount, and how
 * --lib and --mode pick the modes and the library.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditBullmq, blankBullmqSnapshot, bullmqPlaces, isFailing, type BullmqSnapshot } from '../../src/libraries/bullmq/audit.js';
import { bullmqKeys } from '../../src/libraries/bullmq/keys.js';
import { lapsedLockFigures, refusedJobId } from '../../src/libraries/bullmq/lapsed-lock.js';
import { maxStalledCount } from '../../src/libraries/bullmq/run.js';
import { inTestedRange, parseLibraryName, satisfies, versionWarning } from '../../src/libraries/resolve.js';
import { libraryOf } from '../../src/libraries/table.js';
import { libraryAsked, modesWithLibrary } from '../../src/cli/options.js';
import { EmqError } from '../../src/shared/errors.js';

interface Facts {
  wait?: number;
  active?: number;
  failed?: boolean;
  completed?: boolean;
  stc?: number;
  defa?: boolean;
  locked?: boolean;
  removed?: boolean;
  moves?: number;
}

/** A snapshot of jobs 1..n as `facts` describe them, and the callers' moves. */
function snapshotOf(facts: readonly Facts[]): { snapshot: BullmqSnapshot; moves: Uint32Array } {
  const s = blankBullmqSnapshot(facts.length);
  const moves = new Uint32Array(facts.length + 1);
  facts.forEach((f, i) => {
    const id = i + 1;
    s.inWait[id] = f.wait ?? 0;
    s.inActive[id] = f.active ?? 0;
    s.inFailed[id] = f.failed ? 1 : 0;
    s.inCompleted[id] = f.completed ? 1 : 0;
    if (f.stc !== undefined) s.stc[id] = f.stc;
    s.failMarked[id] = f.defa ? 1 : 0;
    s.locked[id] = f.locked ? 1 : 0;
    s.removed[id] = f.removed ? 1 : 0;
    moves[id] = f.moves ?? 0;
  });
  return { snapshot: s, moves };
}

test('a clean BullMQ recovery: each job once in wait, stc 1, one move each: every anomaly 0', () => {
  const { snapshot, moves } = snapshotOf([
    { wait: 1, stc: 1, moves: 1 },
    { wait: 1, stc: 1, moves: 1 },
  ]);
  const counts = auditBullmq(snapshot, moves, 3);
  assert.equal(counts.recoveries, 2);
  for (const name of [
    'doubleRecoveries',
    'duplicatePending',
    'lostIncrements',
    'extraIncrements',
    'overcountedStalls',
    'lostJobs',
    'misplaced',
    'unreclaimed',
  ] as const)
    assert.equal(counts[name], 0, name);
  assert.equal(counts.deadLetteredEarly, 0);
  assert.equal(counts.forgottenStalls, null, 'not measured');
  assert.equal(counts.stolenLeases, null, 'not measured');
});

test('the naive port: a job pushed by three callers is two duplicates, two double recoveries and an over-count of two', () => {
  const { snapshot, moves } = snapshotOf([
    { wait: 3, stc: 3, moves: 3, defa: true },
    { wait: 1, stc: 1, moves: 1 },
  ]);
  const counts = auditBullmq(snapshot, moves, 3);
  assert.equal(counts.recoveries, 4);
  assert.equal(counts.doubleRecoveries, 2);
  assert.equal(counts.jobsRecoveredMoreThanOnce, 1);
  assert.equal(counts.duplicatePending, 2);
  assert.equal(counts.mostPendingEntries, 3);
  assert.equal(counts.overcountedStalls, 1);
  assert.equal(counts.overcountedStallCount, 2);
  assert.equal(counts.lostIncrements, 0, 'HINCRBY is atomic: every move counted');
  assert.equal(counts.deadLetteredEarly, 1, 'marked to fail (defa) after one real stall');
});

test('stc against the callers: a move the counter lacks is a lost increment, a rise no caller made an extra one', () => {
  const { snapshot, moves } = snapshotOf([
    { wait: 1, stc: 1, moves: 2 },
    { wait: 1, stc: 2, moves: 1 },
    { wait: 1, moves: 1 },
  ]);
  const counts = auditBullmq(snapshot, moves, 3);
  assert.equal(counts.lostIncrements, 2);
  assert.equal(counts.extraIncrements, 1);
});

test('jobs in no list are lost, in two misplaced; an unlocked job still in active unreclaimed; a failed one at one stall dead-lettered early', () => {
  const { snapshot, moves } = snapshotOf([
    {},
    { wait: 1, completed: true, stc: 1, moves: 1 },
    { active: 1 },
    { active: 1, locked: true },
    { failed: true, stc: 1, moves: 1 },
  ]);
  const counts = auditBullmq(snapshot, moves, 3);
  assert.equal(counts.lostJobs, 1);
  assert.equal(counts.misplaced, 1);
  assert.equal(counts.unreclaimed, 1, 'the locked job is a live one');
  assert.equal(counts.deadLetteredEarly, 1);
  assert.equal(bullmqPlaces(snapshot, 2), 2);
  assert.equal(isFailing(snapshot, 5), true);
  assert.equal(isFailing(snapshot, 2), false);
});

test('--max-stalled 1: one stall is the limit, so a failing job is no early dead-letter and a waiting one escaped', () => {
  const { snapshot, moves } = snapshotOf([
    { wait: 1, stc: 1, moves: 1, defa: true },
    { wait: 1, stc: 1, moves: 1 },
  ]);
  const counts = auditBullmq(snapshot, moves, 1);
  assert.equal(counts.deadLetteredEarly, 0);
  assert.equal(counts.deadLetterEscapes, 1);
});

test('--max-stalled N is BullMQ maxStalledCount N − 1: both fail a job at the N-th stall', () => {
  assert.equal(maxStalledCount(3), 2);
  assert.equal(maxStalledCount(1), 0);
});

test("BullMQ's keys live under the queue's hash tag, in the library's namespace", () => {
  const keys = bullmqKeys('race-1');
  assert.equal(keys.prefix, 'emq:{race-1}');
  assert.equal(keys.wait, 'emq:{race-1}:bullmq:wait');
  assert.equal(keys.stalledCheck, 'emq:{race-1}:bullmq:stalled-check');
  assert.equal(keys.job(7), 'emq:{race-1}:bullmq:7');
  assert.equal(keys.lock('7'), 'emq:{race-1}:bullmq:7:lock');
});

test('the tested range: from 6.7.0 below 7.0.0, pre-releases outside', () => {
  const range = { from: '6.7.0', below: '7.0.0' };
  assert.equal(inTestedRange('6.7.0', range), true);
  assert.equal(inTestedRange('6.12.3', range), true);
  assert.equal(inTestedRange('6.6.9', range), false);
  assert.equal(inTestedRange('7.0.0', range), false);
  assert.equal(inTestedRange('6.8.0-beta.1', range), false);
  assert.equal(inTestedRange('not a version', range), false);
  assert.equal(versionWarning({ name: 'bullmq', asked: '--lib bullmq', version: '6.7.0', entry: 'x' }), undefined);
  assert.match(
    versionWarning({ name: 'bullmq', asked: '--lib bullmq', version: '5.1.0', entry: 'x' }) ?? '',
    /bullmq 5\.1\.0 is outside the versions emq-race was tested with \(>=6\.7\.0 <7\.0\.0\)/,
  );
});

test("a client's version against the range its library declares: the forms libraries give, as npm reads them; any other form met", () => {
  // Bee-Queue 2's redis, node-resque 9's ioredis, BullMQ 6's ioredis peer.
  assert.equal(satisfies('3.1.2', '^3.1.2'), true);
  assert.equal(satisfies('3.9.0', '^3.1.2'), true);
  assert.equal(satisfies('3.1.1', '^3.1.2'), false);
  assert.equal(satisfies('4.0.0', '^3.1.2'), false);
  assert.equal(satisfies('6.4.0', '^3.1.2'), false);
  assert.equal(satisfies('5.10.1', '^5.10.1'), true);
  assert.equal(satisfies('5.9.2', '^5.10.1'), false);
  assert.equal(satisfies('5.9.2', '>=5.0.0'), true);
  assert.equal(satisfies('4.28.5', '>=5.0.0'), false);
  assert.equal(satisfies('5.10.3', '~5.10.1'), true);
  assert.equal(satisfies('5.11.0', '~5.10.1'), false);
  assert.equal(satisfies('0.2.9', '^0.2.3'), true);
  assert.equal(satisfies('0.3.0', '^0.2.3'), false);
  assert.equal(satisfies('0.0.4', '^0.0.3'), false);
  assert.equal(satisfies('5.2.0', '5.x'), true);
  assert.equal(satisfies('6.0.0', '5'), false);
  assert.equal(satisfies('5.10.1', '5.10.1'), true);
  assert.equal(satisfies('5.10.2', '5.10.1'), false);
  for (const range of ['^4 || ^5', '>=4 <6', 'latest', '*', '']) assert.equal(satisfies('3.0.0', range), true, range);
  assert.equal(satisfies('not a version', '^3.1.2'), true);
});

test('--lib: a known name, or a usage error listing the known ones', () => {
  assert.equal(parseLibraryName('bullmq'), 'bullmq');
  assert.throws(
    () => parseLibraryName('kue'),
    (err: unknown) => err instanceof EmqError && err.exitCode === 2 && /"kue" is not a library emq-race knows; expected one of bullmq/.test(err.message),
  );
});

test('--lib alone runs its three modes; with --mode naming some of them only those; --mode with a library mode names its library', () => {
  assert.deepEqual(modesWithLibrary(['atomic', 'loop'], 'bullmq', false), ['bullmq', 'bullmq-naive', 'bullmq-guarded']);
  assert.deepEqual(modesWithLibrary(['bullmq-naive'], 'bullmq', true), ['bullmq-naive']);
  // --script beside --lib, no --mode: the script mode runs with the library's, not dropped unread.
  assert.deepEqual(modesWithLibrary(['script'], 'bullmq', false), ['bullmq', 'bullmq-naive', 'bullmq-guarded', 'script']);
  assert.deepEqual(modesWithLibrary(['atomic'], 'bullmq', true), ['atomic', 'bullmq', 'bullmq-naive', 'bullmq-guarded']);
  // `asked`: the flag its refusals name, the --mode that named it or --lib.
  assert.deepEqual(libraryAsked({ mode: ['bullmq-guarded'], modeGiven: true }), { name: 'bullmq', from: '.', asked: '--mode bullmq-guarded' });
  assert.deepEqual(libraryAsked({ mode: ['atomic'], lib: 'bullmq', libFrom: '/p', modeGiven: false }), { name: 'bullmq', from: '/p', asked: '--lib bullmq' });
  assert.equal(libraryAsked({ mode: ['atomic'], modeGiven: true }), undefined);
  assert.throws(() => libraryAsked({ mode: ['atomic'], libFrom: '/p', modeGiven: true }), /--lib-from: needs --lib/);
  assert.equal(libraryOf('bullmq-naive'), 'bullmq');
  assert.equal(libraryOf('loop'), undefined);
});

test('a job the application removed: in no list it is not lost; put back in wait (a hash of stc alone) it is misplaced', () => {
  const { snapshot, moves } = snapshotOf([{ wait: 1, stc: 1, moves: 1 }, { removed: true }, { wait: 1, stc: 1, removed: true, moves: 1 }, {}]);
  const counts = auditBullmq(snapshot, moves, 3);
  assert.equal(counts.recoveries, 2);
  assert.equal(counts.misplaced, 1, 'job 3, removed, stands in wait again');
  assert.equal(counts.lostJobs, 1, 'job 4 alone: its hash is there and it stands nowhere');
  assert.equal(counts.duplicatePending, 0);
  assert.equal(counts.lostIncrements, 0);
});

test("lapsed-lock: BullMQ's refusals of a completion whose lock is gone name the job; other errors do not count", () => {
  assert.equal(refusedJobId('Missing lock for job 17. moveToFinished'), '17');
  assert.equal(refusedJobId('Lock mismatch for job 3. Cmd moveToFinished from active'), '3');
  assert.equal(refusedJobId('Connection is closed.'), undefined);
  assert.equal(refusedJobId('Missing key for job 4. moveToFinished'), undefined);
});

test("lapsed-lock: the figures count jobs whose handler ran twice or more, and the workers' refusals by job", () => {
  const ran = new Uint32Array([0, 2, 1, 3, 0]);
  const figures = lapsedLockFigures(4, 5, ran, {
    refused: new Set(['1', '2', '3']),
    accepted: new Set(['4']),
    refusedAgain: new Set(['3']),
    refusal: () => 'Missing lock for job 1. moveToFinished',
  });
  assert.deepEqual(
    { ...figures, sources: undefined },
    {
      lapsedJobs: 4,
      recovered: 5,
      executedTwice: 2,
      lateCompletionsRefused: 3,
      lateCompletionsAccepted: 1,
      secondRunsRefused: 1,
      refusal: 'Missing lock for job 1. moveToFinished',
      sources: undefined,
    },
  );
});

test("double executions: null without live workers, the handlers' runs beyond one per job with them", () => {
  const { snapshot, moves } = snapshotOf([
    { completed: true, stc: 1, moves: 1 },
    { completed: true, stc: 1, moves: 1 },
    { wait: 1, stc: 1, moves: 1 },
  ]);
  snapshot.ran[1] = 2;
  snapshot.ran[2] = 3;
  assert.equal(auditBullmq(snapshot, moves, 3).doubleExecutions, null);
  assert.equal(auditBullmq(snapshot, moves, 3, true).doubleExecutions, 3);
});

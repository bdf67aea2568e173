/**
 * The node-resque library's pure parts: the audit of node-resque's keys on hand-made snapshots
 * (each count checked exactly), its keys in the run's namespace, the job id read from a payload,
 * and the round-trip port against a small in-memory server: naive pushes twice, guarded once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditResque, blankResqueSnapshot, type ResqueSnapshot } from '../../src/libraries/node-resque/audit.js';
import { jobIdOf, resqueKeys } from '../../src/libraries/node-resque/keys.js';
import { portedCleanOldWorkers, type Exec, type Transaction } from '../../src/libraries/node-resque/port.js';
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

/** A tiny in-memory server for the port: strings, sets and lists, each command answered a tick later. */
function memoryServer(): { exec: Exec; multi: Transaction; lists: Map<string, string[]>; strings: Map<string, string>; sets: Map<string, Set<string>> } {
  const strings = new Map<string, string>();
  const sets = new Map<string, Set<string>>();
  const lists = new Map<string, string[]>();
  const apply = (command: string, args: readonly (string | number)[]): unknown => {
    const [key = '', ...rest] = args.map(String);
    switch (command) {
      case 'SMEMBERS':
        return [...(sets.get(key) ?? [])];
      case 'GET':
        return strings.get(key) ?? null;
      case 'SREM':
        return sets.get(key)?.delete(rest[0] ?? '') ? 1 : 0;
      case 'DEL':
        return Number(strings.delete(key));
      case 'INCR': {
        const next = Number(strings.get(key) ?? 0) + 1;
        strings.set(key, String(next));
        return next;
      }
      case 'RPUSH': {
        const list = lists.get(key) ?? [];
        list.push(...rest);
        lists.set(key, list);
        return list.length;
      }
      default:
        throw new Error(`no ${command} here`);
    }
  };
  const exec: Exec = async (command, ...args) => {
    await Promise.resolve();
    return apply(command, args);
  };
  const multi: Transaction = async (commands) => {
    await Promise.resolve();
    return commands.map(([command, ...args]) => apply(command, args));
  };
  return { exec, multi, lists, strings, sets };
}

/** One dead worker holding job 1, as node-resque leaves it. */
function deadWorker(server: ReturnType<typeof memoryServer>, keys: ReturnType<typeof resqueKeys>): void {
  server.sets.set(keys.workers, new Set(['dead-1:emq-race']));
  const payload = { class: 'emq-race', queue: 'emq-race', args: [1] };
  server.strings.set(
    keys.workingOn('dead-1'),
    JSON.stringify({ run_at: new Date(Date.now() - 5000).toString(), queue: 'emq-race', worker: 'dead-1', payload }),
  );
}

test('the port, two callers interleaved command by command: the naive one pushes the job twice, the guarded one once', async () => {
  const keys = resqueKeys('q1');
  for (const guarded of [false, true]) {
    const server = memoryServer();
    deadWorker(server, keys);
    const [a, b] = await Promise.all([0, 1].map(() => portedCleanOldWorkers(server.exec, server.multi, keys, 0, guarded)));
    const entries = server.lists.get(keys.failed) ?? [];
    const pushed = (a?.length ?? 0) + (b?.length ?? 0);
    assert.equal(entries.length, guarded ? 1 : 2, `guarded ${guarded}`);
    assert.equal(pushed, entries.length, 'each push the callers report is one entry in failed');
    assert.deepEqual(
      JSON.parse(entries[0] ?? '{}').backtrace.slice(1),
      ['queue#forceCleanWorker', 'node-resque'],
      "node-resque's own failure, which retryStuckJobs retries",
    );
    assert.equal(server.strings.get(keys.statFailed), guarded ? '1' : '2');
    assert.deepEqual([...(server.sets.get(keys.workers) ?? [])], []);
  }
});

test('the port leaves a worker younger than the age alone', async () => {
  const keys = resqueKeys('q1');
  const server = memoryServer();
  deadWorker(server, keys);
  assert.deepEqual(await portedCleanOldWorkers(server.exec, server.multi, keys, 60_000, false), []);
  assert.equal(server.lists.get(keys.failed), undefined);
  assert.equal(server.sets.get(keys.workers)?.size, 1);
});

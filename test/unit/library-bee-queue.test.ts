/**
 * The Bee-Queue library's pure parts: the audit of Bee-Queue's keys on hand-made snapshots (each
 * count checked exactly, the counter figures null), its keys in the queue's namespace, and the
 * round-trip port against a small in-memory server whose gate always lapses within a check: naive
 * pushes a job twice, guarded once; with the gate held, a second caller is turned away. And the
 * gate's lifetime a run picks, from its jobs and the measured round trip.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditBee, blankBeeSnapshot, type BeeSnapshot } from '../../src/libraries/bee-queue/audit.js';
import { beeKeys } from '../../src/libraries/bee-queue/keys.js';
import { portedCheckStalledJobs, type Exec } from '../../src/libraries/bee-queue/port.js';
import { raceInterval } from '../../src/libraries/bee-queue/run.js';
import { libraryOf } from '../../src/libraries/table.js';

interface Facts {
  waiting?: number;
  active?: number;
  succeeded?: boolean;
  failed?: boolean;
  delayed?: boolean;
  moves?: number;
}

function snapshotOf(facts: readonly Facts[]): { snapshot: BeeSnapshot; moves: Uint32Array } {
  const s = blankBeeSnapshot(facts.length);
  const moves = new Uint32Array(facts.length + 1);
  facts.forEach((f, i) => {
    s.inWaiting[i + 1] = f.waiting ?? 0;
    s.inActive[i + 1] = f.active ?? 0;
    s.inSucceeded[i + 1] = f.succeeded ? 1 : 0;
    s.inFailed[i + 1] = f.failed ? 1 : 0;
    s.inDelayed[i + 1] = f.delayed ? 1 : 0;
    moves[i + 1] = f.moves ?? 0;
  });
  return { snapshot: s, moves };
}

const COUNTER_FIGURES = ['lostIncrements', 'extraIncrements', 'overcountedStalls', 'overcountedStallCount', 'deadLetterEscapes', 'deadLetteredEarly'] as const;

test('a clean recovery: each job once in waiting, one move each: every anomaly measured is 0, the counter figures null', () => {
  const { snapshot, moves } = snapshotOf([
    { waiting: 1, moves: 1 },
    { waiting: 1, moves: 1 },
  ]);
  const counts = auditBee(snapshot, moves);
  assert.equal(counts.recoveries, 2);
  for (const field of ['doubleRecoveries', 'duplicatePending', 'lostJobs', 'misplaced', 'unreclaimed'] as const) assert.equal(counts[field], 0, field);
  for (const field of COUNTER_FIGURES) assert.equal(counts[field], null, `${field}: Bee-Queue keeps no counter`);
  assert.equal(counts.forgottenStalls, null);
  assert.equal(counts.mostPendingEntries, 1);
});

test('a job put back by three callers: two duplicates in waiting, two double recoveries, most entries three', () => {
  const { snapshot, moves } = snapshotOf([
    { waiting: 3, moves: 3 },
    { waiting: 1, moves: 1 },
  ]);
  const counts = auditBee(snapshot, moves);
  assert.equal(counts.duplicatePending, 2);
  assert.equal(counts.doubleRecoveries, 2);
  assert.equal(counts.jobsRecoveredMoreThanOnce, 1);
  assert.equal(counts.mostPendingEntries, 3);
  assert.equal(counts.recoveries, 4);
});

test('a job nowhere is lost; in waiting and active, or twice in active, misplaced; any job left in active unreclaimed', () => {
  const { snapshot, moves } = snapshotOf([
    {},
    { waiting: 1, active: 1, moves: 1 },
    { active: 2 },
    { active: 1 },
    { succeeded: true, failed: true },
    { delayed: true },
  ]);
  const counts = auditBee(snapshot, moves);
  assert.equal(counts.lostJobs, 1);
  assert.equal(counts.misplaced, 3);
  assert.equal(counts.unreclaimed, 3);
});

test("Bee-Queue's keys live under the queue's hash tag, in the library's namespace", () => {
  const keys = beeKeys('q1');
  assert.equal(keys.prefix, 'emq:{q1}');
  assert.equal(keys.base, 'emq:{q1}:bee-queue:');
  // Bee-Queue makes its keys as PREFIX:NAME:key.
  assert.equal(`${keys.prefix}:${keys.name}:waiting`, keys.waiting);
  assert.equal(keys.stallBlock, 'emq:{q1}:bee-queue:stallBlock');
  assert.equal(keys.stalling, 'emq:{q1}:bee-queue:stalling');
  assert.equal(keys.jobs, 'emq:{q1}:bee-queue:jobs');
});

test("the callers' gate lives a quarter of a port check's round trips at the measured round trip, from 1 ms to 20 ms", () => {
  // 200 LREMs at 0.05 ms take 10 ms: the gate lapses after 2 ms (2.5, to the whole ms below).
  assert.equal(raceInterval(200, 0.05), 2);
  assert.equal(raceInterval(1000, 0.04), 10);
  // A check too short for a whole ms in four: the gate still lives 1 ms, the least PX sets.
  assert.equal(raceInterval(40, 0.02), 1);
  assert.equal(raceInterval(200, 0), 1);
  // A slow link (the latency proxy): 100 round trips of 2 ms would give 50; the gate stays at 20 ms.
  assert.equal(raceInterval(100, 2), 20);
});

test('the Bee-Queue modes belong to bee-queue', () => {
  for (const mode of ['bee-queue', 'bee-queue-naive', 'bee-queue-guarded']) assert.equal(libraryOf(mode), 'bee-queue');
});

/** A tiny in-memory server for the port: strings, sets and lists, each command answered a tick later; `lapse` drops the gate after every command. */
function memoryServer(lapse: boolean): { exec: Exec; lists: Map<string, string[]>; sets: Map<string, Set<string>> } {
  const strings = new Map<string, string>();
  const sets = new Map<string, Set<string>>();
  const lists = new Map<string, string[]>();
  const keys = beeKeys('q1');
  const apply = (command: string, args: readonly (string | number)[]): unknown => {
    const [key = '', ...rest] = args.map(String);
    switch (command) {
      case 'SET':
        if (strings.has(key)) return null;
        strings.set(key, rest[0] ?? '');
        return 'OK';
      case 'SMEMBERS':
        return [...(sets.get(key) ?? [])];
      case 'SADD': {
        const set = sets.get(key) ?? new Set<string>();
        for (const member of rest) set.add(member);
        sets.set(key, set);
        return set.size;
      }
      case 'DEL':
        return Number(sets.delete(key) || strings.delete(key));
      case 'LREM': {
        const list = lists.get(key) ?? [];
        const kept = list.filter((item) => item !== rest[1]);
        lists.set(key, kept);
        return list.length - kept.length;
      }
      case 'LPUSH': {
        const list = lists.get(key) ?? [];
        list.unshift(...rest.reverse());
        lists.set(key, list);
        return list.length;
      }
      case 'LRANGE':
        return [...(lists.get(key) ?? [])];
      default:
        throw new Error(`no ${command} here`);
    }
  };
  const exec: Exec = async (command, ...args) => {
    await Promise.resolve();
    const reply = apply(command, args);
    if (lapse) strings.delete(keys.stallBlock);
    return reply;
  };
  return { exec, lists, sets };
}

/** Job 1 held by a dead worker and marked by the last check, as Bee-Queue leaves it. */
function stalledJob(server: ReturnType<typeof memoryServer>): void {
  const keys = beeKeys('q1');
  server.lists.set(keys.active, ['1']);
  server.sets.set(keys.stalling, new Set(['1']));
}

test('the port, two callers let in at once (the gate lapsed within a check): the naive one puts the job back twice, the guarded one once', async () => {
  const keys = beeKeys('q1');
  for (const guarded of [false, true]) {
    const server = memoryServer(true);
    stalledJob(server);
    const [a, b] = await Promise.all([0, 1].map(() => portedCheckStalledJobs(server.exec, keys, 20, guarded)));
    assert.deepEqual([a?.passed, b?.passed], [true, true]);
    const waiting = server.lists.get(keys.waiting) ?? [];
    assert.deepEqual(waiting, guarded ? ['1'] : ['1', '1'], `guarded ${guarded}`);
    assert.equal((a?.moved.length ?? 0) + (b?.moved.length ?? 0), waiting.length, 'each move the callers report is one entry in waiting');
    assert.deepEqual(server.lists.get(keys.active), []);
  }
});

test('the port with the gate held: the second caller is turned away and moves nothing', async () => {
  const keys = beeKeys('q1');
  const server = memoryServer(false);
  stalledJob(server);
  const [a, b] = await Promise.all([0, 1].map(() => portedCheckStalledJobs(server.exec, keys, 20, false)));
  assert.deepEqual([a?.passed, b?.passed], [true, false]);
  assert.deepEqual(b?.moved, []);
  assert.deepEqual(server.lists.get(keys.waiting), ['1']);
});

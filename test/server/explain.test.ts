/**
 * `emq-race explain` on real servers: each replay's readout, the replies it shows set against the
 * server's state, the dead-letter branch, the counter race both ways, and the command line.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { replayAtomic } from '../../src/explain/atomic-replay.js';
import type { CounterForm } from '../../src/explain/counter-forms.js';
import { raceCounter, type CounterRace } from '../../src/explain/counter-race.js';
import { replayLoop } from '../../src/explain/loop-replay.js';
import { noteFor, renderReplay } from '../../src/explain/render.js';
import type { Replay } from '../../src/explain/replay.js';
import { DEFAULT_SCHEDULE, SERIAL_SCHEDULE, parseSchedule } from '../../src/explain/schedule.js';
import { onStage, type Stage } from '../../src/explain/stage.js';
import type { WireStep } from '../../src/explain/wire.js';
import { auditJob, outcomeClass } from '../../src/explore/outcome.js';
import type { Interrupts } from '../../src/shared/interrupt.js';
import type { Session } from '../../src/server/session.js';
import { runCli } from '../helpers/cli.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { allKeys } from '../helpers/keyspace.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';

let counter = 0;
const queueName = (label: string): string => `explain-t${process.pid}-${label}-${counter++}`;

const stepOf = (replay: { steps: readonly WireStep[] }, sweep: 'A' | 'B', step: string): WireStep => {
  const found = replay.steps.find((s) => s.sweep === sweep && s.step === step);
  assert.ok(found, `${sweep}:${step} is in the timeline`);
  return found;
};

forEachServer('explain', (handle) => {
  let session: Session;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    interrupts = watching;
  });

  /** Runs a replay and, before cleanup, hands its result and the live stage to `check`. */
  function onJob<T>(
    label: string,
    stalledBefore: number,
    replay: (stage: Stage, queue: string) => Promise<T>,
    check: (result: T, stage: Stage) => Promise<void>,
  ): Promise<T> {
    const queue = queueName(label);
    return onStage(session, { queue, stalledBefore, keep: false }, interrupts, async (stage) => {
      const result = await replay(stage, queue);
      await check(result, stage);
      return result;
    });
  }

  const loop =
    (schedule: string, maxStalled = 3) =>
    (stage: Stage, queue: string): Promise<Replay> =>
      replayLoop(stage, { queue, schedule: parseSchedule(schedule), batch: 100, maxStalled });
  const atomic =
    (maxStalled = 3) =>
    (stage: Stage, queue: string): Promise<Replay> =>
      replayAtomic(stage, { queue, batch: 100, maxStalled });
  const counterRace =
    (form: CounterForm) =>
    (stage: Stage, queue: string): Promise<CounterRace> =>
      raceCounter(stage, queue, form);

  test('loop, default schedule: recovered twice, twice in pending, one increment lost', async () => {
    const replay = await onJob('loop', 0, loop(DEFAULT_SCHEDULE), async (r, stage) => {
      const { admin, keys } = stage;
      // The replies shown are the server's: set them against what it holds now.
      assert.equal(stepOf(r, 'B', 'move').replies[1], await admin.llen(keys.pending), "B's RPUSH answered the list's length");
      assert.deepEqual(stepOf(r, 'A', 'move').replies, [1, 1]);
      assert.deepEqual(stepOf(r, 'B', 'move').replies, [0, 2], "B's ZREM was a no-op, its RPUSH made two");
      assert.equal(await admin.zscore(keys.active, '1'), null, 'ZREM took the job out of active');
      assert.equal(await admin.hget(keys.job('1'), 'stalled'), stepOf(r, 'B', 'write').commands[0]?.[3]);
      const probe = stepOf(r, 'A', 'probe');
      assert.equal(typeof probe.replies[0], 'string');
      assert.ok(Number(probe.replies[0]) <= Number(stepOf(r, 'A', 'detect').commands[0]?.[3]), "the probed lease had expired by detect's now");
    });
    assert.deepEqual(replay.readout, {
      recoverCount: 2,
      pendingEntries: 2,
      stalled: 1,
      expectedStalled: 2,
      lostIncrements: 1,
      extraIncrements: 0,
      realStalled: 1,
      overcountedStalls: 0,
      endedIn: ['pending'],
    });
    assert.deepEqual(
      replay.steps.map((s) => `${s.sweep}:${s.step}`),
      DEFAULT_SCHEDULE.split(','),
      "steps ran in the schedule's order",
    );
    assert.deepEqual(stepOf(replay, 'A', 'detect').replies, [['1']]);
    assert.deepEqual(stepOf(replay, 'B', 'detect').replies, [['1']]);
    assert.deepEqual(stepOf(replay, 'A', 'read').replies, ['0']);
    assert.deepEqual(stepOf(replay, 'B', 'read').replies, ['0'], 'B read the counter before A wrote it');
    assert.deepEqual(
      replay.steps.map((s) => s.commands.map((c) => c[0]).join(' ')).filter((c) => c !== '' && !c.startsWith('ZRANGEBYSCORE')),
      ['ZSCORE', 'ZSCORE', 'ZREM RPUSH', 'ZREM RPUSH', 'HGET', 'HGET', 'HSET', 'HSET'],
      "the page's order: probe, ZREM and push, then read and write the counter",
    );
  });

  test('loop, serial schedule: no anomaly, B detects nothing', async () => {
    const replay = await onJob('serial', 0, loop(SERIAL_SCHEDULE), async (r, stage) => {
      assert.equal(await stage.admin.llen(stage.keys.pending), stepOf(r, 'A', 'move').replies[1]);
    });
    assert.deepEqual(replay.readout, {
      recoverCount: 1,
      pendingEntries: 1,
      stalled: 1,
      expectedStalled: 1,
      lostIncrements: 0,
      extraIncrements: 0,
      realStalled: 1,
      overcountedStalls: 0,
      endedIn: ['pending'],
    });
    assert.deepEqual(stepOf(replay, 'B', 'detect').replies, [[]]);
    for (const step of ['probe', 'read', 'move', 'write']) assert.deepEqual(stepOf(replay, 'B', step).commands, [], `B sends nothing at ${step}`);
  });

  test('loop: a probe after the other sweep moved the job drops it', async () => {
    const schedule = 'A:detect,B:detect,A:probe,A:move,B:probe,A:read,A:write,B:move,B:read,B:write';
    const replay = await onJob('probe', 0, loop(schedule), async () => {});
    assert.deepEqual(stepOf(replay, 'B', 'probe').replies, [null]);
    assert.deepEqual(replay.readout, {
      recoverCount: 1,
      pendingEntries: 1,
      stalled: 1,
      expectedStalled: 1,
      lostIncrements: 0,
      extraIncrements: 0,
      realStalled: 1,
      overcountedStalls: 0,
      endedIn: ['pending'],
    });
  });

  test('loop at stalled-before max-stalled − 1: both sweeps push, count, then dead-letter the job; one increment lost', async () => {
    const replay = await onJob('dead', 2, loop(DEFAULT_SCHEDULE, 3), async (r, stage) => {
      assert.equal(await stage.admin.zscore(stage.keys.dead, '1'), '0');
      assert.equal(await stage.admin.hget(stage.keys.job('1'), 'state'), 'dead');
      assert.equal(await stage.admin.llen(stage.keys.pending), 0, 'each dead-letter took one of the two entries out');
      assert.deepEqual(stepOf(r, 'A', 'dead-letter').replies, [1, 1, 0]);
      assert.deepEqual(stepOf(r, 'B', 'dead-letter').replies, [1, 0, 0], 'ZADD of a member already in dead adds nothing');
    });
    assert.deepEqual(
      stepOf(replay, 'A', 'move').commands.map((c) => c[0]),
      ['ZREM', 'RPUSH'],
      'the page pushes to pending first',
    );
    assert.deepEqual(
      stepOf(replay, 'A', 'dead-letter').commands.map((c) => c[0]),
      ['LREM', 'ZADD', 'HSET'],
    );
    assert.deepEqual(
      replay.schedule,
      [...DEFAULT_SCHEDULE.split(',').slice(0, 9), 'A:dead-letter', 'B:write', 'B:dead-letter'],
      'each dead-letter turn follows its write',
    );
    assert.deepEqual(replay.readout, {
      recoverCount: 2,
      pendingEntries: 0,
      stalled: 3,
      expectedStalled: 4,
      lostIncrements: 1,
      extraIncrements: 0,
      realStalled: 3,
      overcountedStalls: 0,
      endedIn: ['dead'],
    });
  });

  test('loop: a dead-letter step named in the schedule takes its turn there', async () => {
    const schedule = `${DEFAULT_SCHEDULE},B:dead-letter,A:dead-letter`;
    const replay = await onJob('dead-named', 2, loop(schedule, 3), async () => {});
    assert.deepEqual(replay.schedule, schedule.split(','));
    assert.deepEqual(stepOf(replay, 'B', 'dead-letter').replies, [1, 1, 0], 'B dead-lettered first');
  });

  test('atomic: one script moves the job, the other finds nothing; order told by the replies', async () => {
    const replay = await onJob('atomic', 0, atomic(), async (r, stage) => {
      assert.equal(await stage.admin.llen(stage.keys.pending), 1);
      assert.equal(await stage.admin.hget(stage.keys.job('1'), 'stalled'), '1');
      assert.equal(r.steps.length, 2);
    });
    assert.deepEqual(replay.readout, {
      recoverCount: 1,
      pendingEntries: 1,
      stalled: 1,
      expectedStalled: 1,
      lostIncrements: 0,
      extraIncrements: 0,
      realStalled: 1,
      overcountedStalls: 0,
      endedIn: ['pending'],
    });
    const [first, second] = replay.steps;
    assert.deepEqual(first?.replies, [['1']], 'the call shown first moved the job');
    assert.deepEqual(second?.replies, [[]], 'the call shown second found nothing');
    assert.notEqual(first?.sweep, second?.sweep);
    assert.deepEqual(replay.schedule, [`${first?.sweep}:sweep`, `${second?.sweep}:sweep`]);
    assert.equal(first?.commands[0]?.[0], 'EVALSHA');
    assert.match(renderReplay(replay, 200), /= moved job 1 to pending, counted its stall/);
  });

  test('atomic at stalled-before max-stalled − 1: dead-lettered once, every stall counted', async () => {
    const replay = await onJob('atomic-dead', 2, atomic(3), async () => {});
    assert.deepEqual(replay.readout, {
      recoverCount: 1,
      pendingEntries: 0,
      stalled: 3,
      expectedStalled: 3,
      lostIncrements: 0,
      extraIncrements: 0,
      realStalled: 3,
      overcountedStalls: 0,
      endedIn: ['dead'],
    });
    // The script's reply names the job it moved, not where to: the server's read-back does.
    assert.match(renderReplay(replay, 200), /= moved job 1 to dead, counted its stall/);
  });

  test('counter, client-side: read 0, read 0, write 1, write 1 reaches 1', async () => {
    const race = await onJob('client', 0, counterRace('client'), async (r, stage) => {
      assert.equal(await stage.admin.hget(stage.keys.job('1'), 'stalled'), String(r.after));
    });
    assert.deepEqual(
      race.steps.map((s) => `${s.sweep}:${s.step}`),
      ['A:read', 'B:read', 'A:write', 'B:write'],
    );
    assert.deepEqual(
      race.steps.map((s) => s.replies[0]),
      ['0', '0', 0, 0],
    );
    assert.deepEqual(race.readout, { expected: 2, reached: 1, lost: 1, extra: 0 });
  });

  test('counter, in-script: two HINCRBY reach 2', async () => {
    const race = await onJob('in-script', 0, counterRace('in-script'), async (r, stage) => {
      assert.equal(await stage.admin.hget(stage.keys.job('1'), 'stalled'), String(r.steps[1]?.replies[0]));
    });
    assert.deepEqual(
      race.steps.map((s) => s.replies[0]),
      [1, 2],
    );
    assert.deepEqual(race.readout, { expected: 2, reached: 2, lost: 0, extra: 0 });
  });

  test('the CLI, --json: loop then atomic, each with its readout', async () => {
    const result = await runCli(['explain', '--url', handle.url, '--json']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as {
      server: { kind: string };
      replays: { mode: string; readout: Record<string, unknown>; readoutSources: Record<string, string> }[];
    };
    assert.equal(report.replays.length, 2);
    assert.deepEqual(
      report.replays.map((r) => r.mode),
      ['loop', 'atomic'],
    );
    assert.deepEqual(report.replays[0]?.readout, {
      recoverCount: 2,
      pendingEntries: 2,
      stalled: 1,
      expectedStalled: 2,
      lostIncrements: 1,
      extraIncrements: 0,
      realStalled: 1,
      overcountedStalls: 0,
      endedIn: ['pending'],
    });
    assert.deepEqual(report.replays[1]?.readout, {
      recoverCount: 1,
      pendingEntries: 1,
      stalled: 1,
      expectedStalled: 1,
      lostIncrements: 0,
      extraIncrements: 0,
      realStalled: 1,
      overcountedStalls: 0,
      endedIn: ['pending'],
    });
    assert.equal(report.replays[0]?.readoutSources.stalled, 'server');
    assert.equal(report.replays[0]?.readoutSources.lostIncrements, 'client', 'a computed figure is labelled as computed');
  });

  test('the CLI, --counter client --json', async () => {
    const result = await runCli(['explain', '--counter', 'client', '--json'], { REDIS_URL: handle.url });
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { counter: string; steps: unknown[]; readout: unknown };
    assert.equal(report.counter, 'client');
    assert.equal(report.steps.length, 4);
    assert.deepEqual(report.readout, { expected: 2, reached: 1, lost: 1, extra: 0 });
  });

  test("the CLI, --counter client: the seeded value is labelled as the tool's, the value after as read from the server", async () => {
    const result = await runCli(['explain', '--counter', 'client', '--url', handle.url]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^ {2}before +0 +client +the value the field was seeded with$/m);
    assert.match(result.stdout, /^ {2}after +1 +server +the field read back after the steps$/m);
    assert.doesNotMatch(result.stdout, /→ 1 +server/, 'no row labels the seeded value as read');
  });

  test('the CLI timeline names both sweeps and the readout', async () => {
    const result = await runCli(['explain', '--mode', 'loop', '--url', handle.url]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /sweep A +│ sweep B/);
    assert.match(result.stdout, /RPUSH pending 1 {2}← \(integer\) 2/);
    assert.match(result.stdout, /recover count +2 +client/);
    assert.match(result.stdout, /stalled +1 +server/);
  });

  test('the main command still takes its own flags', async () => {
    const result = await runCli(['--url', handle.url, '--mode', 'atomic', '--jobs', '20', '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { runs: unknown[] }).runs.length, 1);
  });

  /** The audit's counts for the replayed job, from the server's own state: what explore judges it by. */
  const auditedJob = async (stage: Stage, recoverCount: number, maxStalled: number) => {
    const { admin, keys } = stage;
    const stalled = await admin.hget(keys.job('1'), 'stalled');
    const facts = {
      pendingEntries: (await admin.lrange(keys.pending, 0, -1)).filter((id) => id === '1').length,
      inActive: (await admin.zscore(keys.active, '1')) !== null,
      activeExpired: false,
      inDead: (await admin.zscore(keys.dead, '1')) !== null,
      stalled: stalled === null ? null : Number(stalled),
      state: await admin.hget(keys.job('1'), 'state'),
    };
    const counts = auditJob(facts, recoverCount, stage.stalledBefore, maxStalled);
    return { counts, outcome: outcomeClass(counts) };
  };

  // One expired lease is one real stall: two sweeps that each raise the counter count it twice,
  // though every recovery shows in the counter (no increment lost).
  const OVERCOUNT = 'A:detect,A:probe,B:detect,B:probe,B:move,B:read,B:write,A:move,A:read,A:write';
  const OVERCOUNT_DEAD = 'B:detect,A:detect,B:probe,A:probe,A:move,A:read,A:write,A:dead-letter,B:move,B:read,B:write,B:dead-letter';

  test("loop: a stall both sweeps count is over-counted, judged against the job's one real stall as the audit does", async () => {
    let audited: Awaited<ReturnType<typeof auditedJob>> | undefined;
    const replay = await onJob('overcount', 0, loop(OVERCOUNT), async (r, stage) => {
      audited = await auditedJob(stage, r.readout.recoverCount, 3);
    });
    assert.deepEqual(replay.readout, {
      recoverCount: 2,
      pendingEntries: 2,
      stalled: 2,
      expectedStalled: 2,
      lostIncrements: 0,
      extraIncrements: 0,
      realStalled: 1,
      overcountedStalls: 1,
      endedIn: ['pending'],
    });
    assert.equal(audited?.outcome, 'duplicateAndOverCount', "explore's class for the same job");
    assert.equal(audited?.counts.overcountedStallCount, replay.readout.overcountedStalls, "the audit's over-count");
    assert.equal(audited?.counts.lostIncrements, replay.readout.lostIncrements);
  });

  test('loop at stalled-before max-stalled − 1: both sweeps count the one stall and dead-letter the job; over-counted, none lost', async () => {
    let audited: Awaited<ReturnType<typeof auditedJob>> | undefined;
    const replay = await onJob('overcount-dead', 2, loop(OVERCOUNT_DEAD, 3), async (r, stage) => {
      audited = await auditedJob(stage, r.readout.recoverCount, 3);
    });
    assert.deepEqual(replay.readout, {
      recoverCount: 2,
      pendingEntries: 0,
      stalled: 4,
      expectedStalled: 4,
      lostIncrements: 0,
      extraIncrements: 0,
      realStalled: 3,
      overcountedStalls: 1,
      endedIn: ['dead'],
    });
    assert.equal(audited?.outcome, 'duplicateAndOverCount');
    assert.equal(audited?.counts.overcountedStallCount, 1);
  });

  test('the CLI names the over-count in the readout, the anomaly line and the JSON', async () => {
    const text = await runCli(['explain', '--mode', 'loop', '--schedule', OVERCOUNT, '--url', handle.url]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^ {2}stalled +2 +server /m);
    assert.match(text.stdout, /^ {2}real stalled +1 +client +0 before, plus its one real stall$/m);
    assert.match(text.stdout, /^ {2}lost increments +0 +client /m);
    assert.match(text.stdout, /^ {2}over-counted +1 +client +stalls counted beyond its one real stall$/m);
    const verdict = text.stdout.slice(text.stdout.indexOf('\nanomaly: ') + 1).replace(/\n +/g, ' ');
    assert.match(verdict, /^anomaly: job 1 was recovered 2 times; .*its one stall was counted 2 times \(1 over-counted stall\)\.$/m);

    const json = await runCli(['explain', '--mode', 'loop', '--stalled-before', '2', '--schedule', OVERCOUNT_DEAD, '--url', handle.url, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { replays: { readout: Record<string, unknown>; readoutSources: Record<string, string> }[] };
    assertMatchesSchema(report, 'explain --json with an over-count');
    const [replay] = report.replays;
    assert.equal(replay?.readout.stalled, 4);
    assert.equal(replay?.readout.realStalled, 3);
    assert.equal(replay?.readout.overcountedStalls, 1);
    assert.equal(replay?.readoutSources.overcountedStalls, 'client');
    assert.equal(replay?.readoutSources.realStalled, 'client');
  });

  test('the verdict names a job dead-lettered early: in dead below max-stalled, its counter ahead of its stalls', async () => {
    // Seeded one stall short of its second-to-last: the one stall counted twice reaches max-stalled 3.
    const schedule = 'A:detect,B:detect,A:probe,B:probe,A:move,B:move,A:read,A:write,B:read,B:write';
    const early = await runCli(['explain', '--mode', 'loop', '--stalled-before', '1', '--max-stalled', '3', '--schedule', schedule, '--url', handle.url]);
    assert.equal(early.code, 0, early.stderr);
    const verdict = early.stdout.slice(early.stdout.indexOf('\nanomaly: ') + 1).replace(/\n +/g, ' ');
    assert.match(verdict, /; it was dead-lettered early \(in dead after 2 real stalls, below max-stalled 3\)\.$/m);
    // At its limit the same order dead-letters the job as it should: no such words.
    const due = await runCli(['explain', '--mode', 'loop', '--stalled-before', '2', '--max-stalled', '3', '--schedule', schedule, '--url', handle.url]);
    assert.equal(due.code, 0, due.stderr);
    assert.doesNotMatch(due.stdout, /dead-lettered early/);
  });

  test('the schedule line breaks only after a comma: no step split, the lines joined are the schedule', async () => {
    // max-stalled 1: both writes reach it, so both dead-letter steps show and the schedule runs long.
    const expected = [...DEFAULT_SCHEDULE.split(',').slice(0, 9), 'A:dead-letter', 'B:write', 'B:dead-letter'].join(',');
    for (const columns of [80, 40]) {
      const result = await runCli(['explain', '--mode', 'loop', '--max-stalled', '1', '--url', handle.url], { COLUMNS: String(columns) });
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.split('\n');
      const start = lines.indexOf('schedule:');
      assert.ok(start > 0, result.stdout);
      const body = lines.slice(start + 1, lines.indexOf('', start));
      assert.ok(body.length > 1, `at ${columns} columns the schedule takes more than one line`);
      for (const line of body) assert.ok(line.length <= columns, `${JSON.stringify(line)} fits ${columns} columns`);
      body.slice(0, -1).forEach((line) => assert.match(line, /,$/, 'a line breaks after a comma'));
      assert.equal(body.map((line) => line.trim()).join(''), expected);
    }
  });

  test('a named dead-letter step below max-stalled says so, not that its sweep has no job', async () => {
    const schedule = 'A:detect,B:detect,A:probe,B:probe,A:move,B:move,A:read,B:read,A:write,A:dead-letter,B:write,B:dead-letter';
    const replay = await onJob('dead-idle', 0, loop(schedule, 3), async () => {});
    assert.deepEqual(replay.schedule, schedule.split(','));
    const context = { steps: replay.steps, maxStalled: 3 };
    for (const sweep of ['A', 'B'] as const) {
      const step = stepOf(replay, sweep, 'dead-letter');
      assert.deepEqual(step.commands, [], `${sweep} sends nothing at its dead letter`);
      assert.equal(noteFor(step, '1', context), 'nothing to send: stalled 1 is below max-stalled 3, no dead letter due');
    }
    // Without the replay's other steps (as the HTML diagram calls it), only what is true either way.
    assert.equal(noteFor(stepOf(replay, 'A', 'dead-letter'), '1'), 'nothing to send: no dead letter due');
    const text = renderReplay(replay, 80);
    assert.doesNotMatch(text, /has no job/, text);
    assert.equal(text.match(/below max-stalled 3, no dead/g)?.length, 2, text);

    // A sweep that never saw the job still says so.
    const serial = await onJob('serial-idle', 0, loop(`${SERIAL_SCHEDULE},B:dead-letter`), async () => {});
    const idle = { steps: serial.steps, maxStalled: 3 };
    assert.equal(noteFor(stepOf(serial, 'B', 'probe'), '1', idle), 'nothing to send: this sweep has no job');
    assert.equal(noteFor(stepOf(serial, 'B', 'dead-letter'), '1', idle), 'nothing to send: this sweep has no job');
  });

  test('nothing of a replay is left on the server afterwards', async () => {
    assert.deepEqual(await allKeys(session.admin), []);
  });
});

describe('explain: usage errors exit 2 with one line, before any server is touched', () => {
  const bad: [string, string[], RegExp][] = [
    ['unknown sweep', ['--schedule', 'C:detect'], /--schedule: .*the sweeps are A and B/],
    ['unknown step', ['--schedule', 'A:detect,A:jump'], /--schedule: .*names step "jump"/],
    ['steps out of order', ['--schedule', 'A:probe,A:detect'], /--schedule: A:probe comes before A:detect/],
    ['a repeated step', ['--schedule', 'A:detect,B:detect,A:detect'], /--schedule: A:detect appears twice/],
    ['a missing step', ['--schedule', 'A:detect,A:probe,A:move,A:read,A:write,B:detect,B:probe,B:move,B:read'], /--schedule: B:write is missing/],
    ['--schedule without a loop', ['--mode', 'atomic', '--schedule', SERIAL_SCHEDULE], /--schedule: .*runs no loop/],
    ['--counter with --mode', ['--counter', 'client', '--mode', 'loop'], /--counter: runs only the counter race/],
    // The flag that may not be given at all is named before what is wrong inside it.
    ['--counter with a partial --schedule', ['--counter', 'client', '--schedule', 'A:detect'], /--counter: runs only the counter race/],
    ['a partial --schedule without a loop', ['--mode', 'atomic', '--schedule', 'A:detect'], /--schedule: .*runs no loop/],
    ['an unknown counter', ['--counter', 'both'], /--counter: "both" is not/],
    ['stalled-before at max-stalled', ['--stalled-before', '3'], /--stalled-before: 3 must be below --max-stalled \(3\)/],
    // Only the modes it has a replay for; the others would run the atomic replay under their name.
    ['a mode it cannot replay', ['--mode', 'watch'], /--mode: "watch" is a mode explain cannot replay; explain replays loop, atomic, or both/],
    ['a mode set beyond both', ['--mode', 'all'], /--mode: "all" is a mode explain cannot replay; explain replays loop, atomic, or both/],
    ['one unreplayable mode in a list', ['--mode', 'loop,function'], /--mode: "function" is a mode explain cannot replay/],
    ['not a mode at all', ['--mode', 'fast'], /--mode: "fast" is not a mode; explain replays loop, atomic, or both/],
  ];
  for (const [what, args, message] of bad) {
    test(what, async () => {
      // An unreachable URL: a usage error must come first, so nothing connects.
      const result = await runCli(['explain', ...args, '--url', 'redis://127.0.0.1:1']);
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, '');
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0] ?? '', /^emq-race: /);
      assert.match(lines[0] ?? '', message);
    });
  }
});

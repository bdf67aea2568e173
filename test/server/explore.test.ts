/**
 * `emq-race explore` on real servers: every order of two sweeps' round trips on one job, run on the
 * server; the loop duplicates and loses increments, the other modes stay clean in every order, each
 * execution ends exactly as the strategy's model predicts, and each witness replays through explain
 * to its outcome. Nothing is left on the server, and a bad mode writes nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { replayLoop } from '../../src/explain/loop-replay.js';
import { parseSchedule } from '../../src/explain/schedule.js';
import { onStage, onStages } from '../../src/explain/stage.js';
import { exploreMode, type Exploration } from '../../src/explore/explore.js';
import { modelRun, plannedExploration } from '../../src/explore/model.js';
import { explorationJson, renderExploration } from '../../src/explore/render.js';
import { auditJob, outcomeClass } from '../../src/explore/outcome.js';
import { allSchedules, binomial, boundedSchedules, search } from '../../src/explore/search.js';
import { readFacts, runTurned } from '../../src/explore/turned-run.js';
import type { Interrupts } from '../../src/shared/interrupt.js';
import type { Mode } from '../../src/shared/model.js';
import type { Session } from '../../src/server/session.js';
import { runCli } from '../helpers/cli.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { allKeys } from '../helpers/keyspace.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';
import { holdFirst } from '../helpers/held-call.js';
import { closeSession, openSession } from '../../src/server/session.js';
import { parseOwnerValue } from '../../src/queue/owner-marker.js';
import { sweepFunctionNames } from '../../src/lua/function-source.js';

interface ExploreJson {
  complete: boolean;
  modes: {
    mode: string;
    complete: boolean;
    schedules: number;
    executions: number;
    turns: { A: number; B: number; C?: number };
    outcomes: Record<string, number>;
    witnesses: { outcome: string; switches: number; schedule: string; command: string | null }[];
    modelAgrees: boolean;
  }[];
}

const JOB = { stalledBefore: 0, maxStalled: 3 };
let counter = 0;

type Execution = Exploration['executions'][number];

/** An execution's commands in the order the server ran them, `A:detect,B:detect,…`. */
const executionOrder = (execution: Execution): string => execution.trace.map((t) => `${t.sweep}:${t.label}`).join();

/** The execution on the server is the model's run of the same schedule: its commands, the job it leaves, its moves. */
function assertAsModelled(mode: Mode, execution: Execution, sweeps?: number): ReturnType<typeof modelRun> {
  const model = modelRun(
    mode,
    JOB,
    execution.trace.map((t) => t.sweep),
    sweeps,
  );
  const order = executionOrder(execution);
  assert.equal(model.trace.map((t) => `${t.sweep}:${t.label}`).join(), order, `${mode}: the commands the model sends`);
  assert.deepEqual(model.facts, execution.facts, `${mode} ${order}: the job as the model predicts it`);
  assert.equal(model.moves, execution.moves, `${mode} ${order}: the moves the sweeps recorded`);
  return model;
}

// What the model says is the same for every server: worked out once for the file, on first use.
/**
 * The loop's nine turns a sweep with the dead letter in the race make some twenty thousand
 * executions: the model lists them (it is pure), and every 400th runs on the server, from the
 * first to the last.
 */
async function sampleOfDeadLetter() {
  const { runs } = await search(async (prefix) => ({ trace: modelRun('loop', { stalledBefore: 2, maxStalled: 3 }, prefix).trace, result: null }));
  return runs.filter((_, i) => i % 400 === 0 || i === runs.length - 1);
}
let sample: ReturnType<typeof sampleOfDeadLetter> | undefined;
const deadLetterSample = (): ReturnType<typeof sampleOfDeadLetter> => {
  sample ??= sampleOfDeadLetter();
  return sample;
};
const planned = new Map<string, ReturnType<typeof plannedExploration>>();
/** The model's count of executions and schedules for three sweeps within `maxSwitches`, once per mode and bound. */
const plannedOnce = (mode: Mode, maxSwitches: number): ReturnType<typeof plannedExploration> => {
  const key = `${mode}/${maxSwitches}`;
  let made = planned.get(key);
  if (!made) {
    made = plannedExploration(mode, JOB, 3, maxSwitches);
    planned.set(key, made);
  }
  return made;
};

forEachServer('explore', (handle) => {
  let session: Session;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    interrupts = watching;
  });

  const explored = new Map<Mode, Promise<Exploration>>();
  /** Each mode explored once per server, in-process, and shared by the tests below. */
  const explore = (mode: Mode): Promise<Exploration> => {
    let made = explored.get(mode);
    if (!made) {
      made = exploreMode(session, interrupts, { mode, queue: `explore-t${process.pid}-${counter++}`, batch: 100, ...JOB, defaults: JOB });
      explored.set(mode, made);
    }
    return made;
  };

  test('explore --json: the loop duplicates and loses increments, the others are clean in every order', async () => {
    const admin = new Redis(handle.url);
    try {
      const before = await allKeys(admin);
      // The command line end to end on the two one-call modes, a few runs each. The loop, claim and
      // watch take hundreds of runs: theirs is the JSON the command prints (explorationJson) of the
      // explorations the tests below share, so that each is explored once per server, not twice.
      const result = await runCli(['explore', '--url', handle.url, '--mode', 'function,atomic', '--json']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '');
      const json = JSON.parse(result.stdout) as ExploreJson;
      assertMatchesSchema(json, 'explore --json');
      assert.ok(json.complete);
      assert.deepEqual(
        json.modes.map((m) => m.mode),
        ['function', 'atomic'],
      );
      const shared: ExploreJson['modes'] = [];
      for (const mode of ['loop', 'claim', 'watch'] as const) shared.push(explorationJson(await explore(mode)) as unknown as ExploreJson['modes'][number]);
      const all = { ...json, modes: [...shared, ...json.modes] };
      assertMatchesSchema(all, 'explore --json');
      for (const mode of all.modes) {
        assert.ok(mode.complete && mode.modelAgrees, `${mode.mode}: every execution as the model predicts`);
        assert.equal(mode.schedules, binomial(mode.turns.A + mode.turns.B, mode.turns.A), `${mode.mode}: every order of the turns`);
        assert.ok(mode.executions <= mode.schedules);
        assert.equal(
          Object.values(mode.outcomes).reduce((a, b) => a + b, 0),
          mode.schedules,
        );
        if (mode.mode === 'loop') continue;
        assert.deepEqual(mode.outcomes, { clean: mode.schedules }, `${mode.mode} is clean in every order`);
      }
      const loop = all.modes.find((m) => m.mode === 'loop');
      assert.ok(loop);
      assert.ok(loop.executions < loop.schedules, 'schedules that differ only after a sweep stopped are one execution');
      const fewest = (word: string) => Math.min(...loop.witnesses.filter((w) => w.outcome.toLowerCase().includes(word)).map((w) => w.switches));
      assert.ok(
        Object.keys(loop.outcomes).some((o) => o.startsWith('duplicate')),
        'the loop has duplicate schedules',
      );
      assert.ok(
        Object.keys(loop.outcomes).some((o) => o.includes('LostIncrement')),
        'the loop has lost-increment schedules',
      );
      assert.ok(fewest('duplicate') <= 2, 'a duplicate in two switches');
      assert.ok(fewest('lostincrement') <= 3, 'a lost increment in three');
      for (const witness of loop.witnesses) assert.match(witness.command ?? '', /^emq-race explain --mode loop --schedule /);
      // Every execution's queue was deleted; nothing else was there.
      assert.deepEqual(await allKeys(admin), before);
    } finally {
      admin.disconnect();
    }
  });

  test('every execution on the server ends as the model predicts, command for command', async () => {
    for (const mode of ['loop', 'claim', 'watch', 'atomic', 'function'] as const) {
      const exploration = await explore(mode);
      assert.ok(exploration.complete);
      for (const execution of exploration.executions) {
        const model = assertAsModelled(mode, execution);
        assert.equal(execution.outcome, outcomeClass(auditJob(model.facts, model.moves, JOB.stalledBefore, JOB.maxStalled)));
      }
    }
  });

  test("each of the loop's witnesses replays through explain to its outcome", async () => {
    const loop = await explore('loop');
    assert.ok(loop.witnesses.length >= 3);
    for (const witness of loop.witnesses) {
      const line = witness.command;
      assert.ok(line, `${witness.outcome} has an explain line`);
      const args = line.split(' ').slice(1);
      const schedule = args[args.indexOf('--schedule') + 1] ?? '';
      // The replay itself, in-process, read back before its queue is cleaned up.
      const queue = `explore-w${process.pid}-${counter++}`;
      const outcome = await onStage(session, { queue, stalledBefore: JOB.stalledBefore, keep: false }, interrupts, async (stage) => {
        const replay = await replayLoop(stage, { queue, schedule: parseSchedule(schedule), batch: 100, maxStalled: JOB.maxStalled });
        const facts = await readFacts(stage.admin, stage.keys, stage.jobId, stage.clock);
        return outcomeClass(auditJob(facts, replay.readout.recoverCount, JOB.stalledBefore, JOB.maxStalled));
      });
      assert.equal(outcome, witness.outcome, line);
      // And the printed line itself, as a user runs it.
      const result = await runCli([...args, '--url', handle.url, '--json']);
      assert.equal(result.code, 0, result.stderr);
      const readout = (JSON.parse(result.stdout) as { replays: { readout: { pendingEntries: number; lostIncrements: number; recoverCount: number } }[] })
        .replays[0]?.readout;
      assert.ok(readout);
      assert.equal(readout.recoverCount > 1, witness.outcome.startsWith('duplicate'), line);
      assert.equal(readout.lostIncrements > 0, witness.outcome.includes('LostIncrement'), line);
    }
  });

  test('with the dead letter in the race (--stalled-before 2): claim and watch whole, the loop on a sample of its orders, each as the model predicts', async () => {
    const deadJob = { stalledBefore: 2, maxStalled: 3 };
    for (const mode of ['claim', 'watch'] as const) {
      const exploration = await exploreMode(session, interrupts, {
        mode,
        queue: `explore-d${process.pid}-${counter++}`,
        batch: 100,
        ...deadJob,
        defaults: JOB,
      });
      assert.deepEqual(exploration.outcomes, { clean: exploration.schedules }, mode);
      for (const execution of exploration.executions) {
        const model = modelRun(
          mode,
          deadJob,
          execution.trace.map((t) => t.sweep),
        );
        assert.deepEqual(model.facts, execution.facts, mode);
      }
    }
    const picked = await deadLetterSample();
    const seen = new Set<string>();
    // One queue for the sample, the job seeded afresh before each run, as explore itself runs them.
    const queue = `explore-d${process.pid}-${counter++}`;
    await onStages(session, { queue, stalledBefore: deadJob.stalledBefore, keep: false }, interrupts, async (stages) => {
      for (const { trace } of picked) {
        const choices = trace.map((t) => t.sweep);
        const model = modelRun('loop', deadJob, choices);
        const run = await stages.next((stage) => runTurned(stage, { mode: 'loop', batch: 100, maxStalled: deadJob.maxStalled }, choices));
        const order = run.trace.map((t) => `${t.sweep}:${t.label}`).join();
        assert.equal(order, model.trace.map((t) => `${t.sweep}:${t.label}`).join());
        assert.deepEqual(run.facts, model.facts, order);
        assert.equal(run.moves, model.moves, order);
        seen.add(outcomeClass(auditJob(run.facts, run.moves, deadJob.stalledBefore, deadJob.maxStalled)));
      }
    });
    assert.ok(seen.has('clean') && [...seen].some((o) => o.includes('LostIncrement')), [...seen].join());
  });

  test("--mode function: its library is loaded under the claim and named from the claim's run id, as clean finds it, and goes at the end", async () => {
    // Held at the first sweep's FCALL: the queue is claimed and the library loaded by then.
    const hold = await holdFirst(handle.url, (chunk, sentBefore) => (sentBefore + chunk).includes('$5\r\nFCALL\r\n'));
    const admin = new Redis(handle.url);
    const held = await openSession({ url: hold.url }, {});
    try {
      const queue = `explore-lib-t${process.pid}`;
      const made = exploreMode(held, interrupts, { mode: 'function', queue, batch: 100, ...JOB, defaults: JOB });
      await hold.held;
      const marker = parseOwnerValue((await admin.get(`emq:{${queue}-0}:owner`)) ?? '');
      assert.ok(marker, 'the queue is claimed while the library is loaded');
      const names = ((await admin.call('FUNCTION', 'LIST', 'LIBRARYNAME', 'emq_race_*')) as unknown[][]).map((entry) => String(entry[1]));
      assert.deepEqual(names, [sweepFunctionNames(marker.run).library]);
      hold.release();
      await made;
      assert.deepEqual(await admin.call('FUNCTION', 'LIST', 'LIBRARYNAME', 'emq_race_*'), []);
    } finally {
      await closeSession(held, false);
      await hold.close();
      admin.disconnect();
    }
  });

  test('the table: a row per outcome within 80 columns, each witness line whole', async () => {
    // The command line's text (the default, every mode the server can run, and --mode loop) is the
    // docs' samples, held to live runs by docs-samples.test.ts; here the explorations made above.
    const text = [renderExploration(await explore('loop'), 80), renderExploration(await explore('function'), 80)].join('\n');
    for (const mode of ['loop', 'function']) assert.match(text, new RegExp(`^${mode}: \\d+ schedules`, 'm'));
    assert.match(text, /^ {2}duplicateAndLostIncrement +\d+ +\d+% +\d+ +3$/m);
    const witnesses = text.split('\n').filter((line) => line.includes('emq-race explain'));
    assert.equal(witnesses.length, 2, 'the duplicate and the lost increment: clean is no anomaly');
    assert.deepEqual(
      text.split('\n').filter((line) => line.length > 80 && !witnesses.includes(line)),
      [],
    );
  });

  test('three sweeps within two preemptions (the loop) and one (the others): every execution ends as the model predicts', async () => {
    const seen = new Set<string>();
    for (const [mode, maxSwitches] of [
      ['loop', 2],
      ['claim', 1],
      ['watch', 1],
      ['atomic', 2],
    ] as const) {
      const exploration = await exploreMode(session, interrupts, {
        mode,
        queue: `explore-3s${process.pid}-${counter++}`,
        batch: 100,
        ...JOB,
        defaults: JOB,
        sweeps: 3,
        maxSwitches,
      });
      assert.ok(exploration.complete);
      assert.equal(exploration.schedules, boundedSchedules(exploration.turns, maxSwitches), `${mode}: the schedules the bound covers`);
      assert.equal(exploration.allSchedules, allSchedules(exploration.turns));
      assert.deepEqual(await plannedOnce(mode, maxSwitches), { executions: exploration.executions.length, schedules: exploration.schedules });
      for (const execution of exploration.executions) {
        assert.ok(execution.preemptions <= maxSwitches);
        assertAsModelled(mode, execution, 3);
        assert.equal(execution.outcome, execution.predicted, `${mode} ${executionOrder(execution)}`);
      }
      if (mode !== 'loop') assert.deepEqual(exploration.outcomes, { clean: exploration.schedules }, `${mode} is clean in every order within the bound`);
      else for (const outcome of Object.keys(exploration.outcomes)) seen.add(outcome);
    }
    assert.ok(seen.has('duplicateAndLostIncrement'), [...seen].join());
    assert.ok(
      [...seen].some((o) => o.endsWith('DeadLetteredEarly')),
      `a third sweep sends a healthy job to dead: ${[...seen].join()}`,
    );
  });

  test('an unknown mode, four sweeps, three unbounded, a bound over 100,000 schedules: one line, exit 2, nothing written', async () => {
    const admin = new Redis(handle.url);
    try {
      const before = await allKeys(admin);
      for (const mode of ['nope', 'script', 'loop,both']) {
        const result = await runCli(['explore', '--url', handle.url, '--mode', mode]);
        assert.equal(result.code, 2, mode);
        assert.equal(result.stdout, '');
        assert.match(result.stderr, /^emq-race: --mode: .*\n$/);
      }
      for (const [args, message] of [
        [['--sweeps', '4'], /^emq-race: --sweeps: /],
        [['--sweeps', '3'], /^emq-race: --sweeps 3: .*--max-switches/],
        [
          ['--sweeps', '3', '--max-switches', '4', '--mode', 'loop'],
          /^emq-race: explore: more than 100,000 schedules of 3 sweeps with at most 4 preemptions \(loop\); over 100,000 runs only with --yes\n$/,
        ],
        // Millions of executions: counted only as far as the limit, in a moment.
        [['--sweeps', '3', '--max-switches', '1000'], /^emq-race: explore: more than 100,000 schedules of 3 sweeps with at most 1,000 preemptions /],
      ] as const) {
        const result = await runCli(['explore', '--url', handle.url, ...args]);
        assert.equal(result.code, 2, args.join(' '));
        assert.equal(result.stdout, '');
        assert.match(result.stderr, message);
        assert.equal(result.stderr.split('\n').length, 2, 'one line');
      }
      assert.deepEqual(await allKeys(admin), before);
    } finally {
      admin.disconnect();
    }
  });
});

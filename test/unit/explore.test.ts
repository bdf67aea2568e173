/**
 * explore's pure parts: the model of each strategy searched over every order of two sweeps' round
 * trips, the counting of schedules and executions, the outcome classes from the audit's rules, and
 * the explain lines its witnesses become.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseExploreModes } from '../../src/cli/explore-command.js';
import { parseSchedule } from '../../src/explain/schedule.js';
import { Conductor, preemptionsOf, type ExploreSweep, type TraceTurn } from '../../src/explore/conductor.js';
import { interner, summarize } from '../../src/explore/explore.js';
import { modelRun, plannedExploration, type ModelOptions } from '../../src/explore/model.js';
import { auditJob, outcomeClass } from '../../src/explore/outcome.js';
import { allSchedules, binomial, boundedSchedules, schedulesOf, search, switchesOf, turnsPerSweep, type Turns } from '../../src/explore/search.js';
import { loopSchedule } from '../../src/explore/witness.js';
import type { Mode } from '../../src/shared/model.js';

const DEFAULT_JOB: ModelOptions = { stalledBefore: 0, maxStalled: 3 };
const DEFAULTS = { stalledBefore: 0, maxStalled: 3 };

/** The model searched like the server is: every execution (within the bound), depth first. */
async function exploreModel(mode: Mode, job: ModelOptions = DEFAULT_JOB, sweeps = 2, maxSwitches?: number, keep = (turn: TraceTurn) => turn) {
  const { runs, complete } = await search(
    async (prefix) => {
      const run = modelRun(mode, job, prefix, sweeps);
      const outcome = outcomeClass(auditJob(run.facts, run.moves, job.stalledBefore, job.maxStalled));
      return { trace: run.trace.map(keep), result: { facts: run.facts, moves: run.moves, outcome, predicted: outcome, sameTurns: true } };
    },
    () => false,
    maxSwitches,
  );
  assert.ok(complete);
  return summarize(
    mode,
    runs.map((run) => ({ trace: run.trace, ...run.result })),
    { ...job, defaults: DEFAULTS, sweeps, ...(maxSwitches !== undefined ? { maxSwitches } : {}) },
    complete,
  );
}

/** Every word over the sweeps' turns, listed: the schedules the counting must agree with. */
function everySchedule(turns: Turns): ExploreSweep[][] {
  const out: ExploreSweep[][] = [];
  const walk = (left: Partial<Record<ExploreSweep, number>>, word: ExploreSweep[]) => {
    const open = (Object.keys(left) as ExploreSweep[]).filter((s) => (left[s] ?? 0) > 0);
    if (open.length === 0) out.push(word);
    for (const s of open) walk({ ...left, [s]: (left[s] ?? 0) - 1 }, [...word, s]);
  };
  walk({ ...turns }, []);
  return out;
}

/** A schedule played on the model: a stopped sweep's turns pass. Its execution and its preemptions. */
function playSchedule(mode: Mode, job: ModelOptions, word: readonly ExploreSweep[], sweeps: number): { execution: string; preemptions: number } {
  // The model runs the choices it is given; a turn of a sweep that has stopped is dropped.
  const choices: ExploreSweep[] = [];
  for (const sweep of word) {
    const trial = modelRun(mode, job, choices, sweeps);
    const live = trial.trace[choices.length]?.runnable ?? [];
    if (live.includes(sweep)) choices.push(sweep);
  }
  const switches = word.filter((s, i) => i > 0 && s !== word[i - 1]).length;
  const trace = modelRun(mode, job, choices, sweeps).trace;
  return { execution: trace.map((t) => `${t.sweep}:${t.label}`).join(), preemptions: switches - (sweeps - 1) };
}

test('the loop: duplicates in two switches, lost increments in three, clean serially', async () => {
  const loop = await exploreModel('loop');
  assert.deepEqual(loop.turns, { A: 6, B: 6 });
  assert.equal(loop.schedules, binomial(12, 6));
  assert.deepEqual(Object.keys(loop.outcomes).sort(), ['clean', 'duplicateAndLostIncrement', 'duplicateAndOverCount']);
  const switches = Object.fromEntries(loop.witnesses.map((w) => [w.outcome, w.switches]));
  assert.deepEqual(switches, { clean: 1, duplicateAndOverCount: 2, duplicateAndLostIncrement: 3 });
  // Every execution is distinct, and no two differ only after a sweep stopped.
  assert.equal(new Set(loop.executions.map((e) => e.trace.map((t) => `${t.sweep}:${t.label}`).join())).size, loop.executions.length);
});

test('a lost increment needs three switches: both reads before either write, both probes before either ZREM', async () => {
  const loop = await exploreModel('loop');
  const lost = loop.executions.filter((e) => e.outcome.includes('LostIncrement'));
  assert.ok(lost.length > 0);
  assert.equal(Math.min(...lost.map((e) => e.switches)), 3);
});

test('claim, watch, atomic and function are clean in every order', async () => {
  for (const mode of ['claim', 'watch', 'atomic', 'function'] as const) {
    const explored = await exploreModel(mode);
    assert.deepEqual(explored.outcomes, { clean: explored.schedules }, mode);
    assert.equal(explored.schedules, allSchedules(explored.turns), mode);
  }
});

test('watch: a sweep whose EXEC was refused tries again, finds the job gone and unwatches', () => {
  const run = modelRun('watch', DEFAULT_JOB, ['A', 'B', 'A', 'B', 'A', 'B', 'A', 'A', 'B']);
  assert.deepEqual(
    run.trace.map((t) => `${t.sweep}:${t.label}`),
    [
      'A:zrangebyscore',
      'B:zrangebyscore',
      'A:watch',
      'B:watch',
      'A:zscore',
      'B:zscore',
      'A:hget',
      'A:exec',
      'B:hget',
      'B:exec',
      'B:watch',
      'B:zscore',
      'B:unwatch',
    ],
  );
  assert.equal(run.moves, 1);
});

test("the schedules of every execution add up to every order of the sweeps' turns, with the dead letter too", async () => {
  for (const mode of ['loop', 'claim', 'watch'] as const) {
    const explored = await exploreModel(mode, { stalledBefore: 2, maxStalled: 3 });
    const turns = turnsPerSweep(explored.executions.map((e) => e.trace));
    assert.equal(explored.schedules, allSchedules(turns), mode);
    if (mode === 'loop') assert.deepEqual(turns, { A: 9, B: 9 }, 'the dead letter adds LREM, ZADD and HSET');
  }
});

test("schedules of one execution: the stopped sweep's turns pass anywhere among the other's", () => {
  const turn = (sweep: ExploreSweep, label: string): TraceTurn => ({ sweep, label, runnable: ['A', 'B'] });
  // B found nothing on its first turn; A then ran its six alone: B's five idle turns go anywhere among them.
  const trace = [turn('B', 'zrangebyscore'), ...['zrangebyscore', 'zscore', 'zrem', 'rpush', 'hget', 'hset'].map((l) => turn('A', l))];
  assert.equal(schedulesOf(trace, { A: 6, B: 6 }), binomial(11, 5));
  // The bounded count, with a bound no schedule reaches, is the closed form's.
  assert.equal(schedulesOf(trace, { A: 6, B: 6 }, 100), binomial(11, 5));
  const three = [
    turn('B', 'zrangebyscore'),
    { ...turn('C', 'zrangebyscore'), runnable: ['A', 'B', 'C'] as const },
    turn('A', 'zrangebyscore'),
    turn('A', 'zscore'),
  ];
  assert.equal(schedulesOf(three, { A: 3, B: 2, C: 2 }, 100), schedulesOf(three, { A: 3, B: 2, C: 2 }));
  assert.equal(switchesOf(trace), 1);
});

test("outcome classes come from the audit's anomalies, in its order", () => {
  const facts = { pendingEntries: 2, inActive: false, activeExpired: false, inDead: false, stalled: 1, state: 'pending' };
  assert.equal(outcomeClass(auditJob(facts, 2, 0, 3)), 'duplicateAndLostIncrement');
  assert.equal(outcomeClass(auditJob({ ...facts, stalled: 2 }, 2, 0, 3)), 'duplicateAndOverCount');
  assert.equal(outcomeClass(auditJob({ ...facts, pendingEntries: 1 }, 1, 0, 3)), 'clean');
  assert.equal(outcomeClass(auditJob({ ...facts, pendingEntries: 0, inDead: true, state: 'dead', stalled: 3 }, 2, 2, 3)), 'duplicateAndLostIncrement');
  // Moved once and counted once, yet twice in pending.
  assert.equal(outcomeClass(auditJob({ ...facts, pendingEntries: 2 }, 1, 0, 3)), 'duplicate');
  // Moved once, yet in dead with the counter below max-stalled: the audit's early dead letter.
  assert.equal(outcomeClass(auditJob({ ...facts, pendingEntries: 0, inDead: true, state: 'dead', stalled: 1 }, 1, 0, 3)), 'deadLetteredEarly');
});

test("a loop execution becomes explain's schedule, unless the other sweep splits a step", () => {
  const turns = (items: string): TraceTurn[] =>
    items.split(',').map((item) => {
      const [sweep, label] = item.split(':') as ['A' | 'B', string];
      return { sweep, label, runnable: ['A', 'B'] };
    });
  const witness = loopSchedule(turns('A:zrangebyscore,A:zscore,B:zrangebyscore,B:zscore,B:zrem,B:rpush,B:hget,B:hset,A:zrem,A:rpush,A:hget,A:hset'));
  assert.equal(witness, 'A:detect,A:probe,B:detect,B:probe,B:move,B:read,B:write,A:move,A:read,A:write');
  assert.doesNotThrow(() => parseSchedule(witness ?? ''));
  // B stopped at its detect: its other steps are named right after it and send nothing.
  const serial = loopSchedule(turns('A:zrangebyscore,A:zscore,A:zrem,A:rpush,A:hget,A:hset,B:zrangebyscore'));
  assert.equal(serial, 'A:detect,A:probe,A:move,A:read,A:write,B:detect,B:probe,B:move,B:read,B:write');
  assert.equal(loopSchedule(turns('A:zrangebyscore,A:zscore,A:zrem,B:zrangebyscore,A:rpush')), undefined, "B inside A's move");
});

test('the conductor lets one sweep through at a time: the prefix first, then the last sweep while it can go on', async () => {
  const conductor = new Conductor(['A', 'B'], ['B']);
  const order: string[] = [];
  const sweep = async (name: 'A' | 'B', commands: number) => {
    for (let i = 0; i < commands; i++) {
      await conductor.turn(name, `c${i}`);
      order.push(`${name}${i}`);
      await Promise.resolve();
      conductor.done();
    }
    conductor.stop(name);
  };
  await Promise.all([sweep('A', 2), sweep('B', 2)]);
  // Past its prefix a run preempts no sweep: B goes on until it stops, then A.
  assert.deepEqual(order, ['B0', 'B1', 'A0', 'A1']);
  assert.deepEqual(
    conductor.trace.map((t) => t.runnable.length),
    [2, 2, 1, 1],
  );
  assert.equal(preemptionsOf(conductor.trace), 0, 'B first, whole, then A: no sweep was preempted');
});

test('--mode: the modes explore holds a model of, all of them, or a usage error naming what it runs', () => {
  assert.deepEqual(parseExploreModes('loop,claim,loop'), ['loop', 'claim']);
  assert.deepEqual(parseExploreModes('all'), ['atomic', 'loop', 'watch', 'claim', 'function']);
  assert.throws(() => parseExploreModes('script'), /"script" is a mode explore cannot run; explore runs atomic, loop, watch, claim, function, or all/);
  assert.throws(() => parseExploreModes('zrem-claim'), /"zrem-claim" is not a mode/);
  assert.throws(() => parseExploreModes('all,'), /^EmqError: --mode: an empty mode in the list; separate modes with single commas, as in atomic,loop$/);
  assert.throws(() => parseExploreModes(''), /^EmqError: --mode: no mode given/);
  // A word that reads as no mode is not repeated: it may be a password typed in the wrong place.
  for (const raw of ['S3cr3t!Pass', 'atomic,Zq9Sekrit']) {
    assert.throws(
      () => parseExploreModes(raw),
      (err: Error) =>
        err.message === '--mode: the value given (not shown: it may be a password) is not a mode; explore runs atomic, loop, watch, claim, function, or all',
    );
  }
});

test('bounded counting: the schedules within K preemptions, counted, equal those listed', () => {
  for (const turns of [
    { A: 2, B: 3 },
    { A: 2, B: 2, C: 2 },
    { A: 1, B: 3, C: 2 },
  ] as Turns[]) {
    const words = everySchedule(turns);
    assert.equal(words.length, allSchedules(turns));
    const sweeps = Object.keys(turns).length;
    for (const k of [0, 1, 2, 3]) {
      const within = words.filter((w) => w.filter((s, i) => i > 0 && s !== w[i - 1]).length - (sweeps - 1) <= k);
      assert.equal(boundedSchedules(turns, k), within.length, `${JSON.stringify(turns)} K=${k}`);
    }
  }
});

test("under a bound, each execution's schedules, counted, equal the schedules listed and played that end in it", async () => {
  // Small enough to list: three atomic sweeps (one turn each), two loop sweeps (924 schedules).
  for (const [mode, sweeps, k] of [
    ['atomic', 3, 0],
    ['atomic', 3, 1],
    ['loop', 2, 1],
    ['loop', 2, 2],
  ] as const) {
    const explored = await exploreModel(mode, DEFAULT_JOB, sweeps, k);
    const played = new Map<string, number>();
    for (const word of everySchedule(explored.turns)) {
      const { execution, preemptions } = playSchedule(mode, DEFAULT_JOB, word, sweeps);
      if (preemptions <= k) played.set(execution, (played.get(execution) ?? 0) + 1);
    }
    const counted = new Map(explored.executions.map((e) => [e.trace.map((t) => `${t.sweep}:${t.label}`).join(), e.schedules]));
    assert.deepEqual(counted, played, `${mode}, ${sweeps} sweeps, K=${k}`);
    assert.equal(explored.schedules, boundedSchedules(explored.turns, k));
  }
});

test('three sweeps within two preemptions: the loop duplicates, loses increments and dead-letters a healthy job; the others stay clean', async () => {
  const loop = await exploreModel('loop', DEFAULT_JOB, 3, 2);
  assert.equal(loop.sweeps, 3);
  assert.deepEqual(loop.turns, { A: 9, B: 9, C: 9 }, 'three moves take the counter to max-stalled: the dead letter joins');
  assert.equal(loop.schedules, boundedSchedules(loop.turns, 2));
  assert.equal(loop.allSchedules, allSchedules(loop.turns));
  assert.ok(loop.executions.every((e) => e.preemptions <= 2));
  const classes = Object.keys(loop.outcomes);
  assert.ok(classes.includes('duplicateAndLostIncrement'), classes.join());
  assert.ok(
    classes.some((c) => c.includes('DeadLetteredEarly')),
    classes.join(),
  );
  for (const witness of loop.witnesses) assert.equal(witness.command, null, 'explain replays two sweeps');
  for (const mode of ['claim', 'watch', 'atomic'] as const) {
    const explored = await exploreModel(mode, DEFAULT_JOB, 3, 2);
    assert.deepEqual(explored.outcomes, { clean: explored.schedules }, mode);
  }
  const planned = await plannedExploration('loop', DEFAULT_JOB, 3, 2);
  assert.deepEqual(planned, { executions: loop.executions.length, schedules: loop.schedules }, 'the plan is known before the server is touched');
  assert.deepEqual(await plannedExploration('loop', DEFAULT_JOB, 3, 2, loop.schedules), planned, 'a count within the limit is the whole count');
  // Past the limit the search stops: a bound of 1,000 has millions of executions, never listed.
  const capped = await plannedExploration('loop', DEFAULT_JOB, 3, 1_000, 100_000);
  assert.equal(capped.schedules, null);
  assert.ok(capped.executions < 100_000, `${capped.executions} executions listed`);
  assert.equal((await plannedExploration('loop', DEFAULT_JOB, 3, 2, loop.schedules - 1)).schedules, null);
});

test('two sweeps: a bound of 1 preemption is the serial orders and those where one sweep runs whole inside the other', async () => {
  const loop = await exploreModel('loop', DEFAULT_JOB, 2, 1);
  assert.equal(loop.schedules, boundedSchedules({ A: 6, B: 6 }, 1));
  assert.deepEqual(Object.keys(loop.outcomes).sort(), ['clean', 'duplicateAndOverCount']);
  const full = await exploreModel('loop');
  assert.equal(full.schedules, full.allSchedules);
  assert.equal(full.maxSwitches, null);
});

test('interner: one object per distinct turn, equal ones handed back as it; an exploration summed from them counts the same', async () => {
  const sameTurn = () => interner<TraceTurn>((turn) => `${turn.sweep} ${turn.label} ${turn.runnable.join('')}`);
  const same = sameTurn();
  const first: TraceTurn = { sweep: 'A', label: 'zrem', runnable: ['A', 'B'] };
  assert.equal(same(first), first);
  assert.equal(same({ sweep: 'A', label: 'zrem', runnable: ['A', 'B'] }), first);
  const other: TraceTurn = { sweep: 'A', label: 'zrem', runnable: ['A'] };
  assert.equal(same(other), other);

  // Three sweeps of the loop within two preemptions: the same sums, witnesses and executions.
  const kept = new Set<TraceTurn>();
  const shared = sameTurn();
  const interned = await exploreModel('loop', DEFAULT_JOB, 3, 2, (turn) => {
    const held = shared(turn);
    kept.add(held);
    return held;
  });
  const plain = await exploreModel('loop', DEFAULT_JOB, 3, 2);
  assert.deepEqual(interned, plain);
  const turns = plain.executions.reduce((sum, e) => sum + e.trace.length, 0);
  assert.ok(kept.size * 10 < turns, `${kept.size} turn objects kept for ${turns} turns`);
});

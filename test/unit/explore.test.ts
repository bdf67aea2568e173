/**
 * explore's pure parts: the model of each strategy searched over every order of two sweeps' round
 * trips, the counting of schedules and executions, the outcome classes from the audit's rules, and
 * the explain lines its witnesses become.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseExploreModes } from '../../src/cli/explore-command.js';
import { parseSchedule } from '../../src/explain/schedule.js';
import { Conductor, type TraceTurn } from '../../src/explore/conductor.js';
import { summarize } from '../../src/explore/explore.js';
import { modelRun, type ModelOptions } from '../../src/explore/model.js';
import { auditJob, outcomeClass } from '../../src/explore/outcome.js';
import { binomial, schedulesOf, search, switchesOf, turnsPerSweep } from '../../src/explore/search.js';
import { loopSchedule } from '../../src/explore/witness.js';
import type { Mode } from '../../src/model.js';

const DEFAULT_JOB: ModelOptions = { stalledBefore: 0, maxStalled: 3 };
const DEFAULTS = { stalledBefore: 0, maxStalled: 3 };

/** The model searched like the server is: every execution, depth first. */
async function exploreModel(mode: Mode, job: ModelOptions = DEFAULT_JOB) {
  const { runs, complete } = await search(async (prefix) => {
    const run = modelRun(mode, job, prefix);
    const outcome = outcomeClass(auditJob(run.facts, run.moves, job.stalledBefore, job.maxStalled));
    return { trace: run.trace, result: { facts: run.facts, moves: run.moves, outcome, predicted: outcome, sameTurns: true } };
  });
  assert.ok(complete);
  return summarize(
    mode,
    runs.map((run) => ({ trace: run.trace, ...run.result })),
    { ...job, defaults: DEFAULTS },
    complete,
  );
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
    assert.equal(explored.schedules, binomial(explored.turns.A + explored.turns.B, explored.turns.A), mode);
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
    assert.equal(explored.schedules, binomial(turns.A + turns.B, turns.A), mode);
    if (mode === 'loop') assert.deepEqual(turns, { A: 9, B: 9 }, 'the dead letter adds LREM, ZADD and HSET');
  }
});

test("schedules of one execution: the stopped sweep's turns pass anywhere among the other's", () => {
  const turn = (sweep: 'A' | 'B', label: string): TraceTurn => ({ sweep, label, runnable: ['A', 'B'] });
  // B found nothing on its first turn; A then ran its six alone: B's five idle turns go anywhere among them.
  const trace = [turn('B', 'zrangebyscore'), ...['zrangebyscore', 'zscore', 'zrem', 'rpush', 'hget', 'hset'].map((l) => turn('A', l))];
  assert.equal(schedulesOf(trace, { A: 6, B: 6 }), binomial(11, 5));
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

test('the conductor lets one sweep through at a time: the prefix first, then the first waiting', async () => {
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
  assert.deepEqual(order, ['B0', 'A0', 'A1', 'B1']);
  assert.deepEqual(
    conductor.trace.map((t) => t.runnable.length),
    [2, 2, 2, 1],
  );
});

test('--mode: the modes explore holds a model of, all of them, or a usage error naming what it runs', () => {
  assert.deepEqual(parseExploreModes('loop,claim,loop'), ['loop', 'claim']);
  assert.deepEqual(parseExploreModes('all'), ['atomic', 'loop', 'watch', 'claim', 'function']);
  assert.throws(() => parseExploreModes('script'), /"script" is a mode explore cannot run; explore runs atomic, loop, watch, claim, function, or all/);
  assert.throws(() => parseExploreModes('zrem-claim'), /"zrem-claim" is not a mode/);
});

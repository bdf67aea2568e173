/** The seeded scheduler's arithmetic: the generator, the priorities, the change points and the choice. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MEAN_CHANGE_GAP, SeededScheduler, changeGap, drawPriorities, highestWaiting, seededRandom } from '../../src/race/seeded-scheduler.js';

test('the generator gives the same numbers for the same seed, others for another, all in [0, 1)', () => {
  const draw = (seed: number) => Array.from({ length: 1000 }, seededRandom(seed));
  assert.deepEqual(draw(7), draw(7));
  assert.notDeepEqual(draw(7), draw(8));
  for (const n of draw(4_294_967_295)) assert.ok(n >= 0 && n < 1);
  // Spread over the interval, not stuck in one part of it.
  const low = draw(1).filter((n) => n < 0.5).length;
  assert.ok(low > 400 && low < 600, String(low));
});

test('priorities are a shuffle of 1 … n; change gaps stay within 1 … 2 × mean − 1', () => {
  const random = seededRandom(3);
  for (let n = 1; n <= 16; n++)
    assert.deepEqual(
      [...drawPriorities(n, random)].sort((a, b) => a - b),
      Array.from({ length: n }, (_, i) => i + 1),
    );
  const gaps = Array.from({ length: 2000 }, () => changeGap(random));
  assert.equal(Math.min(...gaps), 1);
  assert.equal(Math.max(...gaps), 2 * MEAN_CHANGE_GAP - 1);
});

test('the highest priority among the waiting goes', () => {
  assert.equal(highestWaiting([3, 1, 2], [0, 1, 2]), 0);
  assert.equal(highestWaiting([3, 1, 2], [1, 2]), 2);
  assert.equal(highestWaiting([-2, -1, -3], [0, 2]), 0);
});

/** Sweepers that each send `commands` commands, all through the scheduler: the order it gave. */
async function order(seed: number, sweepers: number, commands: number): Promise<number[]> {
  const scheduler = new SeededScheduler(sweepers, seed, true);
  await Promise.all(
    Array.from({ length: sweepers }, async (_, sweeper) => {
      scheduler.beginSweep(sweeper);
      for (let i = 0; i < commands; i++) {
        await scheduler.turn(sweeper, 'get');
        // A reply arrives later than the next sweeper's request could: the order must not care.
        await new Promise((resolve) => setImmediate(resolve));
        scheduler.done();
      }
      scheduler.stop(sweeper);
    }),
  );
  assert.equal(scheduler.given, sweepers * commands);
  return scheduler.trace.map((turn) => turn.sweeper);
}

test('one turn at a time, the same order for the same seed, and every sweeper gets ahead somewhere', async () => {
  const first = await order(11, 4, 50);
  assert.deepEqual(await order(11, 4, 50), first);
  assert.notDeepEqual(await order(12, 4, 50), first);
  // Change points hand the turn over: no sweeper runs all its commands before another starts.
  const switches = first.filter((sweeper, at) => at > 0 && sweeper !== first[at - 1]).length;
  assert.ok(switches >= 4, String(switches));
});

test('a failure reaches every waiting sweeper, and later turns', async () => {
  const scheduler = new SeededScheduler(2, 1, true);
  const turns = [scheduler.turn(0, 'get'), scheduler.turn(1, 'get')];
  // Both wait: one goes, the other waits for a turn that the failure ends.
  const first = scheduler.trace[0]?.sweeper as number;
  await turns[first];
  scheduler.fail(new Error('gone'));
  await assert.rejects(turns[1 - first] as Promise<void>, /gone/);
  await assert.rejects(scheduler.turn(first, 'get'), /gone/);
});

/**
 * inCalls (src/server/slices.ts), the bounded calls every bulk step shares: replies handled in
 * order, and once its signal is aborted not one more call sent, only those in flight left to run.
 * openEach, the race's sweeper connections opened a few at once: every one opened handed back,
 * whatever fails, so that none is left open.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { IN_FLIGHT, inCalls, openEach } from '../../src/server/slices.js';

const tasks = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

test('every task is called once, and the replies are handled in task order', async () => {
  const handled: number[] = [];
  await inCalls(
    tasks(40),
    undefined,
    async (task) => task * 2,
    (reply, task) => handled.push(reply - task),
  );
  assert.deepEqual(handled, tasks(40));
});

test('stopped as a reply is handled: no call is sent after it, and the stop is thrown', async () => {
  const stop = new AbortController();
  const sent: number[] = [];
  const handled: number[] = [];
  await assert.rejects(
    inCalls(
      tasks(100),
      stop.signal,
      async (task) => {
        sent.push(task);
        return task;
      },
      (task) => {
        handled.push(task);
        if (task === 2) stop.abort(new Error('stopped'));
      },
    ),
    /stopped/,
  );
  // The first window was in flight before the stop; the stop came with the third reply, so the
  // two calls that would have followed the first two replies are all that was sent besides.
  assert.deepEqual(handled, [0, 1, 2]);
  assert.equal(sent.length, IN_FLIGHT + 2);
});

test('stopped before it starts: nothing is sent', async () => {
  const stop = new AbortController();
  stop.abort(new Error('stopped'));
  let sent = 0;
  await assert.rejects(
    inCalls(
      tasks(5),
      stop.signal,
      async () => sent++,
      () => {},
    ),
    /stopped/,
  );
  assert.equal(sent, 0);
});

test('stopped as the last reply is handled: the stop is thrown, not a finish', async () => {
  const stop = new AbortController();
  await assert.rejects(
    inCalls(
      tasks(3),
      stop.signal,
      async (task) => task,
      (task) => {
        if (task === 2) stop.abort(new Error('stopped'));
      },
    ),
    /stopped/,
  );
});

/** An opener that counts how many are open at once and resolves each after a turn of the loop. */
function opener(failAt?: number): { open: () => Promise<number>; begun: () => number; most: () => number } {
  let begun = 0;
  let now = 0;
  let most = 0;
  return {
    open: async () => {
      const at = begun++;
      now++;
      most = Math.max(most, now);
      // Later ones resolve first: the order handed back must not be the order they resolved in.
      for (let i = 0; i < (IN_FLIGHT - (at % IN_FLIGHT)) * 2; i++) await tick();
      now--;
      if (at === failAt) throw new Error(`open ${at} refused`);
      return at;
    },
    begun: () => begun,
    most: () => most,
  };
}

test('openEach opens every one, at most IN_FLIGHT at once, and hands them back in index order', async () => {
  const { open, most } = opener();
  const into: number[] = [];
  await openEach(IN_FLIGHT * 3 + 5, open, new AbortController().signal, into);
  assert.deepEqual(into, tasks(IN_FLIGHT * 3 + 5));
  assert.equal(most(), IN_FLIGHT);
});

test('openEach, one refused: the refusal is thrown once the others settle, every one opened handed back, none begun after', async () => {
  const failAt = IN_FLIGHT + 2;
  const { open, begun } = opener(failAt);
  const into: number[] = [];
  await assert.rejects(openEach(IN_FLIGHT * 4, open, new AbortController().signal, into), new RegExp(`open ${failAt} refused`));
  // Every one begun was either handed back or is the refused one: none left open.
  assert.equal(into.length + 1, begun());
  assert.ok(!into.includes(failAt));
  assert.ok(begun() < IN_FLIGHT * 4, `began ${begun()} of ${IN_FLIGHT * 4}`);
});

test('openEach stopped part-way: the stop is thrown, the ones already begun are handed back', async () => {
  const stop = new AbortController();
  const { open, begun } = opener();
  const into: number[] = [];
  const opening = openEach(IN_FLIGHT * 4, open, stop.signal, into);
  await tick();
  stop.abort(new Error('stopped'));
  await assert.rejects(opening, /stopped/);
  assert.equal(into.length, begun());
  assert.ok(begun() < IN_FLIGHT * 4);
});

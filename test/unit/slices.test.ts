/**
 * inCalls (src/server/slices.ts), the bounded calls every bulk step shares: replies handled in
 * order, and once its signal is aborted not one more call sent, only those in flight left to run.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IN_FLIGHT, inCalls } from '../../src/server/slices.js';

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

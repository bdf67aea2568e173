/**
 * The failover drill's schedule, driven by hand: a sweeper that moves one job a call, steps (cut,
 * failover) and workers that finish only when the test says so. What the drill says it is doing
 * at each point (the progress line's stage), and where it lets calls through.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FailoverDrill } from '../../src/race/failover-drill.js';
import { MoveLog } from '../../src/sweepers/move-log.js';
import type { Sweeper, SweeperContext } from '../../src/sweepers/sweeper.js';

/** A promise and the function that resolves it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Lets every settled promise's callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('the drill says what it waits on: the workers before each step, then the cut, then the kill and promotion; nothing between', async () => {
  const cut = deferred();
  const failover = deferred();
  const idleBeforeCut = deferred();
  const idleBeforeFailover = deferred();
  const idles = [idleBeforeCut, idleBeforeFailover];
  const drill = new FailoverDrill(
    { after: 1, calls: 1 },
    {
      cut: () => cut.promise,
      failover: async (_signal, promoted) => {
        await failover.promise;
        promoted();
      },
    },
    10,
    new AbortController().signal,
  );
  drill.attachWorkers({ idle: () => idles.shift()?.promise ?? Promise.resolve() });
  let next = 1;
  const record = new MoveLog();
  const inner: Sweeper = {
    record,
    commands: 0,
    sweep: async () => {
      record.add(next++, 'pending');
      return 1;
    },
  };
  const sweeper = drill.wrap(() => inner)({} as SweeperContext);
  assert.equal(drill.stage, undefined, 'no step before the first call is answered');

  assert.equal(await sweeper.sweep(), 1);
  await settle();
  assert.equal(drill.stage, 'waiting for the workers to finish their jobs before the cut');
  idleBeforeCut.resolve();
  await settle();
  assert.equal(drill.stage, 'failover: cutting the replica off');
  cut.resolve();
  await settle();
  assert.equal(drill.stage, undefined, 'between the cut and the window call, the drill waits on nothing');

  // The one call the window lets through; then the second step waits for the workers again.
  assert.equal(await sweeper.sweep(), 1);
  await settle();
  assert.equal(drill.stage, 'waiting for the workers to finish their jobs before the failover');
  assert.equal(drill.side(), 'before');
  idleBeforeFailover.resolve();
  await settle();
  assert.equal(drill.stage, 'failover: killing the primary, promoting the replica');
  failover.resolve();
  await settle();
  assert.equal(drill.stage, undefined);
  assert.equal(drill.side(), 'after');
  assert.deepEqual(
    { ...drill.counts, waitReplies: undefined },
    { happened: true, callsBeforeCut: 1, callsAfterCut: 1, predictedLoss: 1, unconfirmedMoves: 0, waitTimeouts: 0, waitReplies: undefined },
  );
});

test('without workers the drill goes straight to each step', async () => {
  const cut = deferred();
  const drill = new FailoverDrill({ after: 1, calls: 0 }, { cut: () => cut.promise, failover: async () => {} }, 10, new AbortController().signal);
  const record = new MoveLog();
  const sweeper = drill.wrap(() => ({
    record,
    commands: 0,
    sweep: async () => {
      record.add(1, 'pending');
      return 1;
    },
  }))({} as SweeperContext);
  await sweeper.sweep();
  await settle();
  assert.equal(drill.stage, 'failover: cutting the replica off');
  cut.resolve();
  await settle();
  // No call let through after the cut: the failover follows at once, and is over.
  assert.equal(drill.stage, undefined);
  assert.equal(drill.counts.happened, true);
  assert.equal(drill.counts.callsAfterCut, 0);
});

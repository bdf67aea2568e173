/**
 * The signal counting of src/shared/interrupt.ts, with the signals emitted on the process (its listeners
 * run as a real signal runs them, and nothing is sent to the test's own process).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ServerGoneError, serverError, usageError } from '../../src/shared/errors.js';
import { helperNews, timeoutSignal, underHelper, watchInterrupts } from '../../src/shared/interrupt.js';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const listeners = (): number[] => SIGNALS.map((signal) => process.listenerCount(signal));

test('a run no signal stopped hands the signals over as it is disposed: one while the process ends leaves with its code, once its output was complete', async () => {
  const before = listeners();
  const said: string[] = [];
  const left: [number, string][] = [];
  const interrupts = watchInterrupts(
    (line) => said.push(line),
    (code, message) => left.push([code, message]),
    100,
  );
  assert.deepEqual(
    listeners(),
    before.map((count) => count + 1),
  );
  interrupts.dispose();
  // Its own listener went, the one for the process's last moments came: never none in between.
  assert.deepEqual(
    listeners(),
    before.map((count) => count + 1),
  );
  assert.equal(interrupts.signal.aborted, false);
  process.emit('SIGTERM', 'SIGTERM');
  assert.deepEqual(said, ['emq-race: interrupted by SIGTERM, once its output was complete\n']);
  assert.deepEqual(left, [[143, 'interrupted by SIGTERM']]);
  // Once: a second signal then is not the command's to say (it has left).
  process.emit('SIGINT', 'SIGINT');
  assert.equal(left.length, 1);
  await sleep(200);
  assert.deepEqual(listeners(), before, 'the listeners go once the process should have ended');
});

test('a new watch takes the signals back from one disposed before it; with two at once, none is handed over until the last goes', async () => {
  const before = listeners();
  const left: number[] = [];
  const watch = (): ReturnType<typeof watchInterrupts> =>
    watchInterrupts(
      () => {},
      (code) => left.push(code),
      50,
    );
  const first = watch();
  const second = watch();
  first.dispose();
  assert.deepEqual(
    listeners(),
    before.map((count) => count + 1),
    'the second still watches: its listener alone, nothing handed over',
  );
  second.dispose();
  second.dispose();
  assert.deepEqual(
    listeners(),
    before.map((count) => count + 1),
    'handed over, once',
  );
  const third = watch();
  assert.deepEqual(
    listeners(),
    before.map((count) => count + 1),
    'taken back',
  );
  process.emit('SIGHUP', 'SIGHUP');
  assert.equal(third.signal.aborted, true);
  assert.deepEqual(left, [], 'a signal is the running watch’s, not a leave');
  third.dispose();
  await sleep(150);
  assert.deepEqual(listeners(), before);
});

test('after its clean-up, a stopped run still counts a late signal: a second is words, a third leaves with the first exit code', async () => {
  const before = listeners();
  const said: string[] = [];
  const left: [number, string][] = [];
  const interrupts = watchInterrupts(
    (line) => said.push(line),
    (code, message) => left.push([code, message]),
    100,
  );
  process.emit('SIGHUP', 'SIGHUP');
  assert.equal(interrupts.signal.aborted, true);
  // The clean-up is done: the kernel's hang-up was taken, the shell's comes now.
  interrupts.dispose();
  assert.deepEqual(
    listeners(),
    before.map((count) => count + 1),
    'still listening',
  );
  process.emit('SIGHUP', 'SIGHUP');
  assert.match(said.at(-1) ?? '', /SIGHUP received, a second signal/);
  assert.deepEqual(left, []);
  process.emit('SIGINT', 'SIGINT');
  assert.equal(left.length, 1);
  assert.equal(left[0]?.[0], 129, 'the first signal’s exit code');
  await sleep(200);
  assert.deepEqual(listeners(), before, 'the listeners go once late signals have had their time');
});

test("a server error the run meets just before its helper's death is known ends with the helper's line; a usage error does not wait for one", async () => {
  const interrupts = watchInterrupts(
    () => {},
    () => assert.fail('left'),
  );
  try {
    // A node's socket closes at once; its keeper's exit, which names it, comes some ms later.
    const lost = new AbortController();
    const news = new ServerGoneError('a node of the embedded cluster (redis://127.0.0.1:1) died during the run');
    setTimeout(() => lost.abort(news), 50);
    await assert.rejects(
      underHelper(lost.signal, interrupts, async () => {
        throw serverError('lost the connection to the server at redis://127.0.0.1:1');
      }),
      (err) => err === news,
    );
    // Nothing to wait for: a usage error is the run's own, at once, and a helper that never dies leaves a server error as it is.
    const quiet = new AbortController();
    await assert.rejects(
      underHelper(quiet.signal, interrupts, async () => {
        throw usageError('refused');
      }),
      /refused/,
    );
    await assert.rejects(
      underHelper(quiet.signal, interrupts, async () => {
        throw serverError('the server at redis://127.0.0.1:1 is out of memory');
      }),
      /out of memory/,
    );
  } finally {
    interrupts.dispose();
  }
});

test("a helper's death that takes a failed run's place still names what --keep kept before it", async () => {
  const interrupts = watchInterrupts(
    () => {},
    () => assert.fail('left'),
  );
  try {
    const kept = 'kept: queue emq-keep-1 on redis://127.0.0.1:1 (emq-race clean --url redis://127.0.0.1:1 --queue emq-keep-1)';
    const lost = new AbortController();
    const news = serverError("the latency proxy's thread failed: gone; the race's connections through it are lost");
    lost.abort(news);
    const failed = serverError(`lost the connection to the server at redis://127.0.0.1:1; ${kept}`);
    failed.leftBehind = kept;
    await assert.rejects(
      underHelper(lost.signal, interrupts, async () => {
        throw failed;
      }),
      (err) => err === news,
    );
    assert.equal(news.message, `the latency proxy's thread failed: gone; the race's connections through it are lost; ${kept}`);
    assert.equal(news.leftBehind, kept, 'said again by an error that takes its place in turn');
    // The run's own error, when no helper died, is left as it was.
    const quiet = new AbortController();
    await assert.rejects(
      underHelper(quiet.signal, interrupts, async () => {
        throw usageError('refused');
      }),
      (err) => err instanceof Error && err.message === 'refused' && !('leftBehind' in err && err.leftBehind),
    );
  } finally {
    interrupts.dispose();
  }
});

test("a server error is given its time for a helper's news once, however many layers ask on its way out", async () => {
  const never = new AbortController().signal;
  const err = serverError('lost the connection to the server at redis://127.0.0.1:1');
  const first = helperNews(err, never).then(() => 'first');
  // The second layer to ask (the session, after underHelper) does not wait again: it is done
  // while the first wait still runs.
  const second = helperNews(err, never).then(() => 'second');
  assert.equal(await Promise.race([first, second]), 'second');
  await first;
});

test('a timeout inside AbortSignal.any fires however often garbage is collected meanwhile', async () => {
  // Node's own gc(), in a context made after the flag: on Node 20 an AbortSignal.timeout here
  // would be collected at the first gc() and the combined signal would never abort.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const combined = AbortSignal.any([new AbortController().signal, timeoutSignal(200)]);
  for (let waited = 0; waited < 5000 && !combined.aborted; waited += 20) {
    gc();
    await sleep(20);
  }
  assert.equal(combined.aborted, true, 'the combined signal never timed out');
  assert.equal((combined.reason as Error).name, 'TimeoutError');
});

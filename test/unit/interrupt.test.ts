/**
 * The signal counting of src/shared/interrupt.ts, with the signals emitted on the process (its listeners
 * run as a real signal runs them, and nothing is sent to the test's own process).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServerGoneError, serverError, usageError } from '../../src/shared/errors.js';
import { underHelper, watchInterrupts } from '../../src/shared/interrupt.js';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const listeners = (): number[] => SIGNALS.map((signal) => process.listenerCount(signal));

test('a run no signal stopped stops listening as it is disposed', () => {
  const before = listeners();
  const interrupts = watchInterrupts(
    () => {},
    () => assert.fail('left'),
  );
  assert.deepEqual(
    listeners(),
    before.map((count) => count + 1),
  );
  interrupts.dispose();
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

/**
 * The signal counting of src/shared/interrupt.ts, with the signals emitted on the process (its listeners
 * run as a real signal runs them, and nothing is sent to the test's own process).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { watchInterrupts } from '../../src/shared/interrupt.js';

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

/**
 * The race every library's run shares (src/libraries/race.ts), on callers made in memory: the
 * error a failed race ends with is the first caller's to fail, in time, never the abort the race
 * itself sent the others; a BUSY reply while the callers run the library's own script says so in
 * words; and 32 callers waiting at once on the signal that stops them are no leak to Node.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmqError, describeServerError } from '../../src/shared/errors.js';
import { raceCallers, raceFailure, type Caller } from '../../src/libraries/race.js';

const BUSY = 'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.';

/** A caller that waits between its calls, as Bee-Queue's timer callers do: until the race stops it. */
function waiting(): Caller {
  return {
    commands: 0,
    async check(stopped) {
      await sleep(60_000, undefined, { signal: stopped });
      return [];
    },
  };
}

/** A caller whose check fails after `ms` with `message`. */
function failing(ms: number, message: string): Caller {
  return {
    commands: 1,
    async check() {
      await sleep(ms);
      throw new Error(message);
    },
  };
}

test('a failed race throws the first caller to fail, not the abort of a caller listed before it', async () => {
  const callers = [waiting(), waiting(), failing(5, 'ERR the real failure')];
  await assert.rejects(raceCallers(callers, 10, new AbortController().signal, 100), (err: Error) => {
    assert.equal(err.message, 'ERR the real failure');
    return true;
  });
});

test('of two failures, the earlier in time is the cause, whatever their order in the list', async () => {
  const callers = [failing(40, 'ERR second'), failing(5, 'ERR first')];
  await assert.rejects(raceCallers(callers, 10, new AbortController().signal, 100), /ERR first/);
});

test("BUSY while the callers run the library's own script: the script held the server past busy-reply-threshold, in words, exit 3", async () => {
  const callers = [waiting(), failing(5, BUSY)];
  await assert.rejects(raceCallers(callers, 10, new AbortController().signal, 100, "Bee-Queue's own checkStalledJobs script"), (err: unknown) => {
    assert.ok(err instanceof EmqError);
    assert.equal(err.exitCode, 3);
    assert.match(
      err.message,
      /^Bee-Queue's own checkStalledJobs script held the server past its busy-reply-threshold, and the server refused other calls with BUSY meanwhile\. That is a finding in itself/,
    );
    assert.doesNotMatch(err.message, /aborted/);
    return true;
  });
  // A port's callers run no script of the library's: BUSY is left as the server said it.
  const plain = new Error(BUSY);
  assert.equal(raceFailure(plain, undefined), plain);
  const other = new Error('ERR other');
  assert.equal(raceFailure(other, 'x'), other);
});

test("the run's heartbeat refused with BUSY first while a caller's library script held the server: the script is named, not a generic BUSY", async () => {
  const outside = new AbortController();
  const raced = raceCallers([waiting(), waiting()], 10, outside.signal, 100, "Bee-Queue's own checkStalledJobs script");
  setTimeout(() => outside.abort(describeServerError(new Error(BUSY), 'redis://h:1')), 5);
  await assert.rejects(
    raced,
    (err: unknown) =>
      err instanceof EmqError &&
      err.exitCode === 3 &&
      /^Bee-Queue's own checkStalledJobs script held the server past its busy-reply-threshold/.test(err.message),
  );
});

test('the run stopped from outside: its reason, not a caller it stopped', async () => {
  const outside = new AbortController();
  const reason = new Error('interrupted');
  const raced = raceCallers([waiting(), waiting()], 10, outside.signal, 100);
  setTimeout(() => outside.abort(reason), 5);
  await assert.rejects(raced, (err: unknown) => err === reason);
});

test('32 callers waiting at once on the signal that stops them: no MaxListenersExceededWarning', async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  try {
    const callers = [...Array.from({ length: 32 }, waiting), failing(20, 'ERR stop')];
    await assert.rejects(raceCallers(callers, 10, new AbortController().signal, 100), /ERR stop/);
    // Warnings are emitted on the next tick.
    await sleep(10);
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(
    warnings.filter((w) => /MaxListeners/.test(w)),
    [],
  );
});

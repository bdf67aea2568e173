/**
 * The explain command's pure parts: schedule parsing and its errors, the readout's arithmetic,
 * the order of two script calls as told by their replies, and how replies are printed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EmqError, ExitCode } from '../../src/shared/errors.js';
import { orderAsRun } from '../../src/explain/atomic-replay.js';
import { counterReadout } from '../../src/explain/counter-race.js';
import { isCleanReadout, readoutOf } from '../../src/explain/readout.js';
import { formatReply } from '../../src/server/command-text.js';
import { wrap } from '../../src/shared/text.js';
import { DEFAULT_SCHEDULE, SERIAL_SCHEDULE, formatEntry, parseSchedule, replayTurns } from '../../src/explain/schedule.js';
import type { WireStep } from '../../src/explain/wire.js';

function scheduleError(raw: string): string {
  try {
    parseSchedule(raw);
  } catch (err) {
    assert.ok(err instanceof EmqError, 'a usage error, not a crash');
    assert.equal(err.exitCode, ExitCode.usage);
    assert.ok(!err.message.includes('\n'), 'one line');
    assert.match(err.message, /^--schedule: /);
    return err.message;
  }
  assert.fail(`${raw} was accepted`);
}

test('a schedule without dead-letter steps gets each right after its write', () => {
  const turns = replayTurns(parseSchedule(SERIAL_SCHEDULE)).map(formatEntry);
  assert.deepEqual(turns, [...SERIAL_SCHEDULE.split(',').slice(0, 5), 'A:dead-letter', ...SERIAL_SCHEDULE.split(',').slice(5), 'B:dead-letter']);
  const named = parseSchedule(`${DEFAULT_SCHEDULE},B:dead-letter,A:dead-letter`);
  assert.deepEqual(replayTurns(named).map(formatEntry), named.map(formatEntry), 'named dead-letter steps stay where they are');
});

test('the default schedule interleaves both sweeps step by step', () => {
  const entries = parseSchedule(DEFAULT_SCHEDULE);
  assert.equal(entries.length, 10);
  assert.deepEqual(entries.slice(0, 4), [
    { sweep: 'A', step: 'detect' },
    { sweep: 'B', step: 'detect' },
    { sweep: 'A', step: 'probe' },
    { sweep: 'B', step: 'probe' },
  ]);
  assert.equal(entries.map(formatEntry).join(','), DEFAULT_SCHEDULE);
});

test('the serial schedule runs A to the end before B starts', () => {
  const entries = parseSchedule(SERIAL_SCHEDULE);
  assert.deepEqual(
    entries.slice(0, 5).map((e) => e.sweep),
    ['A', 'A', 'A', 'A', 'A'],
  );
  assert.deepEqual(
    entries.slice(5).map((e) => e.sweep),
    ['B', 'B', 'B', 'B', 'B'],
  );
});

test('spaces around items and lower-case sweep names are accepted', () => {
  const entries = parseSchedule(' a:detect, A:probe ,A:move,A:read,A:write,B:detect,B:probe,B:move,B:read,b:WRITE ');
  assert.equal(entries.map(formatEntry).join(','), SERIAL_SCHEDULE);
});

test('an item not shown (it may be a password) is named by its place in the list, and an empty one says so', () => {
  assert.equal(
    scheduleError('A:detect,,B:detect'),
    `--schedule: item 2 of 3 is empty (two commas in a row, or one at an end); expected SWEEP:STEP items such as ${DEFAULT_SCHEDULE}`,
  );
  assert.match(scheduleError('A:detect,'), /^--schedule: item 2 of 2 is empty/);
  const hidden = scheduleError('A:detect;B:detect');
  assert.match(hidden, /^--schedule: item 1 of 1, the value given \(not shown: it may be a password\), is not SWEEP:STEP/);
  assert.doesNotMatch(hidden, /B:detect/);
  assert.match(
    scheduleError('A:detect,hunter2:s3cretpw'),
    /^--schedule: item 2 of 2, the value given \(not shown: it may be a password\), names another sweep/,
  );
});

test('bad schedules are one usage error that says what is wrong', () => {
  assert.match(scheduleError(''), /is empty/);
  assert.match(scheduleError('A-detect'), /is not SWEEP:STEP/);
  assert.match(scheduleError('C:detect'), /names sweep "C"; the sweeps are A and B/);
  assert.match(scheduleError('A:jump'), /names step "jump"; the loop's steps are detect, probe, move, read, write, then dead-letter/);
  assert.match(scheduleError('A:probe,A:detect'), /A:probe comes before A:detect/);
  assert.match(scheduleError('A:detect,A:detect'), /A:detect appears twice/);
  assert.match(scheduleError('A:detect,A:probe,A:move,A:read,A:write'), /B:detect is missing/);
  assert.match(scheduleError('A:detect,A:probe,A:move,A:read,B:detect,B:probe,B:move,B:read,B:write'), /A:write is missing/);
  assert.match(
    scheduleError('A:detect,A:probe,A:read,A:move,A:write,B:detect,B:probe,B:move,B:read,B:write'),
    /A:read comes before A:move/,
    "the old read-first order is not the page's",
  );
  assert.match(scheduleError('A:detect,A:probe,A:move,A:read,A:dead-letter,A:write'), /A:dead-letter comes before A:write/);
});

test('readout: two moves and one increment lose one; one move and one increment lose none; a rise beyond the moves shows', () => {
  const raced = readoutOf({ pendingEntries: 2, inActive: false, inDead: false, stalled: 1 }, 2, 0);
  assert.deepEqual(raced, {
    recoverCount: 2,
    pendingEntries: 2,
    stalled: 1,
    expectedStalled: 2,
    realStalled: 1,
    lostIncrements: 1,
    extraIncrements: 0,
    overcountedStalls: 0,
    endedIn: ['pending'],
  });
  const extra = readoutOf({ pendingEntries: 1, inActive: false, inDead: false, stalled: 3 }, 1, 0);
  assert.equal(extra.expectedStalled, 1);
  assert.equal(extra.extraIncrements, 2, 'an extra increment is not clamped away');
  assert.equal(extra.overcountedStalls, 2, 'one real stall, counted three times');
  assert.equal(isCleanReadout(extra), false);
  assert.equal(isCleanReadout(raced), false);
  const clean = readoutOf({ pendingEntries: 1, inActive: false, inDead: false, stalled: 1 }, 1, 0);
  assert.equal(clean.lostIncrements, 0);
  assert.equal(isCleanReadout(clean), true);
  const both = readoutOf({ pendingEntries: 1, inActive: false, inDead: true, stalled: 5 }, 2, 3);
  assert.deepEqual(both.endedIn, ['pending', 'dead']);
  assert.equal(both.lostIncrements, 0);
  assert.equal(isCleanReadout(both), false);
});

test('counter readout: expected is the increments made, reached what the field gained; a loss and a gain both show', () => {
  assert.deepEqual(counterReadout(0, 1, 2), { expected: 2, reached: 1, lost: 1, extra: 0 });
  assert.deepEqual(counterReadout(4, 6, 2), { expected: 2, reached: 2, lost: 0, extra: 0 });
  assert.deepEqual(counterReadout(0, 3, 2), { expected: 2, reached: 3, lost: 0, extra: 1 }, 'an extra increment is not clamped away');
  assert.deepEqual(counterReadout(0, 1, 1), { expected: 1, reached: 1, lost: 0, extra: 0 });
});

test('the call that moved the job is put first, whichever sweep sent it', () => {
  const step = (sweep: 'A' | 'B', reply: string[]): WireStep => ({ sweep, step: 'sweep', commands: [['EVALSHA']], replies: [reply] });
  assert.deepEqual(
    orderAsRun([step('A', []), step('B', ['1'])], '1').map((s) => s.sweep),
    ['B', 'A'],
  );
  assert.deepEqual(
    orderAsRun([step('A', ['1']), step('B', [])], '1').map((s) => s.sweep),
    ['A', 'B'],
  );
});

test('replies print the way redis-cli prints them; long lines wrap at spaces', () => {
  assert.equal(formatReply(null), '(nil)');
  assert.equal(formatReply(0), '(integer) 0');
  assert.equal(formatReply('0'), '"0"');
  assert.equal(formatReply([]), '(empty array)');
  assert.equal(formatReply(['1', '2']), '1) "1" 2) "2"');
  assert.deepEqual(wrap('aaa bbb ccc', 7), ['aaa bbb', '  ccc']);
  // A number keeps its unit: the break moves to the space before the number, where there is one.
  assert.deepEqual(wrap('latency 0, 4 ms → 4.13 ms', 13), ['latency 0,', '  4 ms →', '  4.13 ms']);
});

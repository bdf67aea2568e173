/**
 * explain's modes come from the strategy table's `replay` trait: its `both`, its order (the loop's
 * replay first, then the atomic one's) and the modes it refuses, with a mode defined here to show
 * that a new entry in the table alone is replayed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EmqError, ExitCode } from '../../src/shared/errors.js';
import { parseExplainModes } from '../../src/cli/explain-command.js';
import { STRATEGIES, modes, registerStrategy, replayedModes, replayOf } from '../../src/sweepers/strategies.js';

test("explain's modes are the table's modes with a replay, the loop's replay first", () => {
  const withReplay = modes().filter((mode) => STRATEGIES[mode].replay !== undefined);
  assert.deepEqual([...replayedModes()].sort(), [...withReplay].sort());
  const kinds = replayedModes().map((mode) => replayOf(mode));
  assert.ok(kinds.lastIndexOf('loop') < kinds.indexOf('atomic'), kinds.join(','));
  assert.deepEqual(parseExplainModes('both'), replayedModes());
  assert.deepEqual(parseExplainModes('atomic,loop'), ['atomic', 'loop']);
  assert.equal(replayOf('no-such-mode'), undefined);
});

test('a mode without a replay is refused by name, and an unknown word as no mode', () => {
  const refused = (raw: string): string => {
    try {
      parseExplainModes(raw);
    } catch (err) {
      assert.ok(err instanceof EmqError);
      assert.equal(err.exitCode, ExitCode.usage);
      return err.message;
    }
    assert.fail(`${raw} was accepted`);
  };
  const unreplayed = modes().find((mode) => replayOf(mode) === undefined);
  assert.ok(unreplayed, 'the table has a mode explain does not replay');
  assert.match(refused(unreplayed), new RegExp(`"${unreplayed}" is a mode explain cannot replay; explain replays ${replayedModes().join(', ')}, or both`));
  assert.match(refused('nope'), /"nope" is not a mode/);
});

test('a mode added to the table with a replay trait is in explain --mode both, after the loop', () => {
  const undo = registerStrategy('lease', { ...STRATEGIES.atomic, summary: 'a mode defined by a test', replay: 'atomic' });
  try {
    const both = parseExplainModes('both');
    assert.ok(both.includes('lease' as never), JSON.stringify(both));
    assert.equal(replayOf(both[0] ?? ''), 'loop');
    assert.deepEqual(parseExplainModes('lease'), ['lease']);
  } finally {
    undo();
  }
  assert.ok(!parseExplainModes('both').includes('lease' as never));
});

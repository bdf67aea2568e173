/**
 * A user's sweep script that fails while running: the server's reply said in the script writer's
 * words, from the replies Redis 7 and Valkey 8 give (their trailer is the same).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scriptFailureWords } from '../../src/sweepers/script.js';

const SHA = '0084559df4804038200d19c35e5dadd6e40014b6';

test("a Lua error, an unknown command and a reply's own code: the line of the script, no SHA1 or bare ERR", () => {
  assert.equal(
    scriptFailureWords(`ERR user_script:2: attempt to index local 'x' (a nil value) script: ${SHA}, on @user_script:2.`),
    "attempt to index local 'x' (a nil value), at line 2 of the script",
  );
  assert.equal(
    scriptFailureWords(`ERR Unknown Redis command called from script script: ${SHA}, on @user_script:1.`),
    'Unknown Redis command called from script, at line 1 of the script',
  );
  assert.equal(
    scriptFailureWords(`WRONGTYPE Operation against a key holding the wrong kind of value script: ${SHA}, on @user_script:14.`),
    'WRONGTYPE Operation against a key holding the wrong kind of value, at line 14 of the script',
  );
});

test('a reply without the trailer stays as it is, its first line only', () => {
  assert.equal(scriptFailureWords('ERR something else\nand more'), 'ERR something else');
});

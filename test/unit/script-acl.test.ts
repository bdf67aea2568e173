/** Naming the command an ACL refused inside a script: Valkey's error, Redis 7's, and the tool's own files. */
import { functionLibrarySource, librarySourceLine } from '../../src/lua/function-source.js';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { describeServerError } from '../../src/shared/errors.js';
import { commandOnLine, scriptAclRefusal, scriptUnknownCommand } from '../../src/lua/script-acl.js';
import { SWEEP_STALLED_LUA, luaSource } from '../../src/lua/registry.js';

const RELEASE = luaSource('release-stalled');
const SEED = luaSource('seed-jobs');
const SEED_SHA = createHash('sha1').update(SEED).digest('hex');
const TEMPLATE = luaSource('sweep-stalled-function');
const RELEASE_SHA = createHash('sha1').update(RELEASE).digest('hex');
const lineOf = (source: string, text: string): number => source.split('\n').findIndex((l) => l.includes(text)) + 1;

describe('script ACL refusals', () => {
  test('a line that calls one command names it; a line with none or two does not', () => {
    assert.equal(commandOnLine("  local id = rcall('LINDEX', KEYS[2], 0)", 1), 'LINDEX');
    assert.equal(commandOnLine("return redis.call('hincrby', KEYS[1], ARGV[1], 1)", 1), 'HINCRBY');
    assert.equal(commandOnLine('local x = 1', 1), undefined);
    assert.equal(commandOnLine("rcall('A') rcall('B')", 1), undefined);
    assert.equal(commandOnLine('', 9), undefined);
  });

  test("Valkey's error names the command itself", () => {
    const refusal = scriptAclRefusal(
      `ERR ACL failure in script: User u has no permissions to run the 'lpos' command script: ${'ab'.repeat(20)}, on @user_script:32.`,
    );
    assert.deepEqual(refusal, { command: 'LPOS', refused: 'command', script: 'ab'.repeat(20), line: 32 });
  });

  test("Redis 7's error gives only the line: read from the tool's own script with that SHA1", () => {
    const line = lineOf(RELEASE, "rcall('LINDEX'");
    const message = `ERR The user executing the script can't run this command or subcommand script: ${RELEASE_SHA}, on @user_script:${line}.`;
    assert.deepEqual(scriptAclRefusal(message), { command: 'LINDEX', refused: 'command', script: 'release-stalled.lua', line });
    const error = describeServerError(new Error(message), 'redis://u:***@127.0.0.1:6379');
    assert.equal(error.exitCode, 3);
    assert.match(error.message, /^permission denied on redis:\/\/u:\*\*\*@127\.0\.0\.1:6379 \(LINDEX, called by release-stalled\.lua line \d+\): /);
  });

  test("a script that is not the tool's: still permission denied, with the script and line", () => {
    const message =
      "ERR The user executing the script can't run this command or subcommand script: 0123456789abcdef0123456789abcdef01234567, on @user_script:3.";
    assert.deepEqual(scriptAclRefusal(message), { refused: 'command', script: '0123456789abcdef0123456789abcdef01234567', line: 3 });
    assert.match(
      describeServerError(new Error(message), 'here').message,
      /^permission denied on here \(a command, called by 0123456789abcdef0123456789abcdef01234567 line 3\)/,
    );
  });

  test('a line of the function library is read from the library the server compiled, and named in the file it came from', () => {
    const library = functionLibrarySource('emq_race_abc123', 'emq_race_sweep_abc123');
    const line = lineOf(library, "rcall('HINCRBY'");
    const message = `ERR The user executing the script can't run this command or subcommand script: emq_race_sweep_abc123, on @user_function:${line}.`;
    assert.deepEqual(scriptAclRefusal(message), {
      command: 'HINCRBY',
      refused: 'command',
      script: 'sweep-stalled.lua',
      line: lineOf(SWEEP_STALLED_LUA, "rcall('HINCRBY'"),
    });
  });

  test('library lines map back to the template before, inside and after the sweep script', () => {
    const library = functionLibrarySource('emq_race_abc123', 'emq_race_sweep_abc123').split('\n');
    const template = TEMPLATE.split('\n');
    const sweep = SWEEP_STALLED_LUA.split('\n');
    for (let line = 1; line <= library.length; line++) {
      const place = librarySourceLine(line);
      const text = (place.file === 'sweep-stalled.lua' ? sweep : template)[place.line - 1];
      // Only the two name lines differ from their files: the names are filled in.
      if (!/__LIBRARY__|__FUNCTION__/.test(text ?? '')) assert.equal(library[line - 1], text, `library line ${line} is ${place.file} line ${place.line}`);
    }
  });

  test("a key the user's patterns refuse inside a script, as Redis 7 and Valkey 8 word it: the command read from the line, the key named as what was refused", () => {
    const line = lineOf(RELEASE, "rcall('LINDEX'");
    for (const message of [
      `ERR The user executing the script can't access at least one of the keys mentioned in the command arguments script: ${RELEASE_SHA}, on @user_script:${line}.`,
      `ERR ACL failure in script: No permissions to access a key script: ${RELEASE_SHA}, on @user_script:${line}.`,
    ]) {
      assert.deepEqual(scriptAclRefusal(message), { command: 'LINDEX', refused: 'key', script: 'release-stalled.lua', line });
      assert.match(
        describeServerError(new Error(message), 'here').message,
        /^permission denied on here \(LINDEX, called by release-stalled\.lua line \d+\): this user may not touch a key LINDEX names there \(its ACL key patterns: the run's keys are all under emq:\{QUEUE\}:\); see "Least privilege"/,
      );
    }
  });

  test('other errors are not refusals', () => {
    assert.equal(scriptAclRefusal('WRONGTYPE Operation against a key holding the wrong kind of value'), undefined);
    assert.equal(scriptAclRefusal("NOPERM this user has no permissions to run the 'zadd' command"), undefined);
  });

  test("a command renamed away, called inside the tool's script: named from that line, in Redis 7.0's words and Valkey's", () => {
    const line = lineOf(SEED, "rcall('HSET'");
    assert.ok(line > 0, 'seed-jobs.lua calls HSET');
    for (const words of ['Unknown Redis command called from script', 'Unknown command called from script']) {
      const message = `ERR ${words} script: ${SEED_SHA}, on @user_script:${line}.`;
      assert.deepEqual(scriptUnknownCommand(message), { command: 'HSET', script: 'seed-jobs.lua', line });
      assert.equal(
        describeServerError(new Error(message), 'redis://h:1').message,
        `the server at redis://h:1 does not know the command HSET (called by seed-jobs.lua line ${line}; renamed or disabled in its configuration, as some hosted services do, or a server too old for it): the tool needs it; see "Least privilege" in docs/shared-servers.md for every command the tool sends`,
      );
    }
    // Another script's: the line says where, not which command.
    const foreign = describeServerError(new Error(`ERR Unknown command called from script script: ${'cd'.repeat(20)}, on @user_script:4.`), 'redis://h:1');
    assert.match(foreign.message, /^the server at redis:\/\/h:1 does not know a command \(called by c[dc]+ line 4; renamed or disabled/);
    assert.equal(scriptUnknownCommand("ERR unknown command 'hset', with args beginning with: "), undefined);
  });
});

/** Flag parsing and the checks across flags: every bad value is a usage error naming its flag. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EmqError, ExitCode } from '../../src/shared/errors.js';
import { queueKeys, queuePattern } from '../../src/queue/keys.js';
import { randomQueueName } from '../../src/queue/keys.js';
import { checkRaceOptions, msFlag, parseIntFlag, parseModes, parseQueueName } from '../../src/cli/options.js';
import { literal } from '../helpers/literal.js';
import { useColor } from '../../src/cli/race-output.js';
import { parseExpectation } from '../../src/cli/expect.js';
import { parseServerInfo, parseServerUrl, redactUrl } from '../../src/server/connection.js';
import { LIMITS, type RaceOptions } from '../../src/shared/model.js';
import { chooseTarget } from '../../src/server/session.js';

function usage(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof EmqError);
    assert.equal(err.exitCode, ExitCode.usage);
    assert.match(err.message, pattern);
    return true;
  });
}

test('integer flags accept whole numbers within limits only', () => {
  assert.equal(parseIntFlag('--jobs', LIMITS.jobs, '1000'), 1000);
  assert.equal(parseIntFlag('--jobs', LIMITS.jobs, '+7'), 7);
  for (const bad of ['abc', '1.5', '', '1e3', '1_000', '1,000', '0x10'])
    usage(() => parseIntFlag('--jobs', LIMITS.jobs, bad), /^--jobs: .* is not a whole number; expected 1 to 10000000$/);
  for (const bad of ['0', '-3', '10000001', '99999999999999999999'])
    usage(() => parseIntFlag('--jobs', LIMITS.jobs, bad), /^--jobs: .* is out of range; expected 1 to 10000000$/);
});

test('numeric flags read the value as typed: spaces around a number are refused, not trimmed', () => {
  for (const bad of [' 7', '7 ', ' 7 ', '7\t', '\n7'])
    usage(
      () => parseIntFlag('--jobs', LIMITS.jobs, bad),
      new RegExp(`^--jobs: ${literal(JSON.stringify(bad))} is not a whole number; expected 1 to 10000000$`),
    );
  const latency = msFlag('--latency', LIMITS.latency);
  assert.equal(latency('2'), 2);
  assert.equal(latency('0.5'), 0.5);
  assert.equal(latency('.5'), 0.5);
  for (const bad of [' 2', '2 ', ' 0.5 ', '1e3', '1_000'])
    usage(
      () => latency(bad),
      new RegExp(`^--latency: ${literal(JSON.stringify(bad))} is not a number of milliseconds; expected 0 to 1000 \\(fractions allowed, as in 0\\.5\\)$`),
    );
});

test('modes: single, both, comma lists; unknown ones are refused', () => {
  assert.deepEqual(parseModes('atomic'), ['atomic']);
  assert.deepEqual(parseModes('both'), ['atomic', 'loop']);
  assert.deepEqual(parseModes('loop,atomic,loop'), ['loop', 'atomic']);
  usage(() => parseModes('fast'), /^--mode: "fast" is not a mode/);
  usage(() => parseModes('both,loop'), /^--mode: both stands alone \(--mode both\); in a list, name the modes themselves, as in atomic,loop$/);
  // A name every object inherits is no set: refused as a mode it is not.
  usage(() => parseModes('loop,constructor'), /^--mode: "constructor" is not a mode/);
  usage(() => parseModes('constructor'), /^--mode: "constructor" is not a mode/);
  // A set named alone keeps its meaning with spaces around it, as a list's parts do.
  assert.deepEqual(parseModes(' both '), ['atomic', 'loop']);
});

test('modes: an empty item of the list, or no mode at all, is said as that', () => {
  for (const raw of ['loop,,claim', 'atomic,', ',loop', ' , '])
    usage(() => parseModes(raw), /^--mode: an empty mode in the list; separate modes with single commas, as in atomic,loop$/);
  for (const raw of ['', ' ']) usage(() => parseModes(raw), /^--mode: no mode given; name one, or several separated by commas, as in atomic,loop$/);
});

test('queue names', () => {
  assert.equal(parseQueueName('my_queue-1'), 'my_queue-1');
  for (const bad of ['a{b}', 'a*', 'a b', 'a?', '', 'x'.repeat(101), 'a:b', 'a[1]', 'a\\b']) usage(() => parseQueueName(bad), /^--queue:/);
  assert.match(randomQueueName(), /^race-[0-9a-f]{8}$/);
});

test('cross-flag checks', () => {
  const base: RaceOptions = {
    modes: ['atomic', 'loop'],
    jobs: 10,
    sweepers: 2,
    batch: 10,
    maxStalled: 3,
    stalledBefore: 0,
    probeDelayMs: 0,
    queue: undefined,
    keep: false,
    json: false,
    expect: undefined,
  };
  checkRaceOptions(base);
  checkRaceOptions({ ...base, stalledBefore: 2 });
  usage(() => checkRaceOptions({ ...base, stalledBefore: 3 }), /^--stalled-before: 3 must be below --max-stalled/);
  usage(
    () => checkRaceOptions({ ...base, modes: ['atomic'], expect: parseExpectation('race') }),
    /^--expect race: expects the loop to race and every other mode to be clean, and needs a loop run/,
  );
  usage(() => checkRaceOptions({ ...base, modes: ['atomic'], expect: parseExpectation('loop=race') }), /^--expect loop=race: loop is not among the modes run/);
});

test('keys share one hash tag and the SCAN pattern is escaped', () => {
  const keys = queueKeys('race-ab12');
  assert.equal(keys.active, 'emq:{race-ab12}:active');
  assert.equal(keys.job(7), 'emq:{race-ab12}:job:7');
  assert.equal(keys.prefix, 'emq:{race-ab12}:');
  assert.equal(queuePattern(keys), 'emq:\\{race-ab12\\}:*');
});

test('URLs: schemes, redaction', () => {
  assert.equal(parseServerUrl('redis://127.0.0.1:6380').display, 'redis://127.0.0.1:6380');
  assert.equal(parseServerUrl('redis://user:secret@host:1/2').display, 'redis://user:***@host:1/2');
  assert.equal(redactUrl('redis://:secret@host:1'), 'redis://:***@host:1');
  assert.ok(!redactUrl('not a url://u:secret@h').includes('secret'));
  usage(() => parseServerUrl('http://host:1'), /^--url: scheme "http" is not supported/);
  // A lone word may be the password given by itself: it is not echoed.
  usage(() => parseServerUrl('nonsense'), /^--url: the value given \(not shown: it may be a password\) is not a URL/);
  // An empty one (`--url=`) is said to be empty.
  usage(() => parseServerUrl(''), /^--url: an empty value is not a URL; expected redis:\/\//);
  // An address without its scheme gets the URL it most likely meant, never with its password.
  usage(() => parseServerUrl('localhost:6379'), /^--url: "localhost:6379" has no scheme; did you mean redis:\/\/localhost:6379\?$/);
  usage(
    () => parseServerUrl('app:s3cret@db.example:6380/2'),
    /^--url: "app:\*\*\*@db\.example:6380\/2" has no scheme; did you mean redis:\/\/app:\*\*\*@db\.example:6380\/2\?$/,
  );
  usage(() => parseServerUrl('redis://h:1/abc'), /^--url: the database/);
  // A mistyped scheme is taken off before the guess: the user stays the user, the password hidden.
  for (const typo of ['redis:admin:hunter2@127.0.0.1:6380', 'redis:/admin:hunter2@127.0.0.1:6380', 'redis//admin:hunter2@127.0.0.1:6380']) {
    assert.throws(
      () => parseServerUrl(typo),
      (err: unknown) =>
        err instanceof EmqError &&
        err.exitCode === 2 &&
        / mistypes the scheme; did you mean redis:\/\/admin:\*\*\*@127\.0\.0\.1:6380\?$/.test(err.message) &&
        !err.message.includes('hunter2'),
      typo,
    );
  }
});

test('a URL from REDIS_URL is named so in its errors, not as a --url never given', () => {
  assert.throws(
    () => chooseTarget({}, { REDIS_URL: 'redis:/:hunter2@h:1' }),
    (err: unknown) => err instanceof EmqError && /^REDIS_URL \(no --url given\): /.test(err.message) && !err.message.includes('hunter2'),
  );
  assert.throws(() => chooseTarget({ url: 'redis:/:hunter2@h:1' }, { REDIS_URL: 'redis://h:2' }), /EmqError: --url: /);
});

test('server kind and version come from server_name / valkey_version where present', () => {
  assert.deepEqual(parseServerInfo('# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n'), { kind: 'redis', version: '7.0.15' });
  assert.deepEqual(parseServerInfo('# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n'), { kind: 'valkey', version: '8.0.1' });
});

test('colour: NO_COLOR turns it off, FORCE_COLOR on in a pipe and off as 0 or false, else the terminal decides', () => {
  const colour = (env: Record<string, string>, stdoutIsTty: boolean) => useColor({ env, stdoutIsTty });
  assert.equal(colour({}, true), true);
  assert.equal(colour({}, false), false);
  assert.equal(colour({ NO_COLOR: '1', FORCE_COLOR: '1' }, true), false);
  assert.equal(colour({ FORCE_COLOR: '1' }, false), true);
  assert.equal(colour({ FORCE_COLOR: '0' }, true), false);
  assert.equal(colour({ FORCE_COLOR: 'false' }, true), false);
  // An empty NO_COLOR is not set, as its convention reads it.
  assert.equal(colour({ NO_COLOR: '' }, true), true);
});

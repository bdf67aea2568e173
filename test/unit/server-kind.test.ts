/**
 * Which server the report names, from INFO alone. Most servers that speak the protocol report a
 * redis_version for old clients' sake; each is named by its own field instead. The INFO texts
 * here are written from the fields each server documents (Redict's as redict-server 7.3.6 prints
 * it); only their first lines matter. And the one line for a server that refuses the undeclared
 * keys every sweep script uses.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeServerError, ExitCode } from '../../src/shared/errors.js';
import { parseServerInfo, serverHeadline } from '../../src/server/connection.js';

const info = (...lines: string[]): string => `${lines.join('\r\n')}\r\n`;

test('Redis: its redis_version', () => {
  const redis = info('# Server', 'redis_version:7.0.15', 'redis_git_sha1:00000000', 'redis_mode:standalone', 'executable:/usr/bin/redis-server');
  assert.deepEqual(parseServerInfo(redis), { kind: 'redis', version: '7.0.15' });
});

test('Valkey: server_name and valkey_version, not the redis_version 7.2.4 it also reports', () => {
  assert.deepEqual(parseServerInfo(info('# Server', 'redis_version:7.2.4', 'server_name:valkey', 'valkey_version:8.0.1')), {
    kind: 'valkey',
    version: '8.0.1',
  });
  assert.deepEqual(parseServerInfo(info('# Server', 'redis_version:7.2.4', 'valkey_version:8.0.1')), { kind: 'valkey', version: '8.0.1' });
});

test('Redict: redict_version, which comes before the redis_version 7.2.4 it also reports', () => {
  const redict = info(
    '# Server',
    'redict_version:7.3.6',
    'redict_git_sha1:00000000',
    'redict_git_dirty:0',
    'redict_build_id:2cfaa40daef53ffd',
    'redict_mode:standalone',
    'redis_version:7.2.4',
    'executable:/usr/bin/redict-server',
  );
  const server = parseServerInfo(redict);
  assert.deepEqual(server, { kind: 'redict', version: '7.3.6' });
  assert.equal(serverHeadline({ ...server, url: 'redis://127.0.0.1:6390' }, 'stopped'), 'server: redict 7.3.6 (embedded, now stopped)');
  assert.equal(serverHeadline({ ...server, url: 'redis://127.0.0.1:6390' }), 'server: redict 7.3.6 at redis://127.0.0.1:6390');
});

test('Dragonfly: dragonfly_version, its release tag read as a number', () => {
  const dragonfly = info('# Server', 'redis_version:7.4.0', 'dragonfly_version:df-v1.25.1', 'redis_mode:standalone', 'arch_bits:64', 'multiplexing_api:epoll');
  assert.deepEqual(parseServerInfo(dragonfly), { kind: 'dragonfly', version: '1.25.1' });
});

test('Garnet: garnet_version, not the protocol level in its redis_version', () => {
  const garnet = info(
    '# Server',
    'garnet_version:1.0.58',
    'os:Unix 6.1.0.0',
    'processor_count:2',
    'arch_bits:64',
    'redis_version:7.2.5',
    'redis_mode:standalone',
  );
  assert.deepEqual(parseServerInfo(garnet), { kind: 'garnet', version: '1.0.58' });
});

test('KeyDB: by its executable, or by the section of its own that a whole INFO carries; its redis_version is its own', () => {
  const server = ['# Server', 'redis_version:6.3.4', 'redis_git_sha1:7e7e5e57', 'redis_mode:standalone'];
  assert.deepEqual(parseServerInfo(info(...server, 'executable:/usr/local/bin/keydb-server')), { kind: 'keydb', version: '6.3.4' });
  assert.deepEqual(parseServerInfo(info(...server, 'executable:/data/server', '', '# KeyDB', 'mvcc_depth:0')), { kind: 'keydb', version: '6.3.4' });
  // A folder's name is not the program's.
  assert.deepEqual(parseServerInfo(info(...server, 'executable:/opt/keydb/redis-server')), { kind: 'redis', version: '6.3.4' });
});

test('a server that says nothing of itself is a Redis of unknown version; an unknown server_name does not rename it', () => {
  assert.deepEqual(parseServerInfo(''), { kind: 'redis', version: 'unknown' });
  assert.deepEqual(parseServerInfo(info('# Server', 'server_name:someday', 'redis_version:7.2.0')), { kind: 'redis', version: '7.2.0' });
});

test("a script's undeclared key refused (Dragonfly's default): one line naming the setting that allows it, a server error", () => {
  const refusal = new Error(
    'ERR Error running script (call to f_0c8b5d0e3cbdb0fc3d58a5b0d5b6e0ce4ef6f2d6): @user_script:27: script tried accessing undeclared key, key: emq:{race-1}:job:7',
  );
  const error = describeServerError(refusal, 'redis://127.0.0.1:6379');
  assert.equal(error.exitCode, ExitCode.server);
  assert.ok(!error.message.includes('\n'), error.message);
  assert.match(error.message, /^the server at redis:\/\/127\.0\.0\.1:6379 refuses keys a script does not declare/);
  assert.match(error.message, /--default_lua_flags=allow-undeclared-keys/);
});

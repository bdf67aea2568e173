/** The pure pieces behind the safety checks: memory arithmetic, owner markers, TLS flag rules, error lines. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactUrl } from '../src/server/connection.js';
import { describeServerError, ExitCode } from '../src/errors.js';
import { BYTES_PER_CONNECTION, BYTES_PER_JOB, estimateFootprint, footprintProblem, parseMemoryInfo } from '../src/server/memory-check.js';
import { newOwnerMarker, ownerValue, parseOwnerValue } from '../src/queue/owner-marker.js';
import { tlsSettings } from '../src/server/tls.js';

const MB = 1024 * 1024;

test('estimateFootprint: jobs × bytes per job, plus the admin connection and each sweeper', () => {
  assert.equal(estimateFootprint(1000, 3), 1000 * BYTES_PER_JOB + 4 * BYTES_PER_CONNECTION);
});

test('parseMemoryInfo reads used_memory, maxmemory and the policy from INFO memory', () => {
  const info = '# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:8388608\r\nmaxmemory_human:8.00M\r\nmaxmemory_policy:allkeys-lru\r\n';
  assert.deepEqual(parseMemoryInfo(info), { usedMemory: MB, maxMemory: 8 * MB, policy: 'allkeys-lru' });
});

test('footprintProblem: no limit, a fit, and each kind of policy when it does not fit', () => {
  assert.equal(footprintProblem({ usedMemory: MB, maxMemory: 0, policy: 'noeviction' }, 10_000_000, 256), undefined);
  assert.equal(footprintProblem({ usedMemory: MB, maxMemory: 64 * MB, policy: 'allkeys-lru' }, 1000, 2), undefined);
  const allkeys = footprintProblem({ usedMemory: MB, maxMemory: 8 * MB, policy: 'allkeys-lfu' }, 100_000, 2);
  assert.match(allkeys ?? '', /--jobs 100000 needs about 26\.8 MB .* 7\.0 MB is left .*maxmemory of 8\.0 MB; under maxmemory-policy allkeys-lfu the server would evict other keys/);
  assert.match(footprintProblem({ usedMemory: MB, maxMemory: 8 * MB, policy: 'volatile-ttl' }, 100_000, 2) ?? '', /evict keys that have a TTL/);
  assert.match(footprintProblem({ usedMemory: MB, maxMemory: 8 * MB, policy: 'noeviction' }, 100_000, 2) ?? '', /fail halfway with OOM/);
  // Already over the limit: no negative room in the message.
  assert.match(footprintProblem({ usedMemory: 9 * MB, maxMemory: 8 * MB, policy: 'noeviction' }, 1, 1) ?? '', /only 0\.0 MB is left/);
});

test('owner markers: what a run writes is recognised; anything else is not the tool’s', () => {
  const marker = newOwnerMarker('0123456789abcdef', 2000);
  assert.deepEqual(parseOwnerValue(ownerValue(marker)), marker);
  assert.equal(parseOwnerValue(null), undefined);
  assert.equal(parseOwnerValue('0123456789abcdef'), undefined);
  assert.equal(parseOwnerValue('worker-7'), undefined);
  assert.equal(parseOwnerValue('{"tool":"other","run":"x","jobs":1}'), undefined);
  assert.equal(parseOwnerValue('{"tool":"emq-race","run":"x","jobs":-1}'), undefined);
  assert.equal(parseOwnerValue('{"tool":"emq-race","run":"x","jobs":1.5}'), undefined);
  assert.equal(parseOwnerValue('{"tool":"emq-race",'), undefined);
});

test('TLS flags: only with rediss://, certificate and key together, explicit insecure', () => {
  assert.equal(tlsSettings('redis://h:1', {}), undefined);
  assert.throws(() => tlsSettings('redis://h:1', { tlsInsecure: true }), /--tls-insecure: only applies to a rediss:\/\/ --url/);
  assert.throws(() => tlsSettings('rediss://h:1', { tlsKey: '/etc/hostname' }), /--tls-key: needs --tls-cert/);
  assert.deepEqual(tlsSettings('rediss://h:1', {}), { rejectUnauthorized: true });
  assert.deepEqual(tlsSettings('rediss://h:1', { tlsInsecure: true }), { rejectUnauthorized: false });
});

test('redactUrl hides the password, also in a URL that does not parse', () => {
  assert.equal(redactUrl('redis://u:pw@h:6379/2'), 'redis://u:***@h:6379/2');
  assert.equal(redactUrl('redis://u:pw@h:notaport'), 'redis://u:***@h:notaport');
});

test('describeServerError: NOPERM names the refused command; TLS failures say what to pass', () => {
  const noperm = Object.assign(new Error('NOPERM this user has no permissions to access one of the keys used as arguments'), { command: { name: 'set' } });
  const line = describeServerError(noperm, 'redis://u:***@h:1');
  assert.equal(line.exitCode, ExitCode.server);
  assert.match(line.message, /^permission denied on redis:\/\/u:\*\*\*@h:1 \(SET\): this user has no permissions/);
  const untrusted = Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  assert.match(describeServerError(untrusted, 'rediss://h:1').message, /not signed by a trusted CA .*--tls-ca/);
  assert.match(describeServerError(new Error('Command aborted due to connection close'), 'x').message, /^lost the connection/);
});

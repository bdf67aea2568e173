/** The pure pieces behind the safety checks: owner markers, TLS flag rules, error lines (memory arithmetic: memory-units.test.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactUrl } from '../../src/server/connection.js';
import { describeServerError, ExitCode } from '../../src/errors.js';
import { newOwnerMarker, ownerValue, parseOwnerValue } from '../../src/queue/owner-marker.js';
import { tlsSettings } from '../../src/server/tls.js';

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

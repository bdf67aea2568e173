/** Passwords never appear: not in the table, the JSON, the kept-run lines, clean's output or errors. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { forOneServerKind } from '../helpers/servers.js';

const SECRET = 'Zq7-secret-pw';
const WRONG = 'Wr0ng-secret-pw';

function assertNoSecret(result: CliResult, ...secrets: string[]): void {
  for (const secret of secrets) {
    assert.ok(!result.stdout.includes(secret), `stdout shows ${secret}: ${result.stdout}`);
    assert.ok(!result.stderr.includes(secret), `stderr shows ${secret}: ${result.stderr}`);
  }
}

// The subject is the redaction of text, the same on either server kind: one kind for this file.
forOneServerKind(import.meta.url, 'password redaction', (handle) => {
  let redis: Redis;
  let withPassword: (user: string, password: string) => string;
  before(async () => {
    redis = await connect(parseServerUrl(handle.url));
    await redis.call('ACL', 'SETUSER', 'racer', 'on', `>${SECRET}`, '~*', '+@all');
    withPassword = (user, password) => handle.url.replace('redis://', `redis://${user}:${password}@`);
  });
  after(() => redis?.disconnect());

  test('the right password: JSON, table, kept lines and clean show *** instead', async () => {
    const url = withPassword('racer', SECRET);
    const json = await runCli(['--url', url, '--jobs', '200', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assertNoSecret(json, SECRET);
    const report = JSON.parse(json.stdout) as { server: { url: string } };
    assert.equal(report.server.url, withPassword('racer', '***'));
    const kept = await runCli(['--jobs', '100', '--keep', '--queue', 'race-redact'], { REDIS_URL: url });
    assert.equal(kept.code, 0, kept.stderr);
    assert.match(kept.stdout, /racer:\*\*\*@/);
    assertNoSecret(kept, SECRET);
    const clean = await runCli(['clean', '--url', url, '--all', '--yes']);
    assert.equal(clean.code, 0, clean.stderr);
    assertNoSecret(clean, SECRET);
  });

  test('a wrong password: one line, exit 3, no password', async () => {
    const result = await runCli(['--url', withPassword('racer', WRONG), '--jobs', '100', '--json']);
    assert.equal(result.code, 3);
    assert.match(oneErrorLine(result.stderr) ?? '', /refused the credentials/);
    assertNoSecret(result, WRONG, SECRET);
  });

  test('a password for a server that asks for none, an unreachable port, a malformed URL: no password', async () => {
    const noPassNeeded = await runCli(['--url', handle.url.replace('redis://', `redis://:${WRONG}@`), '--jobs', '50']);
    assert.equal(noPassNeeded.code, 0, noPassNeeded.stderr);
    assert.equal(noPassNeeded.stderr, "emq-race: note: the server's default user needs no password; the one in the URL is not used\n");
    const unreachable = await runCli(['--jobs', '50'], { REDIS_URL: `redis://racer:${WRONG}@127.0.0.1:1` });
    assert.equal(unreachable.code, 3);
    assert.match(oneErrorLine(unreachable.stderr) ?? '', /cannot reach/);
    const malformed = await runCli(['--url', `redis://racer:${WRONG}@127.0.0.1:notaport`]);
    assert.equal(malformed.code, 2);
    for (const result of [noPassNeeded, unreachable, malformed]) assertNoSecret(result, WRONG);
  });
});

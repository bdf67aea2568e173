/**
 * Least privilege, proved on real servers: the ACL line in the README is applied as written; every
 * command the tool sends (recorded with MONITOR, script calls included) passes ACL DRYRUN for that
 * user; every command the line grants is one the tool sent; the tool, `clean --queue` and
 * `clean --all` work under it; and a user missing one permission gets one line naming the command.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../src/server/connection.js';
import { runCli } from './helpers/cli.js';
import { oneErrorLine } from './helpers/cli-process.js';
import { allKeys } from './helpers/keyspace.js';
import { forEachServer } from './helpers/servers.js';
import { fillUnrelated, unrelatedState } from './helpers/unrelated-data.js';

const README = readFileSync(new URL('../../docs/shared-servers.md', import.meta.url), 'utf8');
const PASSWORD = 'acl-test-pw-7Qx';

/** The README's ACL SETUSER line as arguments, with the password filled in. */
function readmeAclRules(): string[] {
  const line = README.split('\n').map((l) => l.trim()).find((l) => l.startsWith('ACL SETUSER emq-race '));
  assert.ok(line, 'README has an ACL SETUSER emq-race line');
  return line.split(/\s+/).slice(3).map((rule) => (rule === '>PASSWORD' ? `>${PASSWORD}` : rule));
}

const userUrl = (url: string, user: string): string => url.replace('redis://', `redis://${user}:${PASSWORD}@`);

/** Commands the rules grant one by one (`+name` or `+name|sub`), lower-case. */
const granted = (rules: readonly string[]): string[] => rules.filter((r) => /^\+[a-z|]+$/.test(r)).map((r) => r.slice(1));

forEachServer('least privilege', (handle) => {
  let admin: Redis;
  before(async () => {
    admin = await connect(parseServerUrl(handle.url));
    await admin.call('ACL', 'SETUSER', 'emq-race', 'reset', ...readmeAclRules());
  });
  after(() => admin?.disconnect());

  test('every command sent is allowed by the README line, and every command it allows is used', async () => {
    await fillUnrelated(admin);
    const unrelated = await unrelatedState(admin);
    const sent: string[][] = [];
    const monitor = await admin.duplicate().monitor();
    monitor.on('monitor', (_time: string, args: string[]) => sent.push(args));
    try {
      const url = userUrl(handle.url, 'emq-race');
      const main = await runCli(['--url', url, '--jobs', '300', '--sweepers', '3', '--max-stalled', '2', '--stalled-before', '0', '--queue', 'race-acl', '--keep', '--json']);
      assert.equal(main.code, 0, main.stderr);
      const one = await runCli(['clean', '--url', url, '--queue', 'race-acl-atomic']);
      assert.equal(one.code, 0, one.stderr);
      const rest = await runCli(['clean', '--url', url, '--all', '--yes']);
      assert.equal(rest.code, 0, rest.stderr);
      assert.match(rest.stdout, /removed queue race-acl-loop/);
      // A claim refused because the queue has keys releases its marker with the script.
      await admin.hset('emq:{race-taken}:job:1', 'state', 'x');
      const refused = await runCli(['--url', url, '--queue', 'race-taken', '--mode', 'atomic']);
      assert.equal(refused.code, 2, refused.stderr);
      await admin.unlink('emq:{race-taken}:job:1');
    } finally {
      // MONITOR lines can trail the last reply a little.
      await admin.ping();
      monitor.disconnect();
    }
    assert.deepEqual(await unrelatedState(admin), unrelated);

    const names = new Set<string>();
    const checked = new Set<string>();
    for (const args of sent) {
      const [command = '', ...rest] = args;
      const name = command.toLowerCase();
      // The test's own commands: its MONITOR and PING, and the key it planted and removed.
      if (['auth', 'monitor', 'ping'].includes(name)) continue;
      if (['hset', 'unlink'].includes(name) && rest[0] === 'emq:{race-taken}:job:1') continue;
      names.add(name === 'script' ? `script|${(rest[0] ?? '').toLowerCase()}` : name);
      const signature = `${name} ${rest.slice(0, 2).join(' ')}`;
      if (checked.has(signature)) continue;
      checked.add(signature);
      const verdict = String(await admin.call('ACL', 'DRYRUN', 'emq-race', ...args));
      assert.equal(verdict, 'OK', `${args.slice(0, 4).join(' ')}: ${verdict}`);
    }
    for (const command of granted(readmeAclRules())) {
      assert.ok(names.has(command), `the README grants ${command}, which the tool never sent (sent: ${[...names].sort().join(' ')})`);
    }
    assert.ok(names.has('evalsha') && names.has('hincrby'), 'script calls and the commands inside them were recorded');
  });

  test('without one needed command: one "permission denied" line naming it, exit 3, nothing left', async () => {
    await admin.call('ACL', 'SETUSER', 'emq-race-nozadd', 'reset', ...readmeAclRules(), '-zadd');
    const before = await allKeys(admin);
    const result = await runCli(['--url', userUrl(handle.url, 'emq-race-nozadd'), '--jobs', '100', '--mode', 'atomic']);
    assert.equal(result.code, 3, result.stderr);
    const line = oneErrorLine(result.stderr);
    assert.ok(line, `one line, no stack trace: ${result.stderr}`);
    assert.match(line, /permission denied/);
    assert.match(line, /zadd/i);
    assert.deepEqual(await allKeys(admin), before);
  });

  test('a queue outside the key pattern: one line naming the refused command, exit 3', async () => {
    const before = await allKeys(admin);
    const result = await runCli(['--url', userUrl(handle.url, 'emq-race'), '--jobs', '100', '--mode', 'atomic', '--queue', 'nightly']);
    assert.equal(result.code, 3, result.stderr);
    const line = oneErrorLine(result.stderr);
    assert.ok(line, `one line, no stack trace: ${result.stderr}`);
    assert.match(line, /permission denied .*\(SET\)/);
    assert.deepEqual(await allKeys(admin), before);
  });

  test('a database in the URL needs +select, as the README says', async () => {
    const refused = await runCli(['--url', `${userUrl(handle.url, 'emq-race')}/1`, '--jobs', '50', '--mode', 'atomic']);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(oneErrorLine(refused.stderr) ?? '', /permission denied .*\(SELECT\)/);
    await admin.call('ACL', 'SETUSER', 'emq-race-db', 'reset', ...readmeAclRules(), '+select');
    const result = await runCli(['--url', `${userUrl(handle.url, 'emq-race-db')}/1`, '--jobs', '50', '--mode', 'atomic', '--expect', 'clean']);
    assert.equal(result.code, 0, result.stderr);
  });
});

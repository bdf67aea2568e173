/**
 * Least privilege, proved on real servers: the documented ACL line is applied as written; every
 * command the tool sends (recorded with MONITOR, script calls included) passes ACL DRYRUN for that
 * user; every command the line grants is one the tool sent; the tool, `clean --queue` and
 * `clean --all` work under it; and a user missing any one command of the line stops within a bound
 * with one line naming it (exit 3), leaving nothing it had the permission to delete.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { parseOwnerValue } from '../../src/queue/owner-marker.js';
import { granted, readmeAclRules as readmeRules, userUrl as userUrlWith } from '../helpers/acl.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { oneErrorLine, within } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import { forEachServer } from '../helpers/servers.js';
import { fillUnrelated, unrelatedState } from '../helpers/unrelated-data.js';

const PASSWORD = 'acl-test-pw-7Qx';
const readmeAclRules = (): string[] => readmeRules(PASSWORD);
const userUrl = (url: string, user: string): string => userUrlWith(url, user, PASSWORD);
/** A guard against hangs, not a timing: a run that cannot go on must end well within it. */
const LIMIT_MS = 20_000;

forEachServer('least privilege', (handle) => {
  let admin: Redis;
  before(async () => {
    admin = await connect(parseServerUrl(handle.url));
    await admin.call('ACL', 'SETUSER', 'emq-race', 'reset', ...readmeAclRules());
  });
  after(() => admin?.disconnect());

  test('every command sent is allowed by the documented line, and every command it allows is used', async () => {
    await fillUnrelated(admin);
    const unrelated = await unrelatedState(admin);
    const sent: string[][] = [];
    const monitor = await admin.duplicate().monitor();
    monitor.on('monitor', (_time: string, args: string[]) => sent.push(args));
    try {
      const url = userUrl(handle.url, 'emq-race');
      const main = await runCli([
        '--url',
        url,
        '--jobs',
        '300',
        '--sweepers',
        '3',
        '--max-stalled',
        '2',
        '--stalled-before',
        '0',
        '--queue',
        'race-acl',
        '--keep',
        '--json',
      ]);
      assert.equal(main.code, 0, main.stderr);
      // At stalled-before 1 and max-stalled 2 both sweeps dead-letter the job: the loop's dead
      // letter (LREM, ZADD dead) runs for sure.
      const deadLetter = await runCli([
        'explain',
        '--url',
        url,
        '--mode',
        'loop',
        '--stalled-before',
        '1',
        '--max-stalled',
        '2',
        '--queue',
        'race-acl-explain',
      ]);
      assert.equal(deadLetter.code, 0, deadLetter.stderr);
      // --latency times PINGs through its proxy before the race.
      const latency = await runCli(['--url', url, '--jobs', '100', '--mode', 'atomic', '--latency', '1']);
      assert.equal(latency.code, 0, latency.stderr);
      assert.match(latency.stdout, /latency: 1 ms of round trip added/);
      const one = await runCli(['clean', '--url', url, '--queue', 'race-acl-atomic']);
      assert.equal(one.code, 0, one.stderr);
      const rest = await runCli(['clean', '--url', url, '--all', '--yes']);
      // The unrelated data's marker of queue orders lies outside the user's key patterns: not
      // cleaned, whether emq-race's or not, so --all ends as clean --queue orders would (exit 3).
      assert.equal(rest.code, 3, rest.stderr);
      assert.match(rest.stderr, /^emq-race: clean --all left 1 queue on \S+ \(owner marker not readable by this user: queue orders\)$/m);
      assert.match(rest.stdout, /removed queue race-acl-loop/);
      // A claim refused because the queue has keys releases its marker with the script.
      await admin.hset('emq:{race-taken}:job:1', 'state', 'x');
      const refused = await runCli(['--url', url, '--queue', 'race-taken', '--mode', 'atomic']);
      assert.equal(refused.code, 2, refused.stderr);
      await admin.unlink('emq:{race-taken}:job:1');
    } finally {
      // MONITOR lines can trail the last reply a little: an ECHO (which the line does not grant) marks the end.
      await admin.echo('end of the recording');
      monitor.disconnect();
    }
    assert.deepEqual(await unrelatedState(admin), unrelated);

    const names = new Set<string>();
    const checked = new Set<string>();
    for (const args of sent) {
      const [command = '', ...rest] = args;
      const name = command.toLowerCase();
      // The test's own commands: its MONITOR and ECHO, and the key it planted and removed.
      if (['auth', 'monitor', 'echo'].includes(name)) continue;
      if (['hset', 'unlink'].includes(name) && rest[0] === 'emq:{race-taken}:job:1') continue;
      names.add(name === 'script' ? `script|${(rest[0] ?? '').toLowerCase()}` : name);
      const signature = `${name} ${rest.slice(0, 2).join(' ')}`;
      if (checked.has(signature)) continue;
      checked.add(signature);
      const verdict = String(await admin.call('ACL', 'DRYRUN', 'emq-race', ...args));
      assert.equal(verdict, 'OK', `${args.slice(0, 4).join(' ')}: ${verdict}`);
    }
    for (const command of granted(readmeAclRules())) {
      assert.ok(names.has(command), `the documented line grants ${command}, which the tool never sent (sent: ${[...names].sort().join(' ')})`);
    }
    assert.ok(names.has('evalsha') && names.has('hincrby'), 'script calls and the commands inside them were recorded');
  });

  test('without each command of the documented line in turn: exit 3 in bounded time, one line naming it, nothing left it could delete', async () => {
    for (const command of granted(readmeAclRules())) {
      const user = `emq-race-no-${command.replace('|', '-')}`;
      const queue = `race-no-${command.replace('|', '-')}`;
      await admin.call('ACL', 'SETUSER', user, 'reset', ...readmeAclRules(), `-${command}`);
      // Scripts an earlier run left in the cache would spare a user without EVAL its refusal.
      await admin.call('SCRIPT', 'FLUSH');
      const before = await allKeys(admin);
      const run = (args: readonly string[]): Promise<CliResult> =>
        within(LIMIT_MS, `the run without ${command}`, runCli(['--url', userUrl(handle.url, user), ...args]));
      // LREM serves the loop's dead letter only: a run that starts one stall short of max-stalled needs it.
      const deadLetter = command === 'lrem' ? ['--stalled-before', '2'] : [];
      // PING serves --latency's measurement only.
      const latency = command === 'ping' ? ['--latency', '1'] : [];
      let result = await run(['--queue', queue, '--jobs', '50', ...deadLetter, ...latency]);
      if (result.code === 0) {
        // A plain run deletes no claim marker: DEL serves a claim refused on an occupied queue.
        await admin.hset(`emq:{${queue}}:job:1`, 'state', "someone else's");
        before.push(`emq:{${queue}}:job:1`);
        result = await run(['--queue', queue, '--mode', 'atomic', '--jobs', '50']);
      }
      assert.equal(result.code, 3, `without ${command}: ${result.stderr}`);
      const line = oneErrorLine(result.stderr);
      assert.ok(line, `without ${command}, one line and no stack trace: ${result.stderr}`);
      const name = (command.split('|')[0] ?? '').toUpperCase();
      assert.match(line, new RegExp(`permission denied on \\S+ \\(${name}[,)]`), `without ${command}`);
      // A release refused just as the run was is said once, not the refusal twice.
      assert.doesNotMatch(line, /(permission denied [^;]*);.*releasing the claim then failed: \1/, `without ${command}`);

      const left = (await allKeys(admin)).filter((key) => !before.includes(key));
      // Without UNLINK the run is refused at its claim, before it writes what it could not delete:
      // nothing to send the user to clean for.
      if (command === 'unlink') assert.doesNotMatch(line, /emq-race clean|may remain/, `without ${command}`);
      // Where the user may delete, nothing stays but, at most, the unconfirmed claim's
      // marker (which clean removes alone) when releasing it needs the missing command.
      for (const key of left) {
        assert.match(key, new RegExp(`^emq:\\{${queue}(-atomic|-loop)?\\}:owner$`), `without ${command}: ${key} left behind`);
        assert.equal(parseOwnerValue(await admin.get(key))?.phase, 'claiming', `without ${command}`);
        assert.ok((await admin.pttl(key)) > 0, `without ${command}: the marker left expires`);
      }
      if (left.length > 0) await admin.unlink(...left);
      await admin.unlink(`emq:{${queue}}:job:1`);
    }
  });

  test('explore as a user without SCRIPT LOAD: one line naming it, exit 3, as the race and explain say it', async () => {
    await admin.call('ACL', 'SETUSER', 'emq-race-no-load', 'reset', ...readmeAclRules(), '-script|load');
    const before = await allKeys(admin);
    for (const args of [
      ['explore', '--mode', 'atomic'],
      ['explore', '--mode', 'atomic', '--json'],
    ]) {
      const result = await within(LIMIT_MS, 'explore without SCRIPT LOAD', runCli([...args, '--url', userUrl(handle.url, 'emq-race-no-load')]));
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr);
      assert.ok(line, `one line and no stack trace: ${result.stderr}`);
      assert.match(line, /permission denied on \S+ \(SCRIPT[,)]/);
      if (args.includes('--json')) assert.match((JSON.parse(result.stdout) as { error: { message: string } }).error.message, /^permission denied/);
    }
    assert.deepEqual(await allKeys(admin), before);
  });

  test('explore whose second mode is refused at its first execution: that mode reported under way, with none, not lost between the explored and the not started', async () => {
    await admin.call('ACL', 'SETUSER', 'emq-race-no-hincrby', 'reset', ...readmeAclRules(), '-hincrby');
    const before = await allKeys(admin);
    const result = await within(
      LIMIT_MS,
      'explore without HINCRBY',
      runCli(['explore', '--mode', 'loop,atomic,claim', '--max-switches', '1', '--json', '--url', userUrl(handle.url, 'emq-race-no-hincrby')]),
    );
    assert.equal(result.code, 3, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', /permission denied on \S+ \(HINCRBY, called by sweep-stalled\.lua line \d+\)/);
    const report = JSON.parse(result.stdout) as { complete: boolean; modes: { mode: string; complete: boolean; executions: number }[]; notStarted: string[] };
    assert.equal(report.complete, false);
    assert.deepEqual(
      report.modes.map((m) => [m.mode, m.complete, m.executions > 0]),
      [
        ['loop', true, true],
        ['atomic', false, false],
      ],
    );
    assert.deepEqual(report.notStarted, ['claim']);
    assert.deepEqual(await allKeys(admin), before);
  });

  test('clean without GET is refused rather than finding nothing; without SCAN it removes the queue and says what it could not look for', async () => {
    for (const queue of ['race-clean-a', 'race-clean-b']) {
      const kept = await runCli(['--url', handle.url, '--queue', queue, '--mode', 'atomic', '--jobs', '20', '--keep']);
      assert.equal(kept.code, 0, kept.stderr);
    }
    await admin.call('ACL', 'SETUSER', 'emq-race-clean-no-get', 'reset', ...readmeAclRules(), '-get');
    await admin.call('ACL', 'SETUSER', 'emq-race-clean-no-scan', 'reset', ...readmeAclRules(), '-scan');
    const noGet = await runCli(['clean', '--url', userUrl(handle.url, 'emq-race-clean-no-get'), '--all', '--yes']);
    assert.equal(noGet.code, 3, noGet.stderr);
    assert.match(oneErrorLine(noGet.stderr) ?? '', /permission denied on \S+ \(GET\)/);
    assert.doesNotMatch(noGet.stdout, /no emq-race queues/);
    // A user whose key patterns cover one queue: the other's marker is named as not read, not passed over.
    await admin.call('ACL', 'SETUSER', 'emq-race-clean-b-only', 'reset', 'on', `>${PASSWORD}`, '~emq:{race-clean-b}:*', '+@all');
    // The queue it may not read is left, so --all ends with the code clean --queue gives for it.
    const aByName = await runCli(['clean', '--url', userUrl(handle.url, 'emq-race-clean-b-only'), '--queue', 'race-clean-a']);
    assert.equal(aByName.code, 3, aByName.stderr);
    const bOnly = await runCli(['clean', '--url', userUrl(handle.url, 'emq-race-clean-b-only'), '--all', '--yes']);
    assert.equal(bOnly.code, 3, bOnly.stderr);
    assert.match(bOnly.stderr, /^emq-race: clean --all left \d+ queues? on \S+ \(owner marker not readable by this user: .*\bqueue race-clean-a\b.*\)$/m);
    assert.match(bOnly.stdout, /removed queue race-clean-b: \d+ keys/);
    assert.match(
      bOnly.stderr,
      /^emq-race: not cleaned, whether emq-race's or not: \d+ queues whose owner marker this user may not read \(outside its key patterns\): .*\brace-clean-a\b/m,
    );
    const noScan = await runCli(['clean', '--url', userUrl(handle.url, 'emq-race-clean-no-scan'), '--queue', 'race-clean-a']);
    assert.equal(noScan.code, 0, noScan.stderr);
    assert.match(noScan.stdout, /^removed queue race-clean-a: \d+ keys\n$/);
    assert.equal(noScan.stderr, 'emq-race: keys under emq:{race-clean-a}: that emq-race did not create were not looked for: this user may not run SCAN\n');
    assert.deepEqual(
      (await allKeys(admin)).filter((key) => key.startsWith('emq:{race-clean-a}')),
      [],
    );
  });

  test("a queue outside the key pattern: one line naming the refused command and the queue's keys this user may not read or write, exit 3", async () => {
    const before = await allKeys(admin);
    const result = await runCli(['--url', userUrl(handle.url, 'emq-race'), '--jobs', '100', '--mode', 'atomic', '--queue', 'nightly']);
    assert.equal(result.code, 3, result.stderr);
    const line = oneErrorLine(result.stderr);
    assert.ok(line, `one line, no stack trace: ${result.stderr}`);
    assert.match(
      line,
      /permission denied .*\(SET\): this user may not read or write the keys of queue nightly \(emq:\{nightly\}:\*\) as SET needs \(.*\): its ACL key patterns leave them out, or let it only read them \(%R~\) or only write them \(%W~\); give it a key pattern that covers them for both: .*see "Least privilege" in docs\/shared-servers\.md$/,
    );
    assert.deepEqual(await allKeys(admin), before);
    // Every command granted, the key pattern alone leaving the queue out: the default modes' queues named the same way.
    await admin.call('ACL', 'SETUSER', 'emq-race-all', 'reset', 'on', `>${PASSWORD}`, '~emq:{race-*}:*', '+@all');
    try {
      const all = await runCli(['--url', userUrl(handle.url, 'emq-race-all'), '--jobs', '100', '--queue', 'nightly2']);
      assert.equal(all.code, 3, all.stderr);
      assert.match(
        oneErrorLine(all.stderr) ?? '',
        /permission denied .*: this user may not read or write the keys of queue nightly2(-\w+)? \(emq:\{nightly2(-\w+)?\}:\*\) as /,
      );
      assert.deepEqual(await allKeys(admin), before);
    } finally {
      await admin.call('ACL', 'DELUSER', 'emq-race-all');
    }
  });

  test('a queue whose keys a read-only selector covers: the line does not call them outside the key patterns, it says the user may not write them as the command needs', async () => {
    const before = await allKeys(admin);
    // Every command granted and the queue's keys covered, but for reading only (%R~, Redis 7 and Valkey):
    // the server answers as it does for keys no pattern covers.
    await admin.call('ACL', 'SETUSER', 'emq-race-read', 'reset', 'on', `>${PASSWORD}`, '%R~emq:{nightly3}:*', '+@all');
    try {
      const result = await runCli(['--url', userUrl(handle.url, 'emq-race-read'), '--jobs', '100', '--mode', 'atomic', '--queue', 'nightly3']);
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr) ?? '';
      assert.match(
        line,
        /permission denied .*\(SET\): this user may not read or write the keys of queue nightly3 \(emq:\{nightly3\}:\*\) as SET needs \(.*\): its ACL key patterns leave them out, or let it only read them \(%R~\) or only write them \(%W~\)/,
      );
      assert.doesNotMatch(line, /outside this user's ACL key patterns/);
      assert.deepEqual(await allKeys(admin), before);
    } finally {
      await admin.call('ACL', 'DELUSER', 'emq-race-read');
    }
  });

  test("a key inside a script refused by the user's key patterns: one line naming the command and its line, exit 3", async () => {
    // The documented commands, but the jobs' hashes read-only: the seeding script's HSET is refused
    // on a key it names from a job's id, which the server words differently from a refused command.
    const rules = readmeAclRules().filter((rule) => !rule.startsWith('~'));
    await admin.call('ACL', 'SETUSER', 'emq-race-ro-jobs', 'reset', ...rules, '~emq:{race-*}:[^j]*', '%R~emq:{race-*}:job:*');
    const result = await runCli(['--url', userUrl(handle.url, 'emq-race-ro-jobs'), '--jobs', '100', '--mode', 'atomic', '--queue', 'race-ro-jobs']);
    assert.equal(result.code, 3, result.stderr);
    const line = oneErrorLine(result.stderr) ?? '';
    assert.match(line, /permission denied on .* \(HSET, called by seed-jobs\.lua line \d+\): this user may not touch a key HSET names there/);
    await admin.call('ACL', 'DELUSER', 'emq-race-ro-jobs');
    // It could not delete the jobs it made: the line names the clean-up, as another user.
    const left = (await allKeys(admin)).filter((key) => key.startsWith('emq:{race-ro-jobs}'));
    if (left.length > 0) assert.match(line, /emq-race clean --queue race-ro-jobs/);
    if (left.length > 0) await admin.del(...left);
  });

  test('a database in the URL needs +select, as documented', async () => {
    const refused = await runCli(['--url', `${userUrl(handle.url, 'emq-race')}/1`, '--jobs', '50', '--mode', 'atomic']);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(oneErrorLine(refused.stderr) ?? '', /permission denied .*\(SELECT\)/);
    await admin.call('ACL', 'SETUSER', 'emq-race-db', 'reset', ...readmeAclRules(), '+select');
    const result = await runCli(['--url', `${userUrl(handle.url, 'emq-race-db')}/1`, '--jobs', '50', '--mode', 'atomic', '--expect', 'clean']);
    assert.equal(result.code, 0, result.stderr);
  });
});

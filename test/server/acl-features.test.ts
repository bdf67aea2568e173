/**
 * Least privilege for every feature beyond the main command, proved on real servers. For each row
 * of the README's "What each feature adds" table, a fresh user gets the base line plus that row's
 * addition, exactly as written; the feature runs through the CLI under it and exits 0; every command
 * recorded with MONITOR (script and function calls included) passes ACL DRYRUN for that user; every
 * command the addition grants was really run (INFO commandstats, which also counts the CLIENT KILL
 * that MONITOR never shows); and under the base line alone the feature stops with one "permission
 * denied" line naming a command it lacks, exit 3, leaving no key behind.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import { forEachServer } from '../helpers/servers.js';
import { BUILT_IN_SCRIPT, scriptFile } from '../helpers/scripts.js';

const README = readFileSync(new URL('../../../docs/shared-servers.md', import.meta.url), 'utf8');
const PASSWORD = 'acl-features-pw-4Rt';

/** The README's base ACL SETUSER line as arguments, with the password filled in. */
function baseRules(): string[] {
  const line = README.split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('ACL SETUSER emq-race on '));
  assert.ok(line, 'README has the base ACL SETUSER emq-race line');
  return line
    .split(/\s+/)
    .slice(3)
    .map((rule) => (rule === '>PASSWORD' ? `>${PASSWORD}` : rule));
}

/** The rows of the README's feature table: feature → the rules its line adds ([] for "none"). */
function readmeAdditions(): Map<string, string[]> {
  const start = README.indexOf('#### What each feature adds');
  assert.ok(start >= 0, 'README has the "What each feature adds" section');
  const section = README.slice(start, README.indexOf('\n### ', start));
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const row = /^\| `([^`]+)` \| (.*) \|$/.exec(line);
    if (!row) continue;
    const [, feature = '', cell = ''] = row;
    const addition = /^`ACL SETUSER emq-race ([^`]+)`$/.exec(cell.replaceAll('\\|', '|'));
    rows.set(feature, addition ? (addition[1] ?? '').trim().split(/\s+/) : []);
  }
  return rows;
}

// Enough jobs for every granted command to be sent (the faults strike as the race starts); each
// job more only lengthens what MONITOR records and the test reads back.
const SMALL = ['--jobs', '60', '--sweepers', '2'];
const sweepScript = scriptFile('sweep.lua', BUILT_IN_SCRIPT);

/** How each README row is run: one or more CLI invocations, `--url` inserted by `withUrl`. */
const FEATURES: Readonly<Record<string, readonly (readonly string[])[]>> = {
  explain: [
    ['explain'],
    ['explain', '--mode', 'atomic'],
    ['explain', '--mode', 'loop'],
    ['explain', '--counter', 'client'],
    ['explain', '--counter', 'in-script'],
  ],
  // Orders of two sweeps: the loop's commands are explain's, claim's and atomic's the race's. Within
  // two preemptions every command each mode sends is sent (the orders left out send the same ones
  // in other orders), in 66 executions where every order takes 534, each one recorded by MONITOR.
  'explore --mode loop,claim,atomic': [['explore', '--mode', 'loop,claim,atomic', '--max-switches', '2']],
  '--mode claim': [['--mode', 'claim', ...SMALL]],
  // Four sweepers so that one finds a job another took, and sends its UNWATCH.
  '--mode watch': [['--mode', 'watch', '--jobs', '100', '--sweepers', '4']],
  '--mode function': [['--mode', 'function', ...SMALL]],
  '--mode script': [['--script', sweepScript, ...SMALL]],
  '--pending zset': [['--pending', 'zset', ...SMALL]],
  // A sorted-set pending is taken with ZPOPMIN (inside a script) rather than LMOVE.
  '--workers': [
    ['--workers', '2', ...SMALL],
    ['--workers', '2', '--pending', 'zset', ...SMALL],
  ],
  // Below --max-stalled, so that used-up jobs wait in pending behind the rest: moved to a list's
  // tail (LMOVE), re-scored 1 in a sorted set (ZADD XX).
  '--cycles': [
    ['--cycles', '2', '--max-stalled', '3', ...SMALL],
    ['--cycles', '2', '--max-stalled', '3', '--pending', 'zset', ...SMALL],
  ],
  '--observe': [
    ['--observe', ...SMALL],
    ['--observe', '--pending', 'zset', ...SMALL],
  ],
  '--fault sweeper-crash': [['--fault', 'sweeper-crash', ...SMALL]],
  '--fault script-flush': [['--fault', 'script-flush', '--allow-server-wide', '--mode', 'atomic', ...SMALL]],
  '--fault client-kill': [['--fault', 'client-kill', ...SMALL]],
  // One sweeper process a mode: each child sends the same commands, and each is a Node start-up.
  '--processes': [['--processes', '--jobs', '60', '--sweepers', '1']],
  '--server-stats': [['--server-stats', '--mode', 'atomic', ...SMALL]],
};

const withUrl = (args: readonly string[], url: string): string[] =>
  args[0] === 'explain' || args[0] === 'explore' ? [args[0], '--url', url, ...args.slice(1)] : ['--url', url, ...args];

const userUrl = (url: string, user: string): string => url.replace('redis://', `redis://${user}:${PASSWORD}@`);
const userName = (feature: string): string => `emq-race-${feature.replace(/[^a-z]+/g, '-').replace(/^-|-$/g, '')}`;

/** `+name` or `+name|sub` → `name` / `name|sub`, as INFO commandstats names them. */
const grantedCommand = (rule: string): string => rule.slice(1).toLowerCase();

/** Calls per command since the last CONFIG RESETSTAT, subcommands as `name|sub`. */
async function commandCalls(admin: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const line of (await admin.info('commandstats')).split('\n')) {
    const stat = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (stat) calls.set(stat[1] ?? '', Number(stat[2]));
  }
  return calls;
}

/** The user's key pattern and everything else of the base line, parsed once. */
const BASE = baseRules();
const ADDITIONS = readmeAdditions();

test('the README table and the tested features are the same list, and every addition only adds', () => {
  assert.deepEqual([...ADDITIONS.keys()].sort(), Object.keys(FEATURES).sort());
  for (const [feature, rules] of ADDITIONS) {
    for (const rule of rules) assert.match(rule, /^\+[a-z]+(\|[a-z]+)?$/, `${feature}: ${rule} is not a plain +command grant`);
  }
});

forEachServer('least privilege, feature by feature', (handle) => {
  let admin: Redis;
  before(async () => {
    admin = await connect(parseServerUrl(handle.url));
    await admin.call('ACL', 'SETUSER', 'emq-race-base', 'reset', ...BASE);
    for (const [feature, rules] of ADDITIONS) {
      // Two lines, as the README says: the base user first, then the feature's addition.
      await admin.call('ACL', 'SETUSER', userName(feature), 'reset', ...BASE);
      if (rules.length > 0) await admin.call('ACL', 'SETUSER', userName(feature), ...rules);
    }
  });
  after(() => admin?.disconnect());

  for (const [feature, runs] of Object.entries(FEATURES)) {
    test(`${feature}: runs under the base line plus its addition, and sends every command the addition grants`, async () => {
      const user = userName(feature);
      const keysBefore = await allKeys(admin);
      const sent: string[][] = [];
      await admin.call('CONFIG', 'RESETSTAT');
      const monitor = await admin.duplicate().monitor();
      monitor.on('monitor', (_time: string, args: string[]) => sent.push(args));
      try {
        for (const args of runs) {
          const result = await runCli(withUrl(args, userUrl(handle.url, user)));
          assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
        }
      } finally {
        // MONITOR lines can trail the last reply a little.
        await admin.ping();
        monitor.disconnect();
      }
      const calls = await commandCalls(admin);
      assert.deepEqual(await allKeys(admin), keysBefore, 'no key left behind');
      assert.deepEqual(await admin.call('FUNCTION', 'LIST'), [], 'no function library left behind');

      const checked = new Map<string, string[]>();
      for (const args of sent) {
        const [command = '', ...rest] = args;
        // The test's own commands on its MONITOR connection.
        if (['auth', 'monitor', 'ping'].includes(command.toLowerCase())) continue;
        const signature = `${command.toLowerCase()} ${rest.slice(0, 2).join(' ')}`;
        if (!checked.has(signature)) checked.set(signature, args);
      }
      // Every DRYRUN sent at once (one connection answers in order): a round trip for all, not for each.
      const verdicts = await Promise.all([...checked.values()].map(async (args) => [args, String(await admin.call('ACL', 'DRYRUN', user, ...args))] as const));
      for (const [args, verdict] of verdicts) assert.equal(verdict, 'OK', `${args.slice(0, 4).join(' ')}: ${verdict}`);
      assert.ok(checked.size > 5, `commands were recorded (${checked.size})`);
      for (const rule of ADDITIONS.get(feature) ?? []) {
        const command = grantedCommand(rule);
        assert.ok((calls.get(command) ?? 0) > 0, `${feature}: the README grants ${command}, which the feature never ran`);
      }
    });

    const grants = (ADDITIONS.get(feature) ?? []).map(grantedCommand);
    if (grants.length === 0) continue;
    test(`${feature}: under the base line alone, one "permission denied" line naming a command it needs, exit 3`, async () => {
      const keysBefore = await allKeys(admin);
      const [args = []] = runs;
      const result = await runCli(withUrl(args, userUrl(handle.url, 'emq-race-base')));
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr);
      assert.ok(line, `one line, no stack trace: ${result.stderr}`);
      assert.match(line, /permission denied/);
      // The line names the command (a subcommand's container, e.g. CLIENT for client|id).
      const named = /\(([A-Z]+)[,)]/.exec(line)?.[1]?.toLowerCase() ?? '';
      assert.ok(
        grants.some((g) => g.split('|')[0] === named),
        `${line} names one of ${grants.join(' ')}`,
      );
      assert.doesNotMatch(line, new RegExp(PASSWORD));
      assert.deepEqual(await allKeys(admin), keysBefore, 'no key left behind');
      assert.deepEqual(await admin.call('FUNCTION', 'LIST'), [], 'no function library left behind');
    });
  }

  test('--lib under the base line alone: one "permission denied" line that sends the user to the --lib row, exit 3, nothing left', async () => {
    for (const library of ['bullmq', 'bee-queue', 'node-resque']) {
      const keysBefore = await allKeys(admin);
      const result = await runCli(['--url', userUrl(handle.url, 'emq-race-base'), '--lib', library, '--jobs', '20']);
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr) ?? '';
      // node-resque's refusal comes inside a MULTI the server discarded (EXECABORT): named as a refusal all the same.
      assert.match(
        line,
        new RegExp(
          `^emq-race: permission denied on [^;]+; a --lib ${library} run also needs the commands ${library} itself sends: see the --lib row under "Least privilege" in docs/shared-servers.md`,
        ),
      );
      assert.doesNotMatch(line, /the ACL the tool needs/, "not sent to the line of the tool's own commands");
      assert.deepEqual(await allKeys(admin), keysBefore, `${library}: no key left behind`);
    }
  });

  test('--mode all: runs under the base line plus the watch and function lines; without them, one line', async () => {
    const keysBefore = await allKeys(admin);
    const refused = await runCli(['--url', userUrl(handle.url, 'emq-race-base'), '--mode', 'all', ...SMALL]);
    assert.equal(refused.code, 3, refused.stderr);
    const line = oneErrorLine(refused.stderr);
    assert.ok(line, `one line, no stack trace: ${refused.stderr}`);
    assert.match(line, /permission denied .*\((FUNCTION|WATCH)\)/);
    assert.deepEqual(await allKeys(admin), keysBefore, 'no key left behind');

    await admin.call('ACL', 'SETUSER', 'emq-race-all', 'reset', ...BASE);
    for (const feature of ['--mode watch', '--mode function']) await admin.call('ACL', 'SETUSER', 'emq-race-all', ...(ADDITIONS.get(feature) ?? []));
    const result = await runCli(['--url', userUrl(handle.url, 'emq-race-all'), '--mode', 'all', ...SMALL]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(await allKeys(admin), keysBefore, 'no key left behind');
    assert.deepEqual(await admin.call('FUNCTION', 'LIST'), [], 'no function library left behind');
  });
});

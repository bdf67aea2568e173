/**
 * The built CLI, spawned as a user runs it: the JSON contract, the table, --keep, and each exit
 * code with its one line on stderr.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { freePort } from '../../src/server/embedded-server.js';
import { BIN, runCli } from '../helpers/cli.js';
import { oneErrorLine, until } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import { FAILS_AT_RUN_TIME, FORGETS_ZREM, scriptFile } from '../helpers/scripts.js';
import { alive, commandLine } from '../helpers/processes.js';
import { forEachServer } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

const RUN_FIELDS = [
  'mode',
  'queue',
  'sweepers',
  'jobs',
  'batch',
  'maxStalled',
  'stalledBefore',
  'recoveries',
  'doubleRecoveries',
  'duplicatePending',
  'lostIncrements',
  'extraIncrements',
  'lostJobs',
  'misplaced',
  'unreclaimed',
  'wallMs',
  'jobsPerSec',
];

test('--version prints the package version; --help lists flags and exit codes', async () => {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  const version = await runCli(['--version']);
  assert.equal(version.code, 0);
  assert.equal(version.stdout.trim(), pkg.version);
  const help = await runCli(['--help']);
  assert.equal(help.code, 0);
  for (const flag of [
    '--mode',
    '--sweepers',
    '--jobs',
    '--batch',
    '--max-stalled',
    '--stalled-before',
    '--probe-delay',
    '--queue',
    '--url',
    '--server-bin',
    '--keep',
    '--json',
    '--expect',
  ]) {
    assert.ok(help.stdout.includes(flag), flag);
  }
  assert.match(help.stdout, /Exit codes:[\s\S]*130/);
});

test('bad usage is exit 2 with one line on stderr, before any server is touched', async () => {
  const unknown = await runCli(['--jbos', '5']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^emq-race: unknown option '--jbos' \(Did you mean --jobs\?\)\n$/);
  const bad = await runCli(['--sweepers', 'many']);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, 'emq-race: --sweepers: "many" is not a whole number; expected 1 to 256\n');
  assert.equal(bad.stdout, '');
  // A stray word is named only when it is a command mistyped: any other may be a password.
  assert.match((await runCli(['explian'])).stderr, /^emq-race: unknown command 'explian' \(Did you mean explain\?\)\n$/);
  for (const stray of ['Zq7w0rd', ':Zq7w0rd@127.0.0.1:7400', 'correcthorsebatterystaple']) {
    const result = await runCli([stray]);
    assert.equal(result.code, 2, stray);
    assert.equal(
      result.stderr,
      'emq-race: an argument that is neither a command nor a flag (not shown: it may be a password); flags start with --, a server URL goes after --url\n',
    );
  }
  assert.equal((await runCli(['redis://:Zq7w0rd@h:1'])).stderr, 'emq-race: "redis://:***@h:1" is not a command: a server URL goes after --url\n');
  // A subcommand given a URL without --url refuses it, rather than running on an embedded server.
  for (const command of ['explain', 'explore', 'grid', 'clean']) {
    const result = await runCli([command, 'redis://:Zq7w0rd@127.0.0.1:7400']);
    assert.equal(result.code, 2, command);
    assert.equal(result.stderr, `emq-race: too many arguments for '${command}'. Expected 0 arguments but got 1.\n`);
  }
});

test('an unreachable server is exit 3 with one line', async () => {
  const port = await freePort();
  const result = await runCli(['--url', `redis://user:hunter2@127.0.0.1:${port}`, '--mode', 'atomic']);
  assert.equal(result.code, 3);
  assert.equal(result.stderr, `emq-race: cannot reach the server at redis://user:***@127.0.0.1:${port}: connection refused\n`);
  assert.ok(!result.stdout.includes('hunter2') && !result.stderr.includes('hunter2'));
  // From REDIS_URL, with no --url: the line says where the URL came from, for the race and for clean.
  for (const args of [
    ['--mode', 'atomic'],
    ['clean', '--all'],
  ]) {
    const env = await runCli(args, { REDIS_URL: `redis://user:hunter2@127.0.0.1:${port}` });
    assert.equal(env.code, 3, args.join(' '));
    assert.equal(
      env.stderr,
      `emq-race: cannot reach the server at redis://user:***@127.0.0.1:${port}: connection refused (the URL is REDIS_URL's; --url overrides it)\n`,
    );
  }
});

test('a socket path that leads nowhere: exit 3, one line that says what the path is', async () => {
  const dir = tempDir('emq-race-socket-');
  const file = join(dir, 'plain-file');
  writeFileSync(file, '');
  const cases: readonly (readonly [string, string])[] = [
    [`unix://${join(dir, 'absent.sock')}`, 'no such socket'],
    [`unix://${file}/redis.sock`, 'the path names no socket'],
  ];
  for (const [url, says] of cases) {
    const result = await runCli(['--url', url, '--mode', 'atomic']);
    assert.equal(result.code, 3, result.stderr);
    assert.equal(result.stderr, `emq-race: cannot reach the server at ${url}: ${says}\n`);
  }
});

test('the embedded default server: both modes, a table, and the readout; the server is gone afterwards', async () => {
  // What is checked is the table's form and the readout, not the race: a hundred jobs show them.
  const result = await runCli(['--jobs', '100', '--sweepers', '4']);
  assert.equal(result.code, 0, result.stderr);
  // The server the report came from no longer exists: no address to try.
  assert.match(result.stdout, /^server: (redis|valkey) \S+ \(embedded, now stopped\)\n/);
  // A column per mode, a row per figure, numbers right-aligned.
  assert.match(result.stdout, /^ +atomic +loop$/m);
  assert.match(result.stdout, /^jobs +100 +100$/m);
  assert.match(result.stdout, /^recoveries +100 +\d[\d,]*$/m);
  assert.match(result.stdout, /^double recoveries +0 +\d[\d,]*$/m);
  assert.match(result.stdout, /^other anomalies +0 +\d+$/m);
  assert.match(result.stdout, /^atomic \(4 sweepers, 100 jobs\): every expired lease was reclaimed exactly once/m);
});

test("--keep on the embedded server leaves it running with the run's keys, and says how to stop it", async () => {
  const result = await runCli(['--mode', 'atomic', '--jobs', '20', '--queue', 'race-keepembedded', '--keep']);
  assert.equal(result.code, 0, result.stderr);
  const said = /kept: embedded server at (redis:\/\/127\.0\.0\.1:(\d+)), pid (\d+); stop it with:\s+redis-cli -p (\d+) shutdown nosave \(or kill (\d+)\)/.exec(
    result.stdout,
  );
  assert.ok(said, result.stdout);
  const [, url, port, pid] = said;
  const redis = new Redis(String(url));
  try {
    assert.equal((await redis.get('emq:{race-keepembedded}:owner')) !== null, true);
    assert.equal(await redis.hget('emq:{race-keepembedded}:job:20', 'state'), 'pending');
    assert.equal(Number(port), Number(said[4]));
  } finally {
    redis.disconnect();
    const dir = readlinkSync(`/proc/${Number(pid)}/cwd`);
    assert.ok(existsSync(dir), `the kept server's folder: ${dir}`);
    process.kill(Number(pid), 'SIGTERM');
    // Its keeper outlives the tool while the server runs, and removes the folder once it stops.
    for (let waited = 0; existsSync(dir) && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(!existsSync(dir), `the kept server's folder left after it stopped: ${dir}`);
  }
});

test('a --server-bin script that hangs on --version is refused, and what it started is not left running', async () => {
  const dir = tempDir('emq-race-hanging-bin-');
  const bin = join(dir, 'hanging-server');
  const child = join(dir, 'child');
  // The probe's own child, as a wrapper's server would be: what a timeout that kills only the probe leaves.
  writeFileSync(bin, `#!/bin/sh\nsleep 100 &\necho $! >>'${child}'\nwait\n`, { mode: 0o755 });
  const result = await runCli(['--server-bin', bin, '--mode', 'atomic']);
  const pids = readFileSync(child, 'utf8').trim().split('\n').map(Number);
  try {
    assert.equal(result.code, 2, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', /is not a redis-server, valkey-server or redict-server binary/);
    // Orphaned, it may wait as a zombie for a reaper (init) that takes its time: an empty command
    // line says it has ended. A SIGKILL takes effect a moment after it is sent: a guard, not a timing.
    const running = (): number[] => pids.filter((pid) => commandLine(pid) !== '');
    await until(5_000, "the probe's child killed with it", () => running().length === 0, 20).catch(() => {});
    assert.deepEqual(running(), [], "the probe's child is killed with it");
  } finally {
    for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
});

test('--keep on the embedded server, the run failed: its one line says where the kept server is and how to stop it, and clean names its URL', async () => {
  const script = scriptFile('fails-at-run-time.lua', FAILS_AT_RUN_TIME);
  const result = await runCli(['--script', script, '--jobs', '20', '--queue', 'race-keepfailed', '--keep']);
  assert.equal(result.code, 3, result.stderr);
  const line = oneErrorLine(result.stderr) ?? result.stderr;
  const said =
    /^emq-race: the sweep script failed while running: .*; the keys of queue race-keepfailed \(emq:\{race-keepfailed\}:\*\) are kept \(--keep\): remove them with emq-race clean --queue race-keepfailed --url (redis:\/\/127\.0\.0\.1:(\d+)); kept: embedded server at \1, pid (\d+); stop it with: redis-cli -p \2 shutdown nosave \(or kill \3\)$/.exec(
      line,
    );
  assert.ok(said, line);
  const [, url, , pid] = said;
  try {
    // The line's clean, as given, removes the kept keys.
    const cleaned = await runCli(['clean', '--queue', 'race-keepfailed', '--url', String(url)]);
    assert.equal(cleaned.code, 0, cleaned.stderr);
    const redis = new Redis(String(url));
    try {
      assert.deepEqual(await allKeys(redis), []);
    } finally {
      redis.disconnect();
    }
  } finally {
    process.kill(Number(pid), 'SIGTERM');
  }
});

forEachServer('cli', (handle) => {
  test('--json: one object on stdout, with the documented shape and real counts', async () => {
    // Eight sweepers meet on the first batch of a couple of hundred jobs: the loop's duplicates show every time.
    const result = await runCli(['--url', handle.url, '--json', '--jobs', '200', '--sweepers', '8', '--queue', 'race-jsoncheck']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    const report = JSON.parse(result.stdout) as { server: Record<string, unknown>; runs: Record<string, unknown>[] };
    assert.deepEqual(Object.keys(report), ['version', 'schema', 'server', 'runs']);
    assert.match(String(report.server.kind), /^(redis|valkey)$/);
    assert.match(String(report.server.version), /^\d+\.\d+\.\d+$/);
    assert.equal(report.server.url, handle.url);
    assert.equal(report.runs.length, 2);
    const [atomic, loop] = report.runs;
    for (const run of report.runs) for (const field of RUN_FIELDS) assert.ok(field in run, `runs[].${field}`);
    assert.equal(atomic?.mode, 'atomic');
    assert.equal(atomic?.queue, 'race-jsoncheck-atomic');
    assert.equal(atomic?.recoveries, 200);
    assert.equal(atomic?.duplicatePending, 0);
    assert.equal(loop?.mode, 'loop');
    assert.equal(loop?.queue, 'race-jsoncheck-loop');
    assert.ok(Number(loop?.duplicatePending) > 0);
    const redis = new Redis(handle.url);
    assert.deepEqual(await allKeys(redis), [], 'nothing of the run remains');
    await redis.quit();
  });

  test('--expect: clean holds for atomic, race holds for loop; the opposite fails with exit 1 naming the figures', async () => {
    // The verdicts, not the size, are checked: eight sweepers race the loop on 150 jobs every time.
    const clean = await runCli(['--url', handle.url, '--mode', 'atomic', '--sweepers', '8', '--jobs', '100', '--expect', 'clean']);
    assert.equal(clean.code, 0, clean.stderr);
    assert.equal(clean.stderr, 'emq-race: expectation met: atomic=clean\n');
    const racy = await runCli(['--url', handle.url, '--mode', 'loop', '--sweepers', '8', '--jobs', '150', '--expect', 'race']);
    assert.equal(racy.code, 0, racy.stderr);
    const notClean = await runCli(['--url', handle.url, '--mode', 'loop', '--sweepers', '8', '--jobs', '150', '--expect', 'clean']);
    assert.equal(notClean.code, 1);
    assert.match(notClean.stderr, /^emq-race: --expect clean missed: loop expected clean, but showed (\w+ [1-9]\d*)(, \w+ [1-9]\d*)*\n$/);
    const noRace = await runCli(['--url', handle.url, '--mode', 'loop', '--sweepers', '1', '--jobs', '50', '--expect', 'race']);
    assert.equal(noRace.code, 1);
    assert.equal(noRace.stderr, 'emq-race: --expect race missed: loop expected a race, but showed no anomaly (every anomaly figure 0)\n');
  });

  test('--expect per mode: the one-command CI check passes; a script that leaves duplicates fails naming its figures', async () => {
    const check = await runCli(['--url', handle.url, '--mode', 'atomic,loop', '--sweepers', '8', '--jobs', '150', '--expect', 'atomic=clean,loop=race']);
    assert.equal(check.code, 0, check.stderr);
    // A pass says so on stderr, in one line: a CI log shows what held, not the table alone.
    assert.equal(check.stderr, 'emq-race: expectation met: atomic=clean, loop=race\n');
    const script = scriptFile('forgets-zrem.lua', FORGETS_ZREM);
    const dirty = await runCli([
      '--url',
      handle.url,
      '--mode',
      'atomic,loop',
      '--script',
      script,
      '--sweepers',
      '8',
      '--jobs',
      '150',
      '--expect',
      'atomic=clean,loop=race',
      '--expect',
      'script=clean',
    ]);
    assert.equal(dirty.code, 1);
    // The fitted table: a column per mode (atomic, loop, script), a row per figure.
    assert.match(dirty.stdout, /^ +atomic +loop +script$/m);
    const duplicates = /^duplicate pending +\S+ +\S+ +(\S+)$/m.exec(dirty.stdout)?.[1]?.replace(/,/g, '');
    assert.match(duplicates ?? '', /^[1-9]\d*$/, "the table shows the script's duplicate pending entries");
    assert.match(
      dirty.stderr,
      new RegExp(
        `^emq-race: --expect atomic=clean,loop=race,script=clean missed: script expected clean, but showed .*duplicatePending ${duplicates ?? '?'}[,\\n]`,
      ),
    );
    assert.ok(!/atomic expected|loop expected/.test(dirty.stderr), 'only the mode that missed is named');
    const notRun = await runCli(['--url', handle.url, '--mode', 'atomic', '--expect', 'loop=race']);
    assert.equal(notRun.code, 2);
    assert.equal(notRun.stdout, '');
    assert.equal(
      notRun.stderr,
      'emq-race: --expect loop=race: loop is not among the modes run (--mode atomic); add it to --mode or leave it out of --expect\n',
    );
  });

  test("--keep leaves exactly the run's keys; a second run on that queue is refused with exit 2", async (t) => {
    const kept = await runCli(['--url', handle.url, '--mode', 'atomic', '--jobs', '50', '--live', '0', '--queue', 'race-kept', '--keep']);
    assert.equal(kept.code, 0, kept.stderr);
    assert.match(kept.stdout, /kept: queue race-kept \(keys emq:\{race-kept\}:\*\)/);
    const redis = new Redis(handle.url);
    // Closed however the test ends: an open connection would keep the file's process from ending.
    t.after(() => redis.disconnect());
    const keys = await allKeys(redis);
    assert.equal(keys.length, 50 + 2, 'owner, pending and 50 job hashes (active and dead are empty, so gone)');
    assert.ok(keys.every((k) => k.startsWith('emq:{race-kept}:')));
    const before = await redis.get('emq:{race-kept}:owner');
    const again = await runCli(['--url', handle.url, '--mode', 'atomic', '--jobs', '50', '--queue', 'race-kept']);
    assert.equal(again.code, 2);
    // Whose keys, and the line that removes them: the kept run has ended (its process is this one, still alive, but not a run any more).
    assert.match(
      oneErrorLine(again.stderr) ?? '',
      /^emq-race: queue race-kept is already in use: a run that ended \(run [0-9a-f]{16}, started \S+Z, by pid \d+ on [\w.-]+\) left its keys there \(kept with --keep, or stopped before it removed them\); pick another --queue, or remove them with emq-race clean --queue race-kept \(and the same --url\)$/,
    );
    assert.equal(await redis.get('emq:{race-kept}:owner'), before);
    assert.equal((await allKeys(redis)).length, keys.length);
    await redis.unlink(...keys);
  });

  test('a command several of whose queues a kept run left: the refusal names the others too, so clearing one does not just lead to the next', async (t) => {
    const kept = await runCli(['--url', handle.url, '--mode', 'atomic,loop,claim,watch,function', '--jobs', '10', '--queue', 'race-many', '--keep']);
    assert.equal(kept.code, 0, kept.stderr);
    const redis = new Redis(handle.url);
    t.after(() => redis.disconnect());
    const keys = await allKeys(redis);
    const again = await runCli(['--url', handle.url, '--mode', 'atomic,loop,claim', '--jobs', '10', '--queue', 'race-many']);
    assert.equal(again.code, 2);
    assert.match(
      oneErrorLine(again.stderr) ?? '',
      /^emq-race: queue race-many-atomic is already in use: a run that ended \(.*\) left its keys there .*emq-race clean --queue race-many-atomic \(and the same --url\); this command's queues race-many-loop and race-many-claim are in use too: emq-race clean --all \(and the same --url\) lists every queue a run left$/,
    );
    // Four others: three named, the rest counted; one other: named alone.
    const five = await runCli(['--url', handle.url, '--mode', 'atomic,loop,claim,watch,function', '--jobs', '10', '--queue', 'race-many']);
    assert.match(oneErrorLine(five.stderr) ?? '', /; this command's queues race-many-loop, race-many-claim, race-many-watch and 1 more are in use too: /);
    const two = await runCli(['--url', handle.url, '--mode', 'loop,watch', '--jobs', '10', '--queue', 'race-many']);
    assert.match(oneErrorLine(two.stderr) ?? '', /^emq-race: queue race-many-loop is already in use: .*; this command's queue race-many-watch is in use too: /);
    assert.deepEqual((await allKeys(redis)).sort(), keys.sort(), 'nothing written or removed by the refused runs');
    for (const mode of ['atomic', 'loop', 'claim', 'watch', 'function']) {
      const cleaned = await runCli(['clean', '--url', handle.url, '--queue', `race-many-${mode}`]);
      assert.equal(cleaned.code, 0, cleaned.stderr);
    }
    assert.deepEqual(await allKeys(redis), []);
  });

  test('--keep in another database than 0 names it, for the race and for explain, where redis-cli looks only when told (-n 3)', async () => {
    const url = `${handle.url}/3`;
    const kept = await runCli(['--url', url, '--mode', 'atomic', '--jobs', '20', '--live', '0', '--queue', 'race-kept-db', '--keep']);
    assert.equal(kept.code, 0, kept.stderr);
    assert.match(kept.stdout, /^kept: queue race-kept-db \(keys emq:\{race-kept-db\}:\* in database 3\)$/m);
    const explained = await runCli(['explain', '--url', url, '--queue', 'race-kept-ex', '--keep', '--json']);
    assert.equal(explained.code, 0, explained.stderr);
    assert.match(explained.stderr, /^kept: queue race-kept-ex-\S+ \(keys emq:\{race-kept-ex-\S+\}:\* in database 3\)$/m);
    const redis = new Redis(url);
    const keys = await allKeys(redis);
    assert.ok(keys.length > 0 && keys.every((k) => k.startsWith('emq:{race-kept-')), keys.join(' '));
    await redis.unlink(...keys);
    await redis.quit();
  });

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    test(`${signal} mid-run: exit ${code}, and the run's keys are deleted`, async () => {
      const child = spawn(process.execPath, [BIN, '--url', handle.url, '--mode', 'loop', '--jobs', '20000', '--sweepers', '4'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const redis = new Redis(handle.url);
      // Wait until the run has written (its queue exists), then interrupt it.
      for (let i = 0; i < 500 && (await allKeys(redis)).length < 100; i++) await new Promise((r) => setTimeout(r, 20));
      child.kill(signal);
      const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(exitCode, code, stderr);
      assert.match(stderr, new RegExp(`emq-race: interrupted by ${signal}`));
      assert.deepEqual(await allKeys(redis), []);
      await redis.quit();
    });
  }
});

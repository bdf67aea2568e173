/**
 * The new flags end to end through the built CLI, against real servers: --mode all and comma
 * lists, --script errors (compile: exit 2, nothing written; run time: exit 3, cleaned up),
 * --trials with its JSON summaries and --expect (also over several queues), and --csv.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { execFileSync, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import {
  BUILT_IN_SCRIPT,
  DOES_NOT_COMPILE,
  FAILS_AT_RUN_TIME,
  PUSHES_PADDED_IDS,
  pushesLiveJobAndJunk,
  RENEWS_LEASES,
  scriptFile,
} from '../helpers/scripts.js';
import { forOneServerKind } from '../helpers/servers.js';
import { csvFields } from '../../src/report/csv.js';

interface JsonRun {
  mode: string;
  trial: number;
  queue: string;
  live: number;
  stolenLeases: number;
  retries: number;
  roundTrips: number;
  doubleRecoveries: number;
  [name: string]: unknown;
}

interface JsonReport {
  runs: JsonRun[];
  trials?: { mode: string; trials: number; reproductionRate: number; jobsPerSec: { min: number; median: number; max: number }; [name: string]: unknown }[];
}

// The subject is the command line's flags and what it prints for them, the same on either kind:
// one kind runs it, and the verdicts it shows are held to both kinds by the mode tests.
forOneServerKind(import.meta.url, 'cli modes', (handle) => {
  let admin: Redis;
  before(async () => {
    admin = new Redis(handle.url);
  });
  after(async () => {
    await admin.quit();
  });

  const leftovers = async (): Promise<{ keys: string[]; libraries: number }> => ({
    keys: await allKeys(admin),
    libraries: ((await admin.call('FUNCTION', 'LIST')) as unknown[]).length,
  });

  test('--mode all --json: one run per mode, each on its own queue, all but loop clean', async () => {
    const result = await runCli(['--url', handle.url, '--mode', 'all', '--jobs', '100', '--sweepers', '4', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as JsonReport;
    assert.deepEqual(
      report.runs.map((r) => r.mode),
      ['atomic', 'loop', 'watch', 'claim', 'function'],
    );
    assert.equal(new Set(report.runs.map((r) => r.queue)).size, 5);
    for (const run of report.runs) {
      assert.equal(run.live, 10, 'live defaults to 10% of --jobs');
      assert.equal(run.stolenLeases, 0);
      assert.equal(run.trial, 1);
      assert.ok(run.roundTrips > 0);
      assert.equal(typeof run.retries, 'number');
      if (run.mode !== 'loop') assert.equal(run.doubleRecoveries, 0, run.mode);
    }
    assert.equal(report.trials, undefined);
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test('--mode loop,claim runs just those', async () => {
    const result = await runCli(['--url', handle.url, '--mode', 'loop,claim', '--jobs', '60', '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(
      (JSON.parse(result.stdout) as JsonReport).runs.map((r) => r.mode),
      ['loop', 'claim'],
    );
  });

  test('a script that does not compile: exit 2 with the server message, nothing written', async () => {
    const path = scriptFile('broken.lua', DOES_NOT_COMPILE);
    const result = await runCli(['--url', handle.url, '--script', path, '--jobs', '100']);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^emq-race: --script .*broken\.lua: the server could not compile it: line \d+: .+\n$/);
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test("a script whose first line the server refuses (a function library's #! line): exit 2 naming the script, nothing written", async () => {
    const path = scriptFile('shebang.lua', `#!lua name=mylib\n${FAILS_AT_RUN_TIME}`);
    const result = await runCli(['--url', handle.url, '--script', path, '--jobs', '100']);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /^emq-race: --script .*shebang\.lua: the server could not compile it: Unknown lua shebang option: name=mylib\n$/);
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test('a script that fails while running: exit 3 after cleanup', async () => {
    const path = scriptFile('fails.lua', FAILS_AT_RUN_TIME);
    const result = await runCli(['--url', handle.url, '--script', path, '--jobs', '100']);
    assert.equal(result.code, 3);
    assert.equal(
      oneErrorLine(result.stderr),
      'emq-race: the sweep script failed while running: WRONGTYPE Operation against a key holding the wrong kind of value, at line 1 of the script',
    );
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test('the same with --keep: the keys stay, and the one line says so and names the clean that removes them', async () => {
    const path = scriptFile('fails-kept.lua', FAILS_AT_RUN_TIME);
    const result = await runCli(['--url', handle.url, '--script', path, '--jobs', '100', '--queue', 'race-fails-kept', '--keep']);
    assert.equal(result.code, 3);
    assert.match(
      result.stderr,
      /^emq-race: the sweep script failed while running: WRONGTYPE.*; the keys of queue race-fails-kept \(emq:\{race-fails-kept\}:\*\) are kept \(--keep\): remove them with emq-race clean --queue race-fails-kept \(and the same --url\)\n$/,
    );
    assert.ok((await leftovers()).keys.length > 0, 'kept');
    const cleaned = await runCli(['clean', '--url', handle.url, '--queue', 'race-fails-kept']);
    assert.equal(cleaned.code, 0, cleaned.stderr);
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test('--keep, and a later mode fails: the one line names what the modes that went well before it kept', async () => {
    const path = scriptFile('fails-later.lua', FAILS_AT_RUN_TIME);
    const result = await runCli(['--url', handle.url, '--mode', 'atomic,script', '--script', path, '--jobs', '100', '--queue', 'race-later', '--keep']);
    assert.equal(result.code, 3);
    assert.match(
      oneErrorLine(result.stderr) ?? result.stderr,
      /; the runs that finished before it kept \(--keep\) queue race-later-atomic \(emq:\{race-later-atomic\}:\*\): remove it with emq-race clean --queue race-later-atomic \(and the same --url\)$/,
    );
    for (const queue of ['race-later-atomic', 'race-later-script']) {
      const cleaned = await runCli(['clean', '--url', handle.url, '--queue', queue]);
      assert.equal(cleaned.code, 0, cleaned.stderr);
    }
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test('a missing script file is a usage error', async () => {
    const result = await runCli(['--url', handle.url, '--script', '/nonexistent/sweep.lua']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^emq-race: --script: cannot read .*no such file\n$/);
  });

  test('a script or PEM file that is no plain file, or far too large, is refused before it is read, with nothing written', async () => {
    const big = scriptFile('big.lua', `-- ${'x'.repeat(5 * 1024 * 1024)}\nreturn {}`);
    const fifo = join(dirname(big), 'sweep.lua');
    execFileSync('mkfifo', [fifo]);
    for (const [args, why] of [
      [['--script', '/dev/zero'], /^emq-race: --script: cannot read "\/dev\/zero": it is no plain file \(a device, a pipe or a socket\)\n$/],
      // Opening a pipe with no writer would wait past every signal: it is never opened.
      [['--script', fifo], /^emq-race: --script: cannot read ".+": it is no plain file/],
      [['--script', big], /^emq-race: --script: cannot read ".+": it holds 6 MB, more than the 4 MB such a file ever needs\n$/],
      [['--tls-ca', '/dev/zero'], /^emq-race: --tls-ca: "\/dev\/zero": it is no plain file/],
    ] as const) {
      const url = args[0] === '--tls-ca' ? `rediss://127.0.0.1:${new URL(handle.url).port}` : handle.url;
      const result = await runCli(['--url', url, ...args]);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, why);
    }
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test('--script with --mode atomic runs both, and the built-in script as a user script is clean', async () => {
    const path = scriptFile('same.lua', BUILT_IN_SCRIPT);
    const result = await runCli(['--url', handle.url, '--mode', 'atomic', '--script', path, '--jobs', '120', '--sweepers', '8', '--json', '--expect', 'clean']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as JsonReport;
    assert.deepEqual(
      report.runs.map((r) => r.mode),
      ['atomic', 'script'],
    );
    assert.equal(report.runs[1]?.misreported, 0);
  });

  test('a user script that renews leases, pads ids or pushes a live job and junk: each wrong thing counted, never clean', async () => {
    const cases = [
      // 100 expired jobs left in active, leases an hour on: unreclaimed, though none is still expired.
      { name: 'renews.lua', source: RENEWS_LEASES, expect: { unreclaimed: 100, recoveries: 0 } },
      // Every push names no job: 100 stray entries, and 100 jobs in no place at all.
      { name: 'padded.lua', source: PUSHES_PADDED_IDS, expect: { strayEntries: 100, lostJobs: 100 } },
      // Live job 101 (ids after the 100 expired ones) pushed while its lease holds: stolen.
      { name: 'live.lua', source: pushesLiveJobAndJunk(101), expect: { stolenLeases: 1 } },
    ];
    for (const { name, source, expect } of cases) {
      const path = scriptFile(name, source);
      const result = await runCli(['--url', handle.url, '--script', path, '--jobs', '100', '--sweepers', '2', '--batch', '50', '--json', '--expect', 'clean']);
      assert.equal(result.code, 1, `${name}: the expectation is missed: ${result.stderr}`);
      const run = (JSON.parse(result.stdout) as JsonReport).runs[0];
      assert.ok(run);
      for (const [field, value] of Object.entries(expect)) assert.equal(run[field], value, `${name}: ${field}`);
      assert.equal(run.clean, false, name);
      if (name === 'live.lua') assert.ok((run.strayEntries as number) > 0, 'junk pushed at every call: stray entries');
      assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
    }
  });

  test('--trials: every trial in runs, one summary per mode, --expect race over every loop trial', async () => {
    const result = await runCli(['--url', handle.url, '--mode', 'both', '--trials', '3', '--sweepers', '4', '--jobs', '200', '--json', '--expect', 'race']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as JsonReport;
    assert.deepEqual(
      report.runs.map((r) => `${r.mode}${r.trial}`),
      ['atomic1', 'loop1', 'atomic2', 'loop2', 'atomic3', 'loop3'],
    );
    assert.deepEqual(
      report.trials?.map((t) => [t.mode, t.trials]),
      [
        ['atomic', 3],
        ['loop', 3],
      ],
    );
    const [atomic, loop] = report.trials ?? [];
    assert.equal(atomic?.reproductionRate, 0);
    assert.equal(loop?.reproductionRate, 1);
    const loopDoubles = report.runs
      .filter((r) => r.mode === 'loop')
      .map((r) => r.doubleRecoveries)
      .sort((a, b) => a - b);
    assert.deepEqual(loop?.doubleRecoveries, { min: loopDoubles[0], median: loopDoubles[1], max: loopDoubles[2] });
    const expectClean = await runCli(['--url', handle.url, '--mode', 'both', '--trials', '2', '--sweepers', '4', '--jobs', '200', '--expect', 'clean']);
    assert.equal(expectClean.code, 1);
    assert.match(expectClean.stdout, /min \/ median \/ max per trial/);
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test('--trials with --queues: each trial runs every queue on fresh names, summarised over its totals row', async () => {
    const result = await runCli([
      '--url',
      handle.url,
      '--mode',
      'both',
      '--queues',
      '2',
      '--trials',
      '2',
      '--sweepers',
      '4',
      '--jobs',
      '200',
      '--queue',
      'tq',
      '--json',
      '--expect',
      'race',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as JsonReport & { totals: JsonRun[] };
    assert.deepEqual(
      report.runs.map((r) => `${r.mode}${r.trial}:${r.queue}`),
      [
        'atomic1:tq-atomic-t1-0',
        'atomic1:tq-atomic-t1-1',
        'loop1:tq-loop-t1-0',
        'loop1:tq-loop-t1-1',
        'atomic2:tq-atomic-t2-0',
        'atomic2:tq-atomic-t2-1',
        'loop2:tq-loop-t2-0',
        'loop2:tq-loop-t2-1',
      ],
    );
    assert.deepEqual(
      report.totals.map((t) => [t.mode, t.trial, t.jobs]),
      [
        ['atomic', 1, 400],
        ['loop', 1, 400],
        ['atomic', 2, 400],
        ['loop', 2, 400],
      ],
    );
    for (const total of report.totals) {
      const queues = report.runs.filter((r) => r.mode === total.mode && r.trial === total.trial);
      assert.equal(
        total.doubleRecoveries,
        queues.reduce((sum, r) => sum + r.doubleRecoveries, 0),
      );
    }
    assert.deepEqual(
      report.trials?.map((t) => [t.mode, t.trials, t.reproductionRate]),
      [
        ['atomic', 2, 0],
        ['loop', 2, 1],
      ],
    );
    const loopTotals = report.totals
      .filter((t) => t.mode === 'loop')
      .map((t) => t.doubleRecoveries)
      .sort((a, b) => a - b);
    assert.deepEqual(report.trials?.[1]?.doubleRecoveries, {
      min: loopTotals[0],
      median: ((loopTotals[0] ?? 0) + (loopTotals[1] ?? 0)) / 2,
      max: loopTotals[1],
    });
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test("--csv: the JSON's field names as a quoted header row, then one quoted row per run with its queue and node", async () => {
    const result = await runCli(['--url', handle.url, '--mode', 'watch,claim', '--jobs', '60', '--queue', 'csvq', '--csv']);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 3);
    const header = JSON.parse(`[${lines[0] ?? ''}]`) as string[];
    assert.deepEqual(header, [...csvFields()]);
    const node = new URL(handle.url).host;
    const rows = lines.slice(1).map((line) => Object.fromEntries((JSON.parse(`[${line}]`) as string[]).map((value, i) => [header[i], value])));
    assert.deepEqual(
      rows.map((row) => [row.trial, row.mode, row.queue, row.node, row.jobs, row.recoveries, row.clean, row.anomalies]),
      [
        ['1', 'watch', 'csvq-watch', node, '60', '60', 'true', '0'],
        ['1', 'claim', 'csvq-claim', node, '60', '60', 'true', '0'],
      ],
    );
    // A figure not measured (no workers, no observer) is an empty field, not a zero.
    assert.deepEqual(
      rows.map((row) => [row.samples, row.executions]),
      [
        ['', ''],
        ['', ''],
      ],
    );
  });

  test('Ctrl-C during a function run: exit 130, the library and the keys are gone', async () => {
    const child = spawn(
      process.execPath,
      [BIN, '--url', handle.url, '--mode', 'function', '--jobs', '5000', '--batch', '1', '--interval', '1', '--live', '0'],
      {
        env: { ...process.env, REDIS_URL: '', NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    let library = '';
    for (let i = 0; i < 400 && !library; i++) {
      const list = (await admin.call('FUNCTION', 'LIST')) as unknown[][];
      library = list.length > 0 ? String(list[0]?.[1]) : '';
      if (!library) await sleep(25);
    }
    assert.match(library, /^emq_race_[0-9a-f]{16}$/);
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.match(stderr, /SIGINT received, cleaning up/);
    assert.deepEqual(await leftovers(), { keys: [], libraries: 0 });
  });

  test('flag errors: --pending, --mode script without --script, --csv with --json', async () => {
    for (const [args, pattern] of [
      [['--pending', 'hash'], /--pending: "hash" is not a pending type/],
      [['--mode', 'script'], /--mode script: needs --script/],
      [['--csv', '--json'], /pick one output format/],
      [['--mode', 'loop,bogus'], /--mode: "bogus" is not a mode/],
      [['--trials', '0'], /--trials: 0 is out of range/],
    ] as const) {
      const result = await runCli(['--url', handle.url, ...args]);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, pattern);
    }
  });
});

/**
 * What a new user meets first, run in-process: the line under the table on why the atomic run is
 * clean (and where to watch the loop fail), `--expect`'s verdict line on a pass, help at one
 * standard for every subcommand, -v, an unknown help topic, and on a terminal a progress line
 * that keeps the time left in 80 columns and is never glued to the signal's message.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { whyAtomicClean } from '../../src/report/report.js';
import { queueKeys } from '../../src/queue/keys.js';
import { seedJobs, seedSlices } from '../../src/queue/seed.js';
import { serverTimeMs } from '../../src/server/clock.js';
import { stripAnsi } from '../../src/shared/text.js';
import { VERSION } from '../../src/shared/model.js';
import { forOneServerKind } from '../helpers/servers.js';
import { runInProcess, startInProcess } from '../helpers/in-process.js';
import { runResult } from '../helpers/run-result.js';
import { unwrapped } from '../helpers/cli.js';
import { within } from '../helpers/cli-process.js';

const NARROW = { env: { NO_COLOR: '1', COLUMNS: '80' } };

const overlong = (text: string, width: number): string[] =>
  stripAnsi(text)
    .split('\n')
    .filter((line) => [...line].length > width);

test('why atomic is clean: said when every atomic run is clean, never when one is not or none ran', () => {
  const [line] = whyAtomicClean([runResult({ mode: 'atomic' }), runResult({ mode: 'loop', duplicatePending: 3 })]);
  assert.match(
    line ?? '',
    /^atomic is clean because the server runs a script whole, on its one command thread: no second sweep can run between its steps\. .*emq-race explain$/,
  );
  assert.deepEqual(whyAtomicClean([runResult({ mode: 'atomic', lostJobs: 20 })]), [], 'a run the server broke is not called clean');
  assert.deepEqual(whyAtomicClean([runResult({ mode: 'loop', duplicatePending: 3 })]), []);
});

describe('help', () => {
  test('-v and -V print the version, as --version does', async () => {
    for (const flag of ['-v', '-V', '--version']) {
      const result = await runInProcess([flag]);
      assert.deepEqual([result.code, result.stdout, result.stderr], [0, `${VERSION}\n`, ''], flag);
    }
  });

  test('help for an unknown topic is one error line and exit 2, with or without --json', async () => {
    const result = await runInProcess(['help', 'nosuch']);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    // A word that is no command mistyped is not shown: it may be a password typed there.
    assert.equal(
      result.stderr,
      "emq-race: help: that word (not shown: it may be a password) is not a command; the commands are clean, explain, explore, grid (emq-race --help for the race's own flags)\n",
    );
    assert.match((await runInProcess(['help', 'gird'])).stderr, /^emq-race: help: "gird" is not a command; the commands are /);
    const json = await runInProcess(['--json', 'help', 'nosuch']);
    assert.equal(json.code, 2);
    assert.match(json.stdout, /^\{"version":.*"error":\{"exit":2,"message":"help: that word \(not shown: it may be a password\) is not a command/);
    assert.equal(json.stderr.split('\n').filter(Boolean).length, 1);
    // Flags before `help`, with their values, are no topic.
    const flagged = await runInProcess(['--url', 'redis://127.0.0.1:1', 'help', 'grid']);
    assert.equal(flagged.code, 0, flagged.stderr);
    assert.match(flagged.stdout, /^Usage: emq-race grid \[options\]/);
  });

  const headings = (text: string): string[] => text.split('\n').filter((line) => /^[A-Z][^:]*:$/.test(line));
  const cases: [string, string[]][] = [
    [
      'grid',
      [
        'Grid:',
        'Race:',
        'Your queue library:',
        'Server and connection:',
        'Output and CI:',
        'What the race costs:',
        'Realism:',
        'Scale:',
        'Modes (--mode, or a comma list):',
        'Examples:',
      ],
    ],
    ['explain', ['Replay:', 'Server and connection:', 'Output:', 'Examples:']],
    ['explore', ['Explore:', 'Server and connection:', 'Output:', 'Examples:']],
    ['clean', ['What to remove:', 'Server and connection:', 'Help:', 'Examples:']],
  ];
  for (const [command, groups] of cases) {
    test(`help ${command}: every flag in a group, examples, no reference to a section that is not there, 80 columns`, async () => {
      for (const args of [
        ['help', command],
        [command, '--help'],
      ]) {
        const result = await runInProcess(args, NARROW);
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, new RegExp(`^Usage: emq-race ${command} \\[options\\]`));
        assert.deepEqual(headings(result.stdout), groups, 'no "Options:" left over: every flag is grouped');
        assert.match(result.stdout, new RegExp(`^Examples:\\n {2}emq-race ${command}( |\\n)`, 'm'));
        assert.match(result.stdout, /^Exit codes: those of emq-race itself \(emq-race --help lists them\)\.$/m);
        // "(see Modes below)" on --mode: the modes are below.
        if (/Modes below/.test(result.stdout)) assert.match(result.stdout, /^Modes \(--mode, or a comma list\):$/m);
        assert.deepEqual(overlong(result.stdout, 80), []);
      }
    });
  }

  test("the main help lists the help command and its examples name every subcommand's help", async () => {
    const result = await runInProcess(['--help'], NARROW);
    assert.match(result.stdout, /^ {2}help \[command\] +show help for a command$/m);
    assert.match(result.stdout, /^ {2}emq-race help explain$/m);
    assert.deepEqual(overlong(result.stdout, 80), []);
  });
});

// The subject is what the first screen prints, the same on either server kind: one kind for this file.
forOneServerKind(import.meta.url, 'the first screen', (handle) => {
  test('the table says why atomic is clean and points to explain; --json and --csv do not; --expect says it was met', async () => {
    const table = await runInProcess(['--url', handle.url, '--mode', 'atomic,loop', '--sweepers', '8', '--jobs', '300', '--expect', 'atomic=clean'], NARROW);
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      unwrapped(table.stdout),
      /^atomic is clean because the server runs a script whole, on its one command thread: no second sweep can run between its steps\. To watch the loop of round trips go wrong step by step, on one job: emq-race explain$/m,
    );
    assert.deepEqual(overlong(table.stdout, 80), []);
    assert.equal(table.stderr, 'emq-race: expectation met: atomic=clean\n');
    for (const format of ['--json', '--csv']) {
      const machine = await runInProcess(['--url', handle.url, '--mode', 'atomic', '--jobs', '100', format, '--expect', 'clean']);
      assert.equal(machine.code, 0, machine.stderr);
      assert.doesNotMatch(machine.stdout, /atomic is clean|emq-race explain/, format);
      assert.equal(machine.stderr, 'emq-race: expectation met: atomic=clean\n', `${format}: the verdict on stderr, stdout left to the ${format} alone`);
    }
  });

  test('seeding reports every batch as it lands: their jobs add up to the queue', async () => {
    const redis = new Redis(handle.url);
    const keys = queueKeys('race-seedbatches');
    try {
      const batches: number[] = [];
      const jobs = 12_345;
      await seedJobs(redis, keys, { jobs, runId: 'seed-batches', stalledBefore: 0, serverNowMs: await serverTimeMs(redis) }, undefined, (count) =>
        batches.push(count),
      );
      assert.equal(batches.length, seedSlices(1, jobs, 5000).length, 'one report per server-side call');
      assert.equal(
        batches.reduce((sum, count) => sum + count, 0),
        jobs,
      );
      assert.equal(await redis.zcard(keys.active), jobs);
    } finally {
      const ours = await redis.keys('emq:{race-seedbatches}:*');
      for (let at = 0; at < ours.length; at += 1000) await redis.del(...ours.slice(at, at + 1000));
      await redis.quit();
    }
  });

  test("on an 80-column terminal: the progress line keeps the time left, and a signal's message starts a line of its own", async () => {
    // Long by its own pace: each of 2 sweepers rests 400 ms between its sweeps of 10 jobs.
    const started = startInProcess(['--url', handle.url, '--mode', 'atomic', '--jobs', '200', '--batch', '10', '--interval', '400', '--live', '0'], {
      env: { NO_COLOR: '1' },
      stderrIsTty: true,
      stderrColumns: 80,
    });
    await within(
      30_000,
      'a progress line',
      (async () => {
        while (!/leases reclaimed|\(\d+%\)/.test(started.stderr())) await new Promise((resolve) => setTimeout(resolve, 50));
      })(),
    );
    process.kill(process.pid, 'SIGINT');
    const result = await within(30_000, 'the interrupted run', started.done);
    assert.equal(result.code, 130, result.rawStderr);
    const drawn = result.rawStderr
      .split('\r\x1b[2K')
      .map((text) => text.split('\n')[0] ?? '')
      .filter((text) => /\(\d+%\)/.test(text));
    assert.ok(drawn.length > 0, result.rawStderr);
    for (const line of drawn) {
      assert.ok([...line].length <= 79, `within 79 columns: ${line}`);
      assert.match(
        line,
        /^atomic: [\d,]+\/200( leases reclaimed)? \(\d+%\).*(about \d+s left|time left unknown)$/,
        'the time left, at the end where the cut would take it first, is kept',
      );
    }
    const at = result.rawStderr.indexOf('emq-race: SIGINT received');
    assert.ok(at > 0, result.rawStderr);
    assert.equal(result.rawStderr[at - 1], '\n', `the message on a line of its own: ${JSON.stringify(result.rawStderr.slice(Math.max(0, at - 60), at + 30))}`);
  });
});

/**
 * What a person sees first, through the built CLI on the embedded server: output that fits an
 * 80-column terminal (colour codes not counted), every column with --wide, help that is grouped
 * and ends in examples, `help <command>`, a closed pipe met without a stack trace, and progress
 * in a CI log on stderr only.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { tableColumns } from '../../src/report/report.js';
import { stripAnsi } from '../../src/shared/text.js';
import { BIN, runCli, type CliResult, unwrapped } from '../helpers/cli.js';
import { withoutProgress } from '../helpers/progress-lines.js';

const NARROW = { COLUMNS: '80' };

/** Lines of `text` wider than `width` columns once colour codes are taken out. */
function overlong(text: string, width: number): string[] {
  return stripAnsi(text)
    .split('\n')
    .filter((line) => [...line].length > width);
}

/** `emq-race ARGS` in colour, as on a terminal 80 columns wide (the codes take no room). */
const coloured = (args: readonly string[]): Promise<CliResult> => runCli(args, { ...NARROW, NO_COLOR: '', FORCE_COLOR: '1' });

/** The plain `emq-race`, run once: its width and its table are both checked on it. */
let plainRun: Promise<CliResult> | undefined;
const plain = (): Promise<CliResult> => (plainRun ??= coloured([]));

// The help's `--mode all --sweepers 8` example on 200 jobs: every mode's column, row and sentence
// is there as at 1,000 (the loop's anomalies too), and the table and the sentences are fitted to
// the width whatever the figures; the plain run keeps the default's 1,000.
const ALL = ['--mode', 'all', '--sweepers', '8', '--jobs', '200'];

for (const args of [[], ALL, [...ALL, '--workers', '2', '--observe'], ['explain']]) {
  test(`COLUMNS=80 emq-race ${args.join(' ')}: no line longer than 80 columns`, async () => {
    const result = await (args.length === 0 ? plain() : coloured(args));
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(overlong(result.stdout, 80), []);
    assert.deepEqual(overlong(result.stderr, 80), []);
  });
}

test('the fitted table: a column per mode, thousands grouped, anomalies not in a row of their own named under it', async () => {
  // The plain run's: both modes (atomic and loop), 1,000 jobs each, a tenth of them more live
  // beside them (not counted as jobs, and never recovered); the colour taken out.
  const run = await plain();
  assert.equal(run.code, 0, run.stderr);
  const result = { ...run, stdout: stripAnsi(run.stdout) };
  assert.match(result.stdout, /^ +atomic +loop$/m);
  assert.match(result.stdout, /^jobs +1,000 +1,000$/m);
  assert.match(result.stdout, /^recoveries +1,000 +[\d,]+$/m);
  for (const label of ['double recoveries', 'duplicate pending', 'lost increments', 'lost jobs', 'other anomalies']) {
    assert.match(result.stdout, new RegExp(`^${label} +0 +[\\d,]+$`, 'm'), label);
  }
  assert.match(result.stdout, /^jobs\/s +[\d,]+ +[\d,]+$/m);
  // "other anomalies" is never a silent sum: where it is not zero, the line under the table names it.
  const other = /^other anomalies +0 +([\d,]+)$/m.exec(result.stdout)?.[1];
  if (other !== '0') assert.match(result.stdout, /^other anomalies: loop /m);
  else assert.doesNotMatch(result.stdout, /^other anomalies:/m);
});

test('--wide prints every column, one row per run', async () => {
  const result = await runCli(['--mode', 'atomic,loop', '--jobs', '300', '--wide'], NARROW);
  assert.equal(result.code, 0, result.stderr);
  // The plain race's columns; the ones for workers, faults and the like appear with those flags.
  const heads = tableColumns()
    .filter((column) => !column.applies || ['stolen\nleases'].includes(column.head))
    .map((column) => column.head);
  for (const head of heads) for (const word of head.split('\n')) assert.ok(result.stdout.includes(word), `${head.replace('\n', ' ')} is a column`);
  assert.match(result.stdout, /│ atomic +│ +2 │ +300 │ +300 │/);
  assert.match(result.stdout, /│ loop +│ +2 │ +300 │/);
  assert.ok(overlong(result.stdout, 80).length > 0, 'wider than the terminal, as asked');
});

test("--help: grouped options, every mode described, examples and exit codes; help explain prints explain's help", async () => {
  const help = await runCli(['--help'], NARROW);
  assert.equal(help.code, 0, help.stderr);
  const headings = help.stdout.split('\n').filter((line) => /^[A-Z][^:]*:$/.test(line));
  assert.deepEqual(headings, [
    'Race:',
    'Your queue library:',
    'Server and connection:',
    'Output and CI:',
    'What the race costs:',
    'Replay and shrink:',
    'Realism:',
    'Scale:',
    'Commands:',
    'Modes (--mode, or a comma list):',
    'Examples:',
    'Exit codes:',
    'With --json a failure still prints one object on stdout:',
  ]);
  for (const mode of ['atomic', 'loop', 'watch', 'claim', 'function', 'script']) assert.match(help.stdout, new RegExp(`^  ${mode} +\\S`, 'm'), mode);
  assert.match(help.stdout, /^Examples:\n {2}emq-race\n/m);
  assert.match(help.stdout, /emq-race --url 'redis:\/\/:PASSWORD@/);
  assert.match(help.stdout, /--expect clean/);
  assert.match(help.stdout, /^ {2}emq-race explain$/m);
  assert.match(help.stdout, /--html race\.html/);
  assert.match(help.stdout, /^ {2}129 +stopped by SIGHUP/m);
  assert.deepEqual(overlong(help.stdout, 80), []);
  const explain = await runCli(['help', 'explain'], NARROW);
  assert.equal(explain.code, 0, explain.stderr);
  assert.match(explain.stdout, /^Usage: emq-race explain \[options\]/);
  assert.match(explain.stdout, /--schedule <steps>/);
});

/** Runs `emq-race ARGS | READER` in a shell; the tool's own exit status comes back on stderr. */
function piped(args: readonly string[], reader: string): Promise<{ stdout: string; stderr: string; status: number }> {
  const command = `"$0" "$@" | ${reader}; echo "status=\${PIPESTATUS[0]}" >&2`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command, process.execPath, BIN, ...args], {
      env: { ...process.env, REDIS_URL: '', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    // A run that a loaded machine slows past 5 s adds its progress lines to stderr, as it may: set apart.
    child.on('close', () =>
      resolve({
        stdout,
        stderr: withoutProgress(stderr.replace(/status=\d+\n$/, '')),
        status: Number(/status=(\d+)\n$/.exec(stderr)?.[1] ?? -1),
      }),
    );
  });
}

test('a closed pipe: --help | head -1 and --json | head -c 10 end quietly, help with exit 0', async () => {
  // `true` reads nothing and leaves at once: every write the tool makes meets a closed pipe.
  for (const [args, reader] of [
    [['--help'], 'head -1'],
    [['--help'], 'true'],
    [['help', 'explain'], 'true'],
    [['--json', '--jobs', '200'], 'head -c 10'],
    [['--json', '--jobs', '200'], 'true'],
    [['--jobs', '200'], 'true'],
  ] as const) {
    const result = await piped(args, reader);
    const what = `${args.join(' ')} | ${reader}`;
    assert.equal(result.stderr, '', `${what}: nothing on stderr`);
    assert.equal(result.status, 0, what);
    if (reader === 'head -1') assert.equal(result.stdout, 'Usage: emq-race [options] [command]\n');
    if (reader === 'head -c 10') assert.equal(result.stdout, '{"version"');
  }
});

/** Runs `emq-race ARGS > /dev/full` in a shell: every write to stdout fails with ENOSPC. */
function intoFullDisk(args: readonly string[]): Promise<{ stderr: string; status: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', '"$0" "$@" > /dev/full', process.execPath, BIN, ...args], {
      env: { ...process.env, REDIS_URL: '', NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ stderr: withoutProgress(stderr), status: status ?? -1 }));
  });
}

test('a report stdout cannot take (a full disk) is no success: exit 4 and one line; a failure keeps its code', async () => {
  for (const [args, status, more] of [
    [['--json', '--jobs', '200', '--expect', 'loop=race'], 4, /^emq-race: expectation met: loop=race\n/],
    [['--jobs', '200'], 4, /^/],
    [['--url', 'redis://127.0.0.1:1', '--json'], 3, /^emq-race: cannot reach the server at redis:\/\/127\.0\.0\.1:1: connection refused\n/],
    // The version and the help, which print without the run's modules, lose theirs the same way.
    [['--version'], 4, /^/],
    [['--help'], 4, /^/],
    [['explain', '--help'], 4, /^/],
  ] as const) {
    const result = await intoFullDisk(args);
    const what = args.join(' ');
    assert.equal(result.status, status, `${what}: ${result.stderr}`);
    assert.match(result.stderr, more, what);
    assert.match(result.stderr, /emq-race: stdout could not take the output \(ENOSPC\): what the command printed there is lost\n$/, what);
  }
});

test('without a terminal, a run longer than 5 s prints plain progress lines on stderr, and none on stdout', async () => {
  // Long by its own pace: 20 sweeps of 10 jobs, each sweeper resting 700 ms between its sweeps.
  const result = await runCli(['--mode', 'atomic', '--jobs', '200', '--batch', '10', '--interval', '700', '--live', '0', '--json'], { COLUMNS: '' });
  assert.equal(result.code, 0, result.stderr);
  assert.ok(result.progress.length > 0, 'a progress line');
  for (const wrapped of result.progress) {
    assert.ok(
      wrapped.split('\n').every((line) => [...line].length <= 80),
      `within 80 columns: ${wrapped}`,
    );
    const line = unwrapped(wrapped);
    assert.match(
      line,
      /^progress: atomic: [\d,]+\/200 leases reclaimed \(\d+%\), [\d,]+ jobs\/s, \d+s elapsed(, about \d+s left|, time left unknown)? \(queue race-[0-9a-f]{8}\)\n$/,
    );
  }
  assert.doesNotMatch(result.stdout, /progress|leases reclaimed/);
  assert.equal((JSON.parse(result.stdout) as { runs: { recoveries: number }[] }).runs[0]?.recoveries, 200);
  assert.equal(result.stderr, '', 'nothing else on stderr');
});

/** The scale flags as a user meets them: JSON latency fields, --loop-jobs, the --batch ceiling. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { BIN, runCli, unwrapped } from '../helpers/cli.js';

interface JsonRun {
  mode: string;
  jobs: number;
  callMsP50: number | null;
  callMsP99: number | null;
  callMsMax: number | null;
  serverCallMsP99: number | null;
}

test('--json reports call latencies for atomic (client and, on the embedded server, server side) and null for the loop', async () => {
  const result = await runCli(['--mode', 'both', '--jobs', '600', '--loop-jobs', '100', '--sweepers', '4', '--json']);
  assert.equal(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as { runs: JsonRun[] };
  const atomic = report.runs.find((r) => r.mode === 'atomic');
  const loop = report.runs.find((r) => r.mode === 'loop');
  assert.ok(atomic && loop);
  assert.equal(atomic.jobs, 600);
  assert.equal(loop.jobs, 100);
  for (const value of [atomic.callMsP50, atomic.callMsP99, atomic.callMsMax, atomic.serverCallMsP99]) {
    assert.equal(typeof value, 'number');
    assert.ok((value as number) > 0);
  }
  assert.ok((atomic.callMsP50 as number) <= (atomic.callMsP99 as number));
  assert.ok((atomic.callMsP99 as number) <= (atomic.callMsMax as number));
  assert.deepEqual([loop.callMsP50, loop.callMsP99, loop.callMsMax, loop.serverCallMsP99], [null, null, null, null]);
  assert.equal(result.stderr, '', 'no progress lines when stderr is not a terminal');
});

test("--queues past Node's default of 10 listeners on one signal: no warning of a leak", async () => {
  // In-process: Node's warnings are the process's own, watched here (a spawned run prints them on
  // stderr). Node 20 warns past 10 listeners on an AbortSignal; 22 and 24 do not, so it is on 20
  // (the suite's first Node in CI) that this test can fail.
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  try {
    const result = await runCli(['--mode', 'atomic', '--queues', '12', '--jobs', '10', '--sweepers', '1']);
    assert.equal(result.code, 0, result.stderr);
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(
    warnings.filter((w) => /MaxListeners/.test(w)),
    [],
  );
});

test('the table says when the loop ran on fewer jobs', async () => {
  const result = await runCli(['--jobs', '500', '--loop-jobs', '100', '--sweepers', '2']);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /loop ran on 100 of the 500 jobs \(--loop-jobs/);
  assert.match(result.stdout, /loop \(2 sweepers, 100 jobs\)/);
});

test('under --trials too: the note of a loop run on fewer jobs, then where the time went, last, summed per mode over its trials', async () => {
  const noted = await runCli(['--jobs', '500', '--loop-jobs', '100', '--sweepers', '2', '--trials', '2']);
  assert.equal(noted.code, 0, noted.stderr);
  assert.match(unwrapped(noted.stdout), /\nloop ran on 100 of the 500 jobs \(--loop-jobs: a round trip per command is slow by nature\)\n$/);
  // Over PHASES_SHOWN_ABOVE jobs a run takes seconds, and the last line says where they went.
  const timed = await runCli(['--mode', 'atomic', '--jobs', '100001', '--sweepers', '4', '--trials', '2']);
  assert.equal(timed.code, 0, timed.stderr);
  assert.match(
    unwrapped(timed.stdout),
    /\nwhere the time went: atomic, 2 trials, \d+\.\d s \((?:(?:seeding|race|audit|clean-up|claim) \d+\.\d s(?:, |\)\n$)){5}/,
  );
});

test('--batch above the documented maximum and a bad --loop-jobs are usage errors', async () => {
  const batch = await runCli(['--batch', '3001']);
  assert.equal(batch.code, 2);
  assert.match(batch.stderr, /^emq-race: --batch: 3001 is out of range; expected 1 to 3000\n$/);
  const loopJobs = await runCli(['--loop-jobs', '0']);
  assert.equal(loopJobs.code, 2);
  assert.match(loopJobs.stderr, /--loop-jobs/);
});

const TERMINAL = { skip: which('script') ? false : 'needs script(1) from util-linux for a pseudo-terminal' };

/** Runs the tool under script(1), which gives it a terminal for stdout and stderr, the way a person runs it. */
function onTerminal(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, BIN, ...args].map((word) => JSON.stringify(word)).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      env: { ...process.env, REDIS_URL: '', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Each drawing of a terminal's progress line: the piece between two clears, up to its first line end; after the last clear comes the report. */
const rewritesOf = (output: string): string[] =>
  output
    .split(/\r\x1b\[2K/)
    .slice(1, -1)
    .map((piece) => piece.split(/[\r\n]/)[0] ?? '')
    .filter((line) => line.length > 0);

// Each run is long by its own pace, not by work, on an embedded server of its own: the two run side by side.
describe('on a terminal', { concurrency: true }, () => {
  test('on a terminal, a long run shows its progress on stderr: one line fitted to the width, the time left kept', TERMINAL, async () => {
    // The pseudo-terminal has no size of its own, so $COLUMNS gives it one. Long by its own pace
    // (sweeps of 10 jobs, 100 ms apart), not by work: the line needs a run of a few seconds, not load.
    const result = await onTerminal(['--mode', 'loop', '--jobs', '300', '--sweepers', '2', '--batch', '10', '--interval', '100', '--live', '0'], {
      COLUMNS: '60',
    });
    assert.equal(result.code, 0, result.output);
    const rewrites = rewritesOf(result.output);
    assert.ok(rewrites.length > 0, result.output);
    for (const line of rewrites) {
      // What matters least goes first (the queue, the time taken, the rate); the count, the share and the time left stay.
      assert.match(line, /^loop: [\d,]+\/300( leases reclaimed)? \(\d+%\)(, [\d,]+ jobs\/s)?(, \S+ elapsed)?(, about \S+ left|, time left unknown)?$/);
      assert.ok([...line].length <= 59, `${line} (${[...line].length} columns)`);
      assert.ok(!line.endsWith('…'), `fitted by dropping pieces, not cut: ${line}`);
    }
    assert.ok(
      rewrites.some((line) => / left$| left unknown$/.test(line)),
      'the time left is in view',
    );
    assert.doesNotMatch(result.output, /trial 1\/1/, 'no trial count without --trials');
  });

  test('on a terminal with --trials, the progress line follows the name of the trial that runs', TERMINAL, async () => {
    // Two trials of a second and more each, by their own pace as above.
    const result = await onTerminal(
      ['--mode', 'loop', '--trials', '2', '--jobs', '300', '--sweepers', '2', '--batch', '10', '--interval', '100', '--live', '0'],
      {
        COLUMNS: '60',
      },
    );
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, /emq-race: trial 1\/2, loop…/);
    assert.match(result.output, /emq-race: trial 2\/2, loop…/);
    const rewrites = rewritesOf(result.output);
    assert.ok(rewrites.length > 0, result.output);
    for (const line of rewrites) {
      assert.match(line, /^trial [12]\/2, loop: [\d,]+\/300( leases reclaimed)? \(\d+%\)/);
      assert.ok([...line].length <= 59, `${line} (${[...line].length} columns)`);
    }
  });

  test('on a terminal, queues raced side by side share one progress line', TERMINAL, async () => {
    const result = await onTerminal([
      '--mode',
      'loop',
      '--queues',
      '2',
      '--jobs',
      '300',
      '--sweepers',
      '2',
      '--batch',
      '10',
      '--interval',
      '100',
      '--live',
      '0',
    ]);
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, /loop, 2 queues: [\d,]+\/600 leases reclaimed \(\d+%\)/);
    // Each rewrite of the line shows both queues: none names a single queue.
    assert.doesNotMatch(result.output, /\(queue race-/);
  });
});

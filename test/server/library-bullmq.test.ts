/**
 * --lib bullmq against real servers: BullMQ's own stalled recovery stays clean in every trial, the
 * round-trip port deaf to LREM's reply races and the one acting on it does not; the figures equal
 * a count made here from the keys a --keep run leaves; `clean` removes such a run; another
 * application's BullMQ keys on the same server stay byte for byte what they were; and the library
 * missing, or unknown, is a usage error. Sizes are small, as none of it depends on the size: BullMQ's
 * own check runs on 500 jobs, the round-trip ports on 50 (their callers meet before they read
 * `stalled`, so the naive port races on any number of jobs).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.js';
import { foreignBullmq } from '../helpers/foreign-bullmq.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { assertCleanAllSparesForeign, assertNotInstalledRefused, listEntries, useForeignQueue } from '../helpers/foreign-queue.js';
import { forEachServer } from '../helpers/servers.js';

/** The project's folder, whose node_modules holds the bullmq the tests race. */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));

interface JsonRun {
  mode: string;
  trial: number;
  jobs: number;
  clean: boolean;
  recoveries: number;
  duplicatePending: number;
  lostIncrements: number;
  extraIncrements: number;
  overcountedStalls: number;
  overcountedStallCount: number;
  lostJobs: number;
  misplaced: number;
  library?: { name: string; version: string };
  [name: string]: unknown;
}

forEachServer('--lib bullmq', (handle) => {
  const foreign = useForeignQueue(handle, 'bull:', foreignBullmq, 20);

  test('--lib bullmq --sweepers 8, two trials: bullmq and bullmq-guarded clean, bullmq-naive races; each run names the library and its version', async () => {
    const result = await runCli([
      '--url',
      handle.url,
      '--lib',
      'bullmq',
      '--lib-from',
      PROJECT,
      '--sweepers',
      '8',
      '--jobs',
      '500',
      '--loop-jobs',
      '50',
      '--trials',
      '2',
      '--expect',
      'bullmq=clean,bullmq-guarded=clean',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /warning/, 'the pinned version is within the tested range');
    const report = JSON.parse(result.stdout) as { runs: JsonRun[] };
    assertMatchesSchema(report);
    assert.deepEqual(
      report.runs.map((r) => `${r.mode}/${r.trial}`),
      ['bullmq/1', 'bullmq-naive/1', 'bullmq-guarded/1', 'bullmq/2', 'bullmq-naive/2', 'bullmq-guarded/2'],
    );
    for (const run of report.runs) {
      assert.deepEqual(run.library, { name: 'bullmq', version: '6.7.0' });
      assert.equal(run.lostJobs, 0, `${run.mode}: no job lost`);
      assert.equal(run.misplaced, 0, `${run.mode}: no job in two lists`);
      // BullMQ's own check is one script call, timed as the tool's one-call strategies are; a port's check is many round trips.
      const calls = [run.callMsP50, run.callMsP99, run.callMsMax];
      if (run.mode === 'bullmq') {
        assert.ok(
          calls.every((ms) => typeof ms === 'number' && ms > 0),
          JSON.stringify(calls),
        );
        assert.deepEqual(
          [...calls].sort((a, b) => Number(a) - Number(b)),
          calls,
          'p50 <= p99 <= max',
        );
      } else assert.deepEqual(calls, [null, null, null]);
      if (run.mode === 'bullmq-naive') {
        assert.equal(run.jobs, 50, 'the round-trip port runs on --loop-jobs');
        // Every caller past the gate reads `stalled` before any of them deletes it (they meet there),
        // so every naive run races, and shows both: a second push is a duplicate and a second HINCRBY.
        assert.ok(run.duplicatePending > 0, `bullmq-naive trial ${run.trial} raced: ${JSON.stringify(run)}`);
        assert.ok(run.overcountedStalls > 0, JSON.stringify(run));
        assert.equal(run.lostIncrements, 0, 'HINCRBY is atomic: no increment is lost, the counter runs ahead');
      } else {
        assert.equal(run.clean, true, `${run.mode} trial ${run.trial}: ${JSON.stringify(run)}`);
        assert.equal(run.recoveries, run.jobs, 'every stalled job recovered once');
      }
    }
    assert.deepEqual(await foreign.ourKeys(), [], 'every run removed its keys');
    await foreign.assertUntouched("the other application's BullMQ keys are untouched");
  });

  test("--keep: the naive run's figures equal a count made from its kept keys, and clean --all removes the run", () =>
    foreign.keeping(async () => {
      // A kept run: its keys are what the count is made from.
      const queue = `kept-${Math.random().toString(16).slice(2, 8)}`;
      const result = await runCli([
        '--url',
        handle.url,
        '--mode',
        'bullmq-naive',
        '--lib-from',
        PROJECT,
        '--sweepers',
        '8',
        '--jobs',
        '50',
        '--queue',
        queue,
        '--keep',
        '--json',
      ]);
      assert.equal(result.code, 0, result.stderr);
      const run = (JSON.parse(result.stdout) as { runs: JsonRun[] }).runs[0];
      assert.ok(run);
      const base = `emq:{${queue}}:bullmq:`;
      const { perJob, duplicates } = await listEntries(foreign.admin, `${base}wait`);
      // Every entry of wait: one per job there, and the duplicates.
      const waitLength = perJob.size + duplicates;
      let counted = 0;
      let overJobs = 0;
      let overCount = 0;
      for (let id = 1; id <= run.jobs; id++) {
        const stc = Number((await foreign.admin.hget(`${base}${id}`, 'stc')) ?? 0);
        counted += stc;
        if (stc > 1) {
          overJobs++;
          overCount += stc - 1;
        }
      }
      assert.ok(duplicates > 0, `the naive port raced: ${JSON.stringify(run)}`);
      assert.equal(run.duplicatePending, duplicates);
      assert.equal(run.overcountedStalls, overJobs);
      assert.equal(run.overcountedStallCount, overCount);
      // Each recovery the callers recorded is one RPUSH onto wait; stc against them is the counter's gap.
      assert.equal(run.recoveries, waitLength);
      assert.equal(run.lostIncrements, Math.max(0, waitLength - counted));
      assert.equal(run.extraIncrements, Math.max(0, counted - waitLength));
      assert.ok(
        (await foreign.ourKeys()).some((key) => key.startsWith(base)),
        'the keys were kept',
      );

      await assertCleanAllSparesForeign(foreign, handle.url, 'BullMQ');
    }));

  test('--fault lapsed-lock: N jobs whose live worker lets its locks lapse are recovered by BullMQ, run again by a second worker, and the N late completions refused; the figures equal the kept keys', async () => {
    const queue = `lapsed-${Math.random().toString(16).slice(2, 8)}`;
    const jobs = 20;
    const result = await runCli([
      '--url',
      handle.url,
      '--lib',
      'bullmq',
      '--lib-from',
      PROJECT,
      '--mode',
      'bullmq',
      '--fault',
      'lapsed-lock',
      '--sweepers',
      '8',
      '--jobs',
      String(jobs),
      '--queue',
      queue,
      '--keep',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { runs: JsonRun[] };
    assertMatchesSchema(report);
    const [run] = report.runs;
    assert.ok(run);
    const lapsed = run.lapsedLock as Record<string, unknown>;
    assert.equal(lapsed.lapsedJobs, jobs);
    assert.equal(lapsed.recovered, jobs, "BullMQ's check moved each lapsed job back to wait once");
    assert.equal(lapsed.executedTwice, jobs);
    assert.equal(lapsed.lateCompletionsRefused, jobs);
    assert.equal(lapsed.lateCompletionsAccepted, 0);
    assert.match(String(lapsed.refusal), /^Missing lock for job \d+\. moveToFinished/);
    assert.equal(run.doubleExecutions, jobs);
    assert.equal(run.clean, false, 'a job run twice is an anomaly');
    // An independent count from the kept keys: each job taken twice (ats) and run twice (its
    // handlers' count), completed once, counted stalled once.
    const base = `emq:{${queue}}:bullmq:`;
    let ranTwice = 0;
    for (let id = 1; id <= jobs; id++) {
      const [ats, ran, stc] = await foreign.admin.hmget(`${base}${id}`, 'ats', 'emq-race:runs', 'stc');
      assert.equal(ats, '2', `job ${id}: taken twice`);
      if (Number(ran) >= 2) ranTwice++;
      assert.equal(stc, '1', `job ${id}: one stall counted`);
    }
    assert.equal(ranTwice, lapsed.executedTwice);
    assert.equal(await foreign.admin.zcard(`${base}completed`), jobs, 'each job completed, by the second worker');
    assert.equal(await foreign.admin.llen(`${base}active`), 0);
    assert.equal((await runCli(['clean', '--url', handle.url, '--queue', queue])).code, 0);
    assert.deepEqual(await foreign.ourKeys(), []);
    await foreign.assertUntouched("the other application's BullMQ keys are untouched");
  });

  test('--fault lapsed-lock at --max-stalled 1: BullMQ fails each job on its second take without running it, so nothing ran twice', async () => {
    const queue = `lapsed1-${Math.random().toString(16).slice(2, 8)}`;
    const jobs = 20;
    const args = ['--lib', 'bullmq', '--lib-from', PROJECT, '--mode', 'bullmq', '--fault', 'lapsed-lock', '--max-stalled', '1'];
    const result = await runCli(['--url', handle.url, ...args, '--sweepers', '4', '--jobs', String(jobs), '--queue', queue, '--keep', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const [run] = (JSON.parse(result.stdout) as { runs: JsonRun[] }).runs;
    assert.ok(run);
    const lapsed = run.lapsedLock as Record<string, unknown>;
    assert.equal(run.doubleExecutions, 0);
    assert.equal(lapsed.executedTwice, 0);
    const base = `emq:{${queue}}:bullmq:`;
    for (let id = 1; id <= jobs; id++) {
      const [ats, ran] = await foreign.admin.hmget(`${base}${id}`, 'ats', 'emq-race:runs');
      assert.deepEqual([ats, ran], ['2', '1'], `job ${id}: taken twice, its handler run once`);
    }
    assert.equal(await foreign.admin.zcard(`${base}failed`), jobs, 'each job failed on its second take');
    assert.equal((await runCli(['clean', '--url', handle.url, '--queue', queue])).code, 0);
    assert.deepEqual(await foreign.ourKeys(), []);
  });

  test('--fault lapsed-lock where no worker holds a lock: exit 2, one line, nothing written', async () => {
    for (const args of [
      ['--mode', 'atomic'],
      ['--lib', 'node-resque', '--lib-from', PROJECT],
      ['--lib', 'bullmq', '--lib-from', PROJECT, '--mode', 'bullmq,loop'],
    ]) {
      const result = await runCli(['--url', handle.url, ...args, '--fault', 'lapsed-lock']);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /^emq-race: --fault lapsed-lock: /);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    }
    assert.deepEqual(await foreign.ourKeys(), []);
  });

  test('--lib-from a folder without bullmq: exit 2, the line says how to install it, nothing written', async () => {
    await assertNotInstalledRefused(foreign, handle.url, 'bullmq');
  });

  test('an unknown library: exit 2, naming the ones emq-race knows', async () => {
    const result = await runCli(['--url', handle.url, '--lib', 'kue']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /"kue" is not a library emq-race knows; expected one of bullmq/);
  });

  test('a flag a library run cannot honour is refused before anything starts', async () => {
    const result = await runCli(['--url', handle.url, '--lib', 'bullmq', '--workers', '2']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--workers: not with the bullmq modes/);
  });
});

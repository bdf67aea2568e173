/**
 * --lib bee-queue against real servers: Bee-Queue's own checkStalledJobs, called by eight callers
 * at once, puts each stalled job back in `waiting` once (its gate and its LREM guard, in one
 * script); the port in its order, deaf to LREM's reply, puts jobs back more than once once the
 * gate lapses within a check; the port acting on LREM's reply does not. Bee-Queue keeps no stall
 * counter: its counter figures are null in every mode. The figures equal a count made here from
 * the keys a --keep run leaves; `clean --all` removes such a run; another application's Bee-Queue
 * keys on the same server stay byte for byte what they were; and the library missing is a usage
 * error.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import BeeQueue from 'bee-queue';
import { Redis } from 'ioredis';
import { runCli } from '../helpers/cli.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { assertCleanAllSparesForeign, assertNotInstalledRefused, listEntries, useForeignQueue } from '../helpers/foreign-queue.js';
import { forEachServer } from '../helpers/servers.js';

/** The project's folder, whose node_modules holds the Bee-Queue the tests race. */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));
const JOBS = '200';
const MODES = ['bee-queue', 'bee-queue-naive', 'bee-queue-guarded'];
const COUNTER_FIGURES = ['lostIncrements', 'extraIncrements', 'overcountedStalls', 'overcountedStallCount', 'deadLetterEscapes', 'deadLetteredEarly'];

interface JsonRun {
  mode: string;
  queue: string;
  jobs: number;
  clean: boolean;
  recoveries: number;
  doubleRecoveries: number;
  duplicatePending: number;
  mostPendingEntries: number;
  lostJobs: number;
  misplaced: number;
  unreclaimed: number;
  library?: { name: string; version: string };
  [name: string]: unknown;
}

async function until(done: () => Promise<boolean>): Promise<void> {
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Another application's Bee-Queue on the same server (prefix `bq`): jobs waiting, and one held in `active` by a worker that died. */
async function foreignBee(url: string): Promise<void> {
  const { port, hostname } = new URL(url);
  const settings = { redis: { host: hostname, port: Number(port) }, stallInterval: 50, getEvents: false, sendEvents: false };
  const producer = new BeeQueue('mail', { ...settings, isWorker: false });
  await producer.ready();
  await producer.saveAll(Array.from({ length: 10 }, (_, i) => producer.createJob({ to: `user-${i}` })));
  await producer.close();
  const worker = new BeeQueue('mail', { ...settings, isWorker: true });
  await worker.ready();
  worker.process(1, () => new Promise(() => {}));
  const admin = new Redis(url);
  await until(async () => (await admin.llen('bq:mail:active')) === 1);
  // The worker dies holding its job; the gate its first stalled check set lapses.
  await worker.close(1).catch(() => undefined);
  await until(async () => (await admin.exists('bq:mail:stallBlock')) === 0);
  await admin.quit();
}

function parseRuns(stdout: string): JsonRun[] {
  const report = JSON.parse(stdout) as { runs: JsonRun[] };
  assertMatchesSchema(report);
  return report.runs;
}

/** The race every test here runs: 8 callers on JOBS jobs of the installed bee-queue, on `url`. */
function beeRace(url: string): string[] {
  return ['--url', url, '--lib', 'bee-queue', '--lib-from', PROJECT, '--sweepers', '8', '--jobs', JOBS, '--loop-jobs', JOBS];
}

forEachServer('--lib bee-queue', (handle) => {
  const foreign = useForeignQueue(handle, 'bq:', foreignBee, 3);

  test('--lib bee-queue --sweepers 8: its own check and the guarded port are clean, the naive port races, the counter figures are null', async () => {
    const result = await runCli([...beeRace(handle.url), '--expect', 'bee-queue=clean,bee-queue-guarded=clean', '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /warning/, 'the pinned version is within the tested range');
    const runs = parseRuns(result.stdout);
    assert.deepEqual(
      runs.map((r) => r.mode),
      MODES,
    );
    let naive = runs.find((r) => r.mode === 'bee-queue-naive');
    for (const run of runs) {
      assert.deepEqual(run.library, { name: 'bee-queue', version: '2.0.0' });
      assert.equal(run.jobs, Number(JOBS));
      for (const field of COUNTER_FIGURES) assert.equal(run[field], null, `${run.mode}: ${field} not measured`);
      assert.equal(run.lostJobs, 0, `${run.mode}: no job lost`);
      assert.equal(run.misplaced, 0, `${run.mode}: no job in two places`);
      assert.equal(run.unreclaimed, 0, `${run.mode}: no job left in active`);
      // Bee-Queue's own check is one script call, timed; a port's check is many round trips.
      const calls = [run.callMsP50, run.callMsP99, run.callMsMax];
      if (run.mode === 'bee-queue')
        assert.ok(
          calls.every((ms) => typeof ms === 'number' && ms > 0),
          JSON.stringify(calls),
        );
      else assert.deepEqual(calls, [null, null, null]);
      // Each move a caller recorded is one entry in waiting.
      assert.equal(run.duplicatePending, run.doubleRecoveries, JSON.stringify(run));
      if (run.mode !== 'bee-queue-naive') {
        assert.equal(run.clean, true, JSON.stringify(run));
        assert.equal(run.recoveries, run.jobs, 'every stalled job put back once');
      }
    }
    // The naive port races when a second caller is let in while the first is still in its loop:
    // the run sizes the gate to lapse within a check (a quarter of its round trips, measured). A
    // run where no caller's timer fired in time is raced again, three times at most.
    for (let more = 0; (naive?.duplicatePending ?? 0) === 0 && more < 3; more++) {
      const again = await runCli(['--url', handle.url, '--mode', 'bee-queue-naive', '--lib-from', PROJECT, '--sweepers', '8', '--loop-jobs', JOBS, '--json']);
      assert.equal(again.code, 0, again.stderr);
      naive = parseRuns(again.stdout)[0];
    }
    assert.ok((naive?.duplicatePending ?? 0) > 0, `the naive port raced: ${JSON.stringify(naive)}`);
    assert.equal(naive?.clean, false);
    assert.deepEqual(await foreign.ourKeys(), [], 'every run removed its keys');
    await foreign.assertUntouched("the other application's Bee-Queue keys are untouched");
  });

  test("--keep: each mode's figures equal a count made from its kept keys, and clean --all removes the runs", () =>
    foreign.keeping(async () => {
      const queue = `kept-${Math.random().toString(16).slice(2, 8)}`;
      const result = await runCli([...beeRace(handle.url), '--queue', queue, '--keep', '--json']);
      assert.equal(result.code, 0, result.stderr);
      for (const run of parseRuns(result.stdout)) {
        const base = `emq:{${run.queue}}:bee-queue:`;
        const { perJob, duplicates, most } = await listEntries(foreign.admin, `${base}waiting`);
        assert.equal(perJob.size, run.jobs, `${run.mode}: every job is in waiting`);
        assert.equal(run.duplicatePending, duplicates, run.mode);
        assert.equal(run.mostPendingEntries, most, run.mode);
        assert.equal(run.recoveries, run.jobs + duplicates, `${run.mode}: each recovery the callers recorded is one entry in waiting`);
        assert.equal(await foreign.admin.llen(`${base}active`), run.unreclaimed, run.mode);
        assert.equal(run.unreclaimed, 0, run.mode);
        assert.equal(await foreign.admin.hlen(`${base}jobs`), run.jobs, `${run.mode}: Bee-Queue's own hash holds every job`);
      }

      await assertCleanAllSparesForeign(foreign, handle.url, 'Bee-Queue');
    }));

  test('--lib-from a folder without bee-queue: exit 2, the line says how to install it, nothing written', async () => {
    await assertNotInstalledRefused(foreign, handle.url, 'bee-queue');
  });
});

/**
 * --lib node-resque against real servers: node-resque's own cleanOldWorkers, called by eight
 * callers at once, pushes the jobs of dead workers onto `failed` more than once (it reads, then
 * removes, in separate round trips), and so does the port in its order; the port acting on SREM's
 * reply does not. The figures equal a count made here from the keys a --keep run leaves; `clean`
 * removes such a run; another application's node-resque keys on the same server stay byte for
 * byte what they were; and the library missing is a usage error. Sizes are small: each run seeds
 * 40 dead workers (cleanOldWorkers reads the whole `workers` set once per worker it cleans).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Queue, Worker } from 'node-resque';
import { runCli } from '../helpers/cli.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { assertCleanAllSparesForeign, assertNotInstalledRefused, listEntries, useForeignQueue } from '../helpers/foreign-queue.js';
import { commandsBySource } from '../helpers/monitor.js';
import { forEachServer } from '../helpers/servers.js';

/** The project's folder, whose node_modules holds the node-resque the tests race. */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));
const JOBS = '40';

interface JsonRun {
  mode: string;
  trial: number;
  jobs: number;
  clean: boolean;
  recoveries: number;
  doubleRecoveries: number;
  duplicatePending: number;
  lostIncrements: number;
  extraIncrements: number;
  lostJobs: number;
  misplaced: number;
  unreclaimed: number;
  library?: { name: string; version: string };
  [name: string]: unknown;
}

/** Another application's node-resque on the same server (namespace `resque`): jobs queued, and a dead worker holding one. */
async function foreignResque(url: string): Promise<void> {
  const { port, hostname } = new URL(url);
  const connection = { host: hostname, port: Number(port), namespace: 'resque' };
  const queue = new Queue({ connection });
  await queue.connect();
  for (let i = 0; i < 10; i++) await queue.enqueue('mail', 'send', [i]);
  await queue.end();
  const worker = new Worker(
    { connection: { ...connection }, name: 'mailer-1', queues: ['mail'], looping: false, timeout: 600_000 },
    { send: { perform: () => new Promise(() => {}) } },
  );
  await worker.connect();
  await worker.start();
  const admin = new Redis(url);
  while ((await admin.exists('resque:worker:mailer-1:mail')) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  await admin.quit();
  // The worker dies: its ping stops, its job stays taken, its connection goes.
  if (worker.pingTimer) clearInterval(worker.pingTimer);
  worker.connection.redis.disconnect();
}

/** A failure's job id: the first argument of its payload. */
const failedJobId = (entry: string): string => String((JSON.parse(entry) as { payload: { args: unknown[] } }).payload.args[0]);

forEachServer('--lib node-resque', (handle) => {
  const foreign = useForeignQueue(handle, 'resque:', foreignResque, 5);
  /** A race of the project's node-resque on this server, 8 callers on JOBS jobs, its report as JSON. */
  const raceArgs = (...flags: string[]): string[] => ['--url', handle.url, '--lib-from', PROJECT, '--sweepers', '8', '--loop-jobs', JOBS, ...flags, '--json'];

  test('--lib node-resque --sweepers 8: node-resque and the naive port push jobs onto failed twice, the guarded port is clean', async () => {
    const result = await runCli(raceArgs('--lib', 'node-resque', '--expect', 'node-resque-guarded=clean'));
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stderr, /warning/, 'the pinned version is within the tested range');
    const report = JSON.parse(result.stdout) as { runs: JsonRun[] };
    assertMatchesSchema(report);
    assert.deepEqual(
      report.runs.map((r) => r.mode),
      ['node-resque', 'node-resque-naive', 'node-resque-guarded'],
    );
    const raced = new Set<string>();
    for (const run of report.runs) {
      assert.deepEqual(run.library, { name: 'node-resque', version: '9.7.1' });
      assert.equal(run.jobs, Number(JOBS));
      assert.equal(run.lostJobs, 0, `${run.mode}: no job lost`);
      assert.equal(run.misplaced, 0, `${run.mode}: no job both failed and held`);
      assert.equal(run.unreclaimed, 0, `${run.mode}: no dead worker left registered`);
      // Each push a caller recorded is one entry in failed.
      assert.equal(run.duplicatePending, run.doubleRecoveries, JSON.stringify(run));
      if (run.mode === 'node-resque-guarded') {
        assert.equal(run.clean, true, JSON.stringify(run));
        assert.equal(run.recoveries, run.jobs, 'every dead worker cleaned once');
      } else if (run.duplicatePending > 0) raced.add(run.mode);
    }
    // Whether a run races depends on how the callers' round trips interleave: two must read a
    // worker's job before the first one's MULTI removes it. Nearly every run does; each mode that
    // did not is raced again, three times at most.
    for (const mode of ['node-resque', 'node-resque-naive']) {
      for (let more = 0; !raced.has(mode) && more < 3; more++) {
        const again = await runCli(raceArgs('--mode', mode));
        assert.equal(again.code, 0, again.stderr);
        const [run] = (JSON.parse(again.stdout) as { runs: JsonRun[] }).runs;
        if ((run?.duplicatePending ?? 0) > 0) raced.add(mode);
      }
    }
    assert.deepEqual([...raced].sort(), ['node-resque', 'node-resque-naive'], 'node-resque and its naive port raced');
    assert.deepEqual(await foreign.ourKeys(), [], 'every run removed its keys');
    await foreign.assertUntouched("the other application's node-resque keys are untouched");
  });

  test("node-resque's own run counts the round trips its cleanOldWorkers makes, as many as the server saw from its callers", async () => {
    const { result: run, bySource } = await commandsBySource(foreign.admin, async () => {
      const result = await runCli(raceArgs('--mode', 'node-resque'));
      assert.equal(result.code, 0, result.stderr);
      return (JSON.parse(result.stdout) as { runs: JsonRun[] }).runs[0];
    });
    assert.ok(run);
    // The callers are the connections that unregistered workers (SREM) and registered none (SADD).
    const callers = [...bySource.values()].filter((sent) => sent.some((c) => c.startsWith('SREM ')) && !sent.some((c) => c.startsWith('SADD ')));
    assert.equal(callers.length, 8, 'one connection per caller');
    let trips = 0;
    for (const sent of callers) {
      // From after node-resque's connection test (SET and GET of a key of its own) to its QUIT:
      // a command alone is a round trip, a MULTI with its commands and EXEC one.
      const from = sent.findIndex((c) => c.startsWith('GET ') && c.endsWith('connection_test_key')) + 1;
      assert.ok(from > 0, 'the connection test comes first');
      let inMulti = false;
      for (const command of sent.slice(from)) {
        if (command === 'MULTI') {
          trips++;
          inMulti = true;
        } else if (command === 'EXEC') inMulti = false;
        else if (!inMulti && command !== 'QUIT') trips++;
      }
    }
    assert.ok(trips > run.jobs * 2, `cleanOldWorkers makes several round trips per worker: ${trips}`);
    assert.equal(run.roundTrips, trips, 'the round trips the run counted are the ones the server saw');
  });

  test("--keep: node-resque's own run's figures equal a count made from its kept keys, and clean --all removes the run", () =>
    foreign.keeping(async () => {
      // A kept run that raced (three tries at most): its keys are then what the count is made from.
      let run: JsonRun | undefined;
      let queue = '';
      for (let attempt = 1; attempt <= 3 && !(run && run.duplicatePending > 0); attempt++) {
        if (run) assert.equal((await runCli(['clean', '--url', handle.url, '--queue', queue])).code, 0);
        queue = `kept-${attempt}-${Math.random().toString(16).slice(2, 8)}`;
        const result = await runCli(raceArgs('--mode', 'node-resque', '--queue', queue, '--keep'));
        assert.equal(result.code, 0, result.stderr);
        run = (JSON.parse(result.stdout) as { runs: JsonRun[] }).runs[0];
      }
      assert.ok(run);
      const base = `emq:{${queue}}:node-resque:`;
      const { perJob, duplicates, most } = await listEntries(foreign.admin, `${base}failed`, failedJobId);
      const counter = Number(await foreign.admin.get(`${base}stat:failed`));
      assert.ok(duplicates > 0, "node-resque's own cleanOldWorkers raced");
      assert.equal(perJob.size, run.jobs, 'every job is in failed');
      assert.equal(run.duplicatePending, duplicates);
      assert.equal(run.mostPendingEntries, most);
      assert.equal(run.recoveries, run.jobs + duplicates, 'each recovery the callers recorded is one entry in failed');
      assert.equal(run.extraIncrements, Math.max(0, counter - run.recoveries));
      assert.equal(run.lostIncrements, Math.max(0, run.recoveries - counter));
      assert.deepEqual(await foreign.admin.smembers(`${base}workers`), [], 'every dead worker unregistered');

      await assertCleanAllSparesForeign(foreign, handle.url, 'node-resque');
    }));

  test('--lib-from a folder without node-resque: exit 2, the line says how to install it, nothing written', async () => {
    await assertNotInstalledRefused(foreign, handle.url, 'node-resque');
  });
});

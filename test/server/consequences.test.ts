/**
 * What duplicates and lost increments cost, on real servers: workers execute duplicated jobs
 * twice, poison jobs escape the dead letter over cycles, and an observer catches the loop between
 * its writes. The atomic script shows none of it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startObserver } from '../../src/consequences/observer.js';
import { startWorkers } from '../../src/consequences/workers.js';
import { deleteRunKeys } from '../../src/queue/cleanup.js';
import type { Interrupts } from '../../src/shared/interrupt.js';
import { queueKeys } from '../../src/queue/keys.js';
import type { Session } from '../../src/server/session.js';
import { runCli } from '../helpers/cli.js';
import { allKeys } from '../helpers/keyspace.js';
import { assertNoAnomaly, queueName, runWith } from '../helpers/run-mode.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';

forEachServer('consequences', (handle) => {
  let session: Session;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    interrupts = watching;
  });

  test('workers on atomic: every job executed once and finished', async () => {
    const run = await runWith(session, interrupts, 'atomic', { jobs: 300, consequences: { workers: 4 } });
    assert.equal(run.executions, 300);
    assertNoAnomaly(run);
    assert.equal(run.windowInNeither, null, 'no observer: not measured');
  });

  test('workers on the loop: duplicates in pending become double executions', async () => {
    // max-stalled above the 4 sweepers: no job's counter can reach it, so none is dead-lettered
    // before a worker took it; every job then runs at least once, and each run beyond its first is
    // a double execution.
    const run = await runWith(session, interrupts, 'loop', { jobs: 400, maxStalled: 10, consequences: { workers: 4 } });
    assert.ok((run.doubleExecutions ?? 0) > 0, `doubleExecutions ${run.doubleExecutions}`);
    assert.equal(run.executions, 400 + (run.doubleExecutions ?? 0));
    // Workers drain pending: nothing is left to run.
    assert.equal(run.duplicatePending, 0);
  });

  test('cycles 5, max-stalled 3 on atomic: no escape, every job dead with stalled 3', async () => {
    const queue = queueName('cycles-atomic');
    const keys = queueKeys(queue);
    const run = await runWith(session, interrupts, 'atomic', { queue, jobs: 100, keep: true, consequences: { cycles: 5 } });
    try {
      assert.equal(run.deadLetterEscapes, 0);
      assertNoAnomaly(run);
      assert.equal(run.forgottenStalls, 0, 'with re-leases the true stall count is known: measured, and none forgotten');
      assert.equal(run.recoveries, 300);
      assert.equal(await session.admin.zcard(keys.dead), 100);
      assert.equal(await session.admin.llen(keys.pending), 0);
      for (const id of [1, 50, 100]) {
        assert.deepEqual(await session.admin.hmget(keys.job(id), 'stalled', 'state'), ['3', 'dead']);
      }
    } finally {
      await deleteRunKeys(session.admin, keys, 100);
    }
  });

  test('cycles 5, max-stalled 3 on the loop: poison jobs escape the dead letter', async () => {
    const run = await runWith(session, interrupts, 'loop', { jobs: 300, consequences: { cycles: 5 } });
    assert.ok((run.deadLetterEscapes ?? 0) > 0, `deadLetterEscapes ${run.deadLetterEscapes}`);
    assert.ok((run.lostIncrements ?? 0) > 0);
    assert.equal(run.unreclaimed, 0);
  });

  // The observer samples without pause all through a run: its cost is the run's length. A few hundred
  // jobs give it thousands of samples, and on the loop it catches jobs between its writes every run.
  test('observer on atomic: never a job in no place or in two', async () => {
    const run = await runWith(session, interrupts, 'atomic', { jobs: 400, batch: 10, consequences: { observe: true } });
    assert.ok((run.samples ?? 0) > 0, 'no sample taken');
    assert.equal(run.windowInNeither, 0);
    assert.equal(run.windowInBoth, 0);
  });

  test('observer on the loop: catches jobs between ZREM and the push', async () => {
    const run = await runWith(session, interrupts, 'loop', { jobs: 200, consequences: { observe: true } });
    assert.ok((run.samples ?? 0) > 0);
    assert.ok((run.windowInNeither ?? 0) > 0, `windowInNeither ${run.windowInNeither} of ${run.samples} samples`);
  });

  test('observer: a job in no place counts once it lands somewhere; one that never lands is lost, not a window', async () => {
    const keys = queueKeys(queueName('observer-lost'));
    const admin = session.admin;
    try {
      // A job taken out of active and put nowhere: a crashed sweeper's. Followed, then given up:
      // the same observer then takes the next job and sees its window, counted once it lands.
      // The observer gives a job up after ten of its slowest samples (100 ms at least): on a
      // loaded machine one slow sample stretches that, so the wait before the next job is long,
      // and that job's window (under the 100 ms floor, so never given up) is long enough to sample.
      await admin.zadd(keys.active, 1, '1');
      const observer = await startObserver(session.target, keys, 'list');
      await sleep(30);
      await admin.zrem(keys.active, '1');
      await sleep(1_500);
      await admin.zadd(keys.active, 2, '2');
      await sleep(30);
      await admin.zrem(keys.active, '2');
      await sleep(60);
      await admin.rpush(keys.pending, '2');
      await sleep(30);
      const counts = await observer.stop();
      assert.ok(counts.windowInNeither > 0, `the second job's window was seen: ${JSON.stringify(counts)}`);
      // An observer whose last job never lands: none of that job's samples count.
      const lost = await startObserver(session.target, keys, 'list');
      await admin.zadd(keys.active, 3, '3');
      await sleep(30);
      await admin.zrem(keys.active, '3');
      await sleep(400);
      const lostCounts = await lost.stop();
      assert.ok(lostCounts.samples > 0, 'samples were taken');
      assert.equal(lostCounts.windowInNeither, 0, `a lost job is no window: ${JSON.stringify(lostCounts)}`);
    } finally {
      await admin.del(keys.active, keys.pending);
    }
  });

  test("workers' stage for the progress line: nothing while the sweepers run, then the jobs taken as the workers drain pending", async () => {
    const keys = queueKeys(queueName('workers-stage'));
    const admin = session.admin;
    const pool = await startWorkers(session.target, keys, 2, new AbortController().signal, 'list');
    try {
      await admin.rpush(keys.pending, '1', '2', '3');
      assert.equal(pool.stage(), undefined, 'the sweepers are not done: the count of leases reclaimed speaks');
      const done = await pool.finish();
      assert.equal(done.executions, 3);
      assert.equal(pool.stage(), 'sweeps done, the workers running the jobs: 3 taken');
    } finally {
      pool.close();
      await admin.del(keys.pending, keys.running, keys.job(1), keys.job(2), keys.job(3));
    }
  });

  test('observer with workers on atomic: a job taken by a worker is still somewhere', async () => {
    const run = await runWith(session, interrupts, 'atomic', { jobs: 300, batch: 10, consequences: { observe: true, workers: 2 } });
    assert.equal(run.windowInNeither, 0);
    assert.equal(run.windowInBoth, 0);
    assert.equal(run.doubleExecutions, 0);
  });

  test('--workers with --cycles above 1 is refused (exit 2, one line)', async () => {
    const refused = await runCli(['--url', handle.url, '--workers', '2', '--cycles', '3']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^emq-race: --workers cannot go with --cycles 3/);
  });

  test('the table and the JSON gain the new columns where they apply', async () => {
    const table = await runCli(['--url', handle.url, '--mode', 'atomic', '--jobs', '60', '--workers', '2', '--observe']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^double executions +0$/m);
    assert.match(table.stdout, /^window in neither +0$/m);
    assert.match(table.stdout, /^window in both +0$/m);
    assert.doesNotMatch(table.stdout, /escapes|samples/);
    // --wide adds what the fitted table leaves out, such as the observer's sample count.
    const wide = await runCli(['--url', handle.url, '--mode', 'atomic', '--jobs', '60', '--workers', '2', '--observe', '--wide']);
    assert.equal(wide.code, 0, wide.stderr);
    assert.match(wide.stdout, /samples/);
    assert.match(wide.stdout, /│ atomic │/);
    const json = await runCli(['--url', handle.url, '--mode', 'atomic', '--jobs', '60', '--cycles', '2', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const run = (JSON.parse(json.stdout) as { runs: Record<string, unknown>[] }).runs[0] ?? {};
    assert.equal(run.cycles, 2);
    assert.equal(run.deadLetterEscapes, 0);
    assert.equal(run.unacknowledgedMoves, 0);
    assert.equal(run.doubleExecutions, null, 'not measured without --workers: null, never 0');
  });

  test('nothing of these runs is left on the server afterwards (running list included)', async () => {
    assert.deepEqual(await allKeys(session.admin), []);
  });
});

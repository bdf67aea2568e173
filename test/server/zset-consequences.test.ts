/**
 * Workers, cycles and the observer over a sorted-set pending (`--pending zset`, EchoMQ's own
 * keyspace), on real servers. Workers take with ZPOPMIN and the push into running in one script,
 * the re-leaser takes a member once, the observer looks pending up with ZSCORE. The atomic script
 * shows no anomaly; the loop still shows its race, though a set hides the duplicate entries.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deleteRunKeys } from '../../src/queue/cleanup.js';
import type { Interrupts } from '../../src/shared/interrupt.js';
import { queueKeys } from '../../src/queue/keys.js';
import type { Session } from '../../src/server/session.js';
import { runCli } from '../helpers/cli.js';
import { allKeys } from '../helpers/keyspace.js';
import { assertNoAnomaly, queueName, runWith } from '../helpers/run-mode.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';

forEachServer('consequences over a sorted-set pending', (handle) => {
  let session: Session;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    interrupts = watching;
  });

  test('workers on atomic: every job executed once and finished', async () => {
    // Counts that must be equal, with no race to wait for: a few hundred jobs show it.
    const run = await runWith(session, interrupts, 'atomic', { jobs: 500, pending: 'zset', consequences: { workers: 4 } });
    assert.equal(run.pending, 'zset');
    assert.equal(run.executions, 500);
    assert.equal(run.doubleExecutions, 0);
    assertNoAnomaly(run);
  });

  test('workers on the loop: the race shows, and every re-delivery is a run counted', async () => {
    // max-stalled above the 4 sweepers: no job is dead-lettered before a worker took it (three
    // counted moves would send it to dead unrun), so every job runs at least once.
    // A few hundred jobs: four sweepers meet on some of them every run, and what is checked are relations.
    const run = await runWith(session, interrupts, 'loop', { jobs: 300, maxStalled: 10, pending: 'zset', consequences: { workers: 4 } });
    // Two sweepers that detect the same job both ZADD it, but a set holds it once: a second
    // execution happens only when a worker popped the job between the two ZADDs, so the job is
    // pushed again after a worker already took it. That depends on timing, so doubleExecutions
    // may be 0 here (unlike a list, where every duplicate entry is run). What always holds: the
    // double recoveries and lost increments of the loop, no duplicate entry left, and every
    // execution beyond the first of a job counted as a double execution.
    assert.ok(run.doubleRecoveries > 0, `doubleRecoveries ${run.doubleRecoveries}`);
    assert.ok((run.lostIncrements ?? 0) > 0, `lostIncrements ${run.lostIncrements}`);
    assert.equal(run.duplicatePending, 0);
    assert.equal(run.executions, 300 + (run.doubleExecutions ?? 0));
    assert.ok((run.doubleExecutions ?? 0) <= run.doubleRecoveries, `${run.doubleExecutions} double executions, ${run.doubleRecoveries} double recoveries`);
    assert.equal(run.lostJobs, 0);
  });

  test('cycles 5, max-stalled 3 on atomic: no escape, every job dead with stalled 3', async () => {
    const queue = queueName('zset-cycles-atomic');
    const keys = queueKeys(queue);
    const run = await runWith(session, interrupts, 'atomic', { queue, jobs: 200, keep: true, pending: 'zset', consequences: { cycles: 5 } });
    try {
      assert.equal(run.deadLetterEscapes, 0);
      assertNoAnomaly(run);
      assert.equal(run.recoveries, 600);
      assert.equal(await session.admin.zcard(keys.dead), 200);
      assert.equal(await session.admin.zcard(keys.pending), 0);
      for (const id of [1, 100, 200]) {
        assert.deepEqual(await session.admin.hmget(keys.job(id), 'stalled', 'state', 'releases'), ['3', 'dead', '2']);
      }
    } finally {
      await deleteRunKeys(session.admin, keys, 200);
    }
  });

  test('cycles 2 under max-stalled 3: used-up jobs stay in pending, re-leased exactly once each', async () => {
    const queue = queueName('zset-cycles-used-up');
    const keys = queueKeys(queue);
    const run = await runWith(session, interrupts, 'atomic', { queue, jobs: 300, keep: true, pending: 'zset', consequences: { cycles: 2 } });
    try {
      assertNoAnomaly(run);
      assert.equal(run.recoveries, 600);
      assert.equal(await session.admin.zcard(keys.pending), 300);
      assert.equal(await session.admin.zcard(keys.dead), 0);
      for (const id of [1, 150, 300]) {
        assert.deepEqual(await session.admin.hmget(keys.job(id), 'stalled', 'state', 'releases'), ['2', 'pending', '1']);
      }
    } finally {
      await deleteRunKeys(session.admin, keys, 300);
    }
  });

  test('cycles 5 on the loop: increments are lost, with no duplicate entry to see', async () => {
    // Four sweepers on one batch of jobs lose increments on some of them every run: 150 jobs show it.
    const run = await runWith(session, interrupts, 'loop', { jobs: 150, pending: 'zset', consequences: { cycles: 5 } });
    assert.ok((run.lostIncrements ?? 0) > 0, `lostIncrements ${run.lostIncrements}`);
    assert.equal(run.duplicatePending, 0);
    assert.equal(run.unreclaimed, 0);
    assert.equal(run.lostJobs, 0);
  });

  // The observer samples without pause all through a run: its cost is the run's length. A few hundred
  // jobs give it thousands of samples, and on the loop it catches jobs between its writes every run.
  test('observer on atomic: never a job in no place or in two', async () => {
    const run = await runWith(session, interrupts, 'atomic', { jobs: 400, batch: 10, pending: 'zset', consequences: { observe: true, workers: 2 } });
    assert.ok((run.samples ?? 0) > 0, 'no sample taken');
    assert.equal(run.windowInNeither, 0);
    assert.equal(run.windowInBoth, 0);
    assert.equal(run.doubleExecutions, 0);
  });

  test('observer on the loop: catches jobs between ZREM and the ZADD', async () => {
    const run = await runWith(session, interrupts, 'loop', { jobs: 200, pending: 'zset', consequences: { observe: true } });
    assert.ok((run.samples ?? 0) > 0);
    assert.ok((run.windowInNeither ?? 0) > 0, `windowInNeither ${run.windowInNeither} of ${run.samples} samples`);
  });

  test('the CLI takes --pending zset with --workers, --cycles and --observe', async () => {
    for (const extra of [['--workers', '2'], ['--cycles', '3'], ['--observe']]) {
      const result = await runCli(['--url', handle.url, '--mode', 'atomic', '--pending', 'zset', '--jobs', '200', '--json', ...extra]);
      assert.equal(result.code, 0, `${extra.join(' ')}: ${result.stderr}`);
      const run = (JSON.parse(result.stdout) as { runs: Record<string, unknown>[] }).runs[0] ?? {};
      assert.equal(run.pending, 'zset');
      assert.equal(run.doubleRecoveries, 0);
    }
  });

  test('nothing of these runs is left on the server afterwards', async () => {
    assert.deepEqual(await allKeys(session.admin), []);
  });
});

/**
 * --fault failover --workers on Redis and Valkey: workers that consume pending go through the
 * pair's front proxy like the sweepers and are carried over at the failover. The drill waits for
 * them to take every pending job before the cut and before the kill, so every job the calls after
 * the cut moved was handed to a worker on the old primary, lost with it, recovered again on the
 * promoted replica and handed to a worker again: the workers' own records count exactly the
 * predicted loss as run twice, and the test counts the same on the promoted replica --keep left
 * running, from the job hashes' `runs` counters.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { assertNothingLeft, atomicDrill, countOnKept, runsOf, runWatched, SMALL } from '../helpers/failover-runs.js';
import { SERVER_KINDS } from '../helpers/servers.js';

for (const kind of SERVER_KINDS) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed` : false;
  describe(`failover with workers [${kind.kind}]`, { skip }, () => {
    test('atomic, 2 workers: the jobs run twice are the predicted loss, and the promoted replica is short of exactly those runs', async () => {
      const { json, spawned } = await runWatched([...atomicDrill(kind), '--workers', '2', '--keep', ...SMALL]);
      assertMatchesSchema(json);
      const [run, ...more] = runsOf(json);
      assert.ok(run && more.length === 0);
      const f = run.failover;
      assert.equal(f.sources.jobsRunTwice, 'workers');
      assert.equal(f.callsAfterCut, 2);
      assert.ok(f.predictedLoss !== null && f.predictedLoss > 0, `predicted ${f.predictedLoss}`);
      assert.equal(f.ackedMovesLost, f.predictedLoss);
      // Every job the calls after the cut moved was taken on the old primary, and again on the promoted replica.
      assert.equal(f.jobsRunTwice, f.predictedLoss);
      assert.equal(f.jobsRunTwice, f.jobsRecoveredTwice);
      // The workers' own count of their takes: every job once, those run twice once more.
      assert.equal(run.executions, run.jobs + f.predictedLoss);
      // The promoted replica's runs counters lack the old primary's last increments: the double
      // executions come from the workers' own takes instead, and say so.
      assert.equal(run.doubleExecutions, f.jobsRunTwice);
      assert.equal(run.sources.doubleExecutions, 'workers');
      assert.equal(run.lostJobs, 0);
      // The independent count: on the promoted replica every job is done and shows one run; the
      // takes the workers made beyond those are the runs the old primary took with it.
      const counted = await countOnKept(run);
      assert.equal(counted.done, run.jobs);
      assert.equal(counted.runs, run.jobs);
      assert.equal(counted.pending, 0);
      assert.equal((run.executions ?? 0) - counted.runs, f.jobsRunTwice);
      assert.equal(run.recoveries - counted.gained, f.jobsRunTwice);
      await assertNothingLeft(spawned);
    });

    test("the loop, 2 workers: its own double executions still counted, from the workers' takes, beside the failover's", async () => {
      const args = [...atomicDrill(kind), '--workers', '2', ...SMALL];
      args[args.indexOf('atomic')] = 'loop';
      const { json, spawned } = await runWatched(args);
      assertMatchesSchema(json);
      const [run] = runsOf(json);
      assert.ok(run);
      assert.equal(run.mode, 'loop');
      assert.equal(run.lostJobs, 0);
      // Every job was taken at least once, so every take beyond the jobs is one beyond a job's first.
      assert.equal(run.doubleExecutions, (run.executions ?? 0) - run.jobs);
      assert.equal(run.sources.doubleExecutions, 'workers');
      assert.ok((run.doubleExecutions ?? 0) >= (run.failover.jobsRunTwice ?? 0));
      await assertNothingLeft(spawned);
    });

    test('without --workers the figure is not measured: null', async () => {
      const { json, spawned } = await runWatched([...atomicDrill(kind), ...SMALL]);
      const [run] = runsOf(json);
      assert.ok(run);
      assert.equal(run.failover.jobsRunTwice, null);
      assert.equal(run.executions, null);
      assert.equal(run.doubleExecutions, null);
      assert.equal(run.sources.doubleExecutions, null);
      await assertNothingLeft(spawned);
    });
  });
}

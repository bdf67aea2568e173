/**
 * --fault failover beyond the one atomic run, on Redis and Valkey: atomic, loop and claim drilled
 * in turn under one schedule, each on a pair of its own; and the grid, each cell on its own pair at
 * its own replica lag. Every run loses across the failover, and nothing of any pair is left.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { assertNothingLeft, assertNotMeasuredAcrossFailover, atomicDrill, runsOf, runWatched, SMALL, type RunJson } from '../helpers/failover-runs.js';
import { SERVER_KINDS } from '../helpers/servers.js';

for (const kind of SERVER_KINDS) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed` : false;
  describe(`failover in every mode and in the grid [${kind.kind}]`, { skip }, () => {
    test('atomic, loop and claim side by side under one schedule: each on a pair of its own, each losing across the failover', async () => {
      const { json, spawned } = await runWatched([
        '--server-bin',
        kind.bin,
        '--mode',
        'atomic,loop,claim',
        '--fault',
        'failover',
        '--failover-after',
        '5',
        ...SMALL,
      ]);
      const runs = runsOf(json);
      assert.deepEqual(
        runs.map((run) => run.mode),
        ['atomic', 'loop', 'claim'],
      );
      for (const run of runs) {
        const f = run.failover;
        assert.equal(f.after, 5, run.mode);
        assert.equal(f.callsAfterCut, 2, run.mode);
        assert.equal(run.lostJobs, 0, run.mode);
        // Every mode moved jobs the promoted replica never received, and recovered them again there.
        assert.ok(f.counterIncrementsLost > 0, `${run.mode}: ${f.counterIncrementsLost}`);
        assert.ok(f.jobsRecoveredTwice > 0, `${run.mode}: ${f.jobsRecoveredTwice}`);
      }
      const [atomic, loop, claim] = runs;
      assert.ok(atomic && loop && claim);
      assert.equal(atomic.failover.ackedMovesLost, atomic.failover.predictedLoss);
      // A sweep of many round trips has no prediction: other sweepers raced it for the same jobs.
      assert.equal(loop.failover.predictedLoss, null);
      assert.equal(claim.failover.predictedLoss, null);
      // The claim is exact on one server: every job it recovered twice is one the failover brought back.
      assert.equal(claim.doubleRecoveries, claim.failover.jobsRecoveredTwice);
      assert.ok(claim.failover.ackedMovesLost > 0);
      // The session's server, then a primary and a replica (each under a keeper) per mode.
      assert.ok(spawned.filter((p) => /server-keeper/.test(p.line)).length >= 1 + 2 * runs.length);
      await assertNothingLeft(spawned);
    });

    test('grid --vary replica-lag=0,20: each cell drills on its own pair at its own lag, and loses what it predicted', async () => {
      const { json, spawned } = await runWatched(['grid', ...atomicDrill(kind), '--vary', 'replica-lag=0,20', ...SMALL]);
      const cells = json.cells as { at: Record<string, number>; runs: RunJson[] }[];
      assert.equal(cells.length, 2);
      for (const cell of cells) {
        const [run] = cell.runs;
        assert.ok(run);
        assert.equal(run.failover.replicaLagMs, cell.at['replica-lag']);
        assert.ok(run.failover.predictedLoss !== null && run.failover.predictedLoss > 0);
        assert.equal(run.failover.ackedMovesLost, run.failover.predictedLoss);
      }
      assertNotMeasuredAcrossFailover(
        json,
        cells.flatMap((cell) => cell.runs),
      );
      await assertNothingLeft(spawned);
    });
  });
}

/**
 * --fault failover on Redis and Valkey: the run's own primary and replica, the replica's link cut
 * after the K-th answered sweep call, the primary killed M calls later, the replica promoted.
 * The atomic sweep loses exactly what the calls after the cut moved, with the link's lag too, and
 * the test counts that loss itself on the promoted replica --keep left running. After the run no
 * server of the pair is left, nor its data folder. WAIT, Sentinel, the other modes and the grid
 * have files of their own (failover-*.test.ts), so that they run side by side.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { assertNothingLeft, atomicDrill, countOnKept, runsOf, runWatched, SMALL } from '../helpers/failover-runs.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { FAILS_AT_RUN_TIME, scriptFile } from '../helpers/scripts.js';
import { SERVER_KINDS } from '../helpers/servers.js';

for (const kind of SERVER_KINDS) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed` : false;
  describe(`failover [${kind.kind}]`, { skip }, () => {
    test('atomic, 20 ms of replica lag, 2 trials: the moves lost are the ones predicted, a multiple of the batch, and the test counts them on the promoted replica', async () => {
      const { json, spawned } = await runWatched([...atomicDrill(kind), '--replica-lag', '20', '--trials', '2', '--keep', ...SMALL]);
      const runs = runsOf(json);
      assert.equal(runs.length, 2);
      for (const run of runs) {
        const f = run.failover;
        assert.equal(f.after, 5);
        // The queue lived on the drill's own pair, not on a server the report could name.
        assert.equal(run.node, null);
        assert.ok(f.callsBeforeCut >= 5, `answered before the cut: ${f.callsBeforeCut}`);
        assert.equal(f.replicaLagMs, 20);
        assert.equal(f.promotedBy, 'tool');
        assert.equal(f.callsAfterCut, 2);
        assert.ok(f.predictedLoss !== null && f.predictedLoss > 0, `predicted ${f.predictedLoss}`);
        // With the link held 20 ms, the cut still waits for the replica to catch up: only the
        // calls after it are lost, no more.
        assert.equal(f.ackedMovesLost, f.predictedLoss);
        assert.equal(f.ackedMovesLost % run.batch, 0);
        // The run's ordinary audit on the new primary knows nothing of the drill.
        assert.equal(run.lostIncrements, f.ackedMovesLost);
        assert.equal(run.doubleRecoveries, f.jobsRecoveredTwice);
        assert.equal(f.counterIncrementsLost, f.ackedMovesLost);
        assert.equal(run.lostJobs, 0);
        assert.equal(f.unconfirmedMoves, 0);
        // The independent count: every job's counter read on the promoted replica by the test.
        // Each job shows one stall there; the moves the sweepers recorded beyond them are the loss.
        const counted = await countOnKept(run);
        assert.equal(counted.gained, run.jobs);
        assert.equal(run.recoveries - counted.gained, f.ackedMovesLost);
        // The server alone shows no duplicate: the lost first recovery left no entry behind.
        assert.equal(counted.pending, run.jobs);
        assert.equal(counted.distinctPending, run.jobs);
      }
      await assertNothingLeft(spawned);
    });

    test("--trials in text: each trial's drill figures under the trials table, which shows only spreads", async () => {
      const result = await runCli([...atomicDrill(kind), '--trials', '2', ...SMALL.filter((arg) => arg !== '--json')]);
      assert.equal(result.code, 0, result.stderr);
      for (const trial of [1, 2])
        assert.match(
          result.stdout,
          new RegExp(
            `^ {2}faults on atomic, trial ${trial}: the replica's link was cut after (5 answered|\\d+ answered\\s+sweep\\s+calls\\s+\\(--failover-after\\s+5,\\s+and\\s+\\d+\\s+more\\s+in\\s+flight\\s+then\\))`,
            'm',
          ),
        );
    });

    test('--keep, the run failed: the pair goes with it, so the line names no kept keys and no clean', async () => {
      const script = scriptFile('fails-at-run-time.lua', FAILS_AT_RUN_TIME);
      const result = await runCli([...atomicDrill(kind).filter((arg) => arg !== 'atomic' && arg !== '--mode'), '--script', script, '--keep', ...SMALL]);
      assert.equal(result.code, 3, result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? result.stderr, /^emq-race: the sweep script failed while running: [^;]*$/);
    });

    test('a --failover-after beyond the calls the race makes: the cut comes once the sweeps run dry, and the line says so', async () => {
      const result = await runCli([...atomicDrill(kind).map((arg) => (arg === '5' ? '1000000' : arg)), ...SMALL.filter((arg) => arg !== '--json')]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(
        result.stdout,
        /link was cut\s+once\s+the\s+sweeps\s+had\s+run\s+dry,\s+after\s+\d+\s+answered\s+sweep\s+calls\s+\(fewer\s+than\s+--failover-after\s+1000000\)/,
      );
    });
  });
}

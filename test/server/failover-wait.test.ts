/**
 * --fault failover with --wait-replicas on Redis and Valkey: no move WAIT confirmed is lost; the
 * calls after the cut are unconfirmed, and every WAIT after the failover (the promoted replica has
 * no replica) times out. Each trial's companion run without WAIT, on a pair of its own, runs before
 * it on odd trials and after it on even ones: two trials see both orders.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { assertNothingLeft, assertNotMeasuredAcrossFailover, atomicDrill, runsOf, runWatched, SMALL } from '../helpers/failover-runs.js';
import { SERVER_KINDS } from '../helpers/servers.js';

for (const kind of SERVER_KINDS) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed` : false;
  describe(`failover with WAIT [${kind.kind}]`, { skip }, () => {
    // 200 ms is five times the replica's round trip at 20 ms of lag: a WAIT on the healthy link
    // that still timed out under load would only add an unconfirmed move, which nothing below
    // forbids; the WAITs that must time out (after the cut) each cost the whole timeout.
    test('atomic with --wait-replicas 1:200, 20 ms of lag, 2 trials: no acknowledged move lost; the cut calls unconfirmed; the companion without WAIT beside each', async () => {
      const { json, spawned } = await runWatched([...atomicDrill(kind), '--replica-lag', '20', '--wait-replicas', '1:200', '--trials', '2', ...SMALL]);
      const runs = runsOf(json);
      assert.equal(runs.length, 2);
      for (const run of runs) {
        const f = run.failover;
        assert.equal(f.ackedMovesLost, 0);
        assert.equal(f.predictedLoss, 0);
        assert.ok(f.waitTimeouts >= 2, `waitTimeouts ${f.waitTimeouts}`);
        // WAIT's own replies: with one replica each says 0 or 1, and those short of 1 are the
        // timeouts. Before the cut at least --failover-after calls moved jobs and were confirmed.
        assert.deepEqual(
          f.waitReplies.map((reply) => reply.replicas),
          [0, 1],
        );
        assert.equal(f.waitReplies[0]?.waits, f.waitTimeouts);
        assert.ok((f.waitReplies[1]?.waits ?? 0) >= f.after, `confirmed WAITs ${JSON.stringify(f.waitReplies)}`);
        // What the cut calls moved is lost all the same, but was never counted as acknowledged.
        assert.ok(f.counterIncrementsLost > 0);
        assert.ok(f.unconfirmedMoves >= f.counterIncrementsLost);
        // The companion run without WAIT, same schedule on a pair of its own: it loses what its
        // calls after the cut moved, and its jobs/s stands beside this run's.
        const without = f.withoutWait;
        assert.ok(without, 'the run without WAIT is reported');
        assert.ok(without.jobsPerSec > 0);
        assert.ok(without.ackedMovesLost > 0 && without.ackedMovesLost % run.batch === 0, `lost without WAIT: ${without.ackedMovesLost}`);
        assert.equal(without.order, run.trial % 2 === 1 ? 'before' : 'after');
      }
      // The server's counters were read on the primary before the race and on the promoted replica
      // after it: no figure of one server, so none is given, and the JSON keeps to its schema.
      assertNotMeasuredAcrossFailover(json, runs);
      assert.deepEqual(
        runs.map((run) => run.failover.withoutWait?.order),
        ['before', 'after'],
      );
      await assertNothingLeft(spawned);
    });
  });
}

/**
 * --fault failover --sentinel on Redis and Valkey: a real Sentinel from the same binary promotes
 * the replica, the loss is still the one predicted, the race's page marks the failover, and the
 * Sentinel, under a keeper of its own, goes with the pair.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { assertNothingLeft, assertNotMeasuredAcrossFailover, atomicDrill, runsOf, runWatched, SMALL } from '../helpers/failover-runs.js';
import { SERVER_KINDS } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

for (const kind of SERVER_KINDS) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed` : false;
  describe(`failover promoted by Sentinel [${kind.kind}]`, { skip }, () => {
    test('--sentinel: a real Sentinel promotes the replica, the loss is still the one predicted, and the Sentinel goes with the pair', async () => {
      const page = join(tempDir('emq-failover-page-'), 'race.html');
      const { json, spawned } = await runWatched([...atomicDrill(kind), '--sentinel', '--html', page, ...SMALL]);
      const [run] = runsOf(json);
      assert.ok(run);
      const f = run.failover;
      assert.equal(f.promotedBy, 'sentinel');
      assert.ok(f.predictedLoss !== null && f.predictedLoss > 0, `predicted ${f.predictedLoss}`);
      assert.equal(f.ackedMovesLost, f.predictedLoss);
      assert.equal(run.lostIncrements, f.ackedMovesLost);
      assert.equal(run.lostJobs, 0);
      assertNotMeasuredAcrossFailover(json, [run]);
      // The page marks the failover among the drill's moments, with what the promoted replica showed.
      const html = readFileSync(page, 'utf8');
      assert.match(html, /<section id="failover">/);
      assert.match(html, /class="failover-moment" data-field="promotedBy" data-value="sentinel"/);
      assert.ok(html.includes(`<span data-field="ackedMovesLost">${f.ackedMovesLost}</span>`));
      // The Sentinel ran under a keeper of its own, started with its configuration file.
      assert.ok(
        spawned.some((p) => /server-keeper\.sh .* --sentinel /.test(p.line)),
        `no Sentinel seen: ${spawned.map((p) => p.line).join('; ')}`,
      );
      await assertNothingLeft(spawned);
    });
  });
}

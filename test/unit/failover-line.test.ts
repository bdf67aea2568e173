/** The failover drill's line under the table: the drill's own counts, never the flags' values in their place. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consequenceLines } from '../../src/report/consequences.js';
import type { FailoverFigures } from '../../src/shared/model.js';
import { failoverFigures, runResult } from '../helpers/run-result.js';

// No lag, no WAIT: the line's cut and failover alone.
const FIGURES = failoverFigures({ replicaLagMs: 0, waitReplicas: null, withoutWait: null, keptServer: null });

const line = (over: Partial<FailoverFigures>): string =>
  consequenceLines(
    runResult({ failover: { ...FIGURES, ...over }, faultCounts: { crashes: 0, lostReplies: 0, reconnects: 0, scriptFlushes: 0, clientKills: 0 } }),
  ).join('\n');

test('the cut and the failover as the drill counted them', () => {
  assert.match(line({}), /link was cut after 5 answered sweep calls and the primary killed 2 calls later;/);
  // Calls in flight at the 5th were answered before the link could be cut: 6 replicated, not 5.
  assert.match(line({ callsBeforeCut: 6 }), /link was cut after 6 answered sweep calls \(--failover-after 5, and 1 more in flight then\) and/);
  assert.match(line({ callsBeforeCut: 3 }), /link was cut once the sweeps had run dry, after 3 answered sweep calls \(fewer than --failover-after 5\)/);
  // The sweeps ran dry before M calls after the cut.
  assert.match(
    line({ calls: 10_000, callsAfterCut: 16 }),
    /and the primary killed once the sweeps had run dry, 16 calls later \(fewer than --failover-calls 10000\);/,
  );
});

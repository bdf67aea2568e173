/**
 * The HTML report's "run it again" line keeps what makes the page what it is: --shrink beside
 * --seed (the page's shrink section), and --fault failover's own flags (the drill the page shows).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { raceCommandLine } from '../../src/html/reproduce.js';
import { DEFAULT_FLAGS_SEEN as DEFAULTS } from '../helpers/race-flags-seen.js';

test('--seed with --shrink: both in the rerun line', () => {
  assert.equal(raceCommandLine({ ...DEFAULTS, mode: ['loop'], seed: 7, shrink: true }, undefined), 'emq-race --mode loop --seed 7 --shrink');
});

test("--fault failover: the drill's own flags in the rerun line, --wait-replicas as n:ms", () => {
  assert.equal(
    raceCommandLine(
      {
        ...DEFAULTS,
        mode: ['atomic'],
        fault: ['failover'],
        failoverAfter: 5,
        failoverCalls: 2,
        waitReplicas: { replicas: 1, timeoutMs: 500 },
        replicaLag: 20,
        sentinel: true,
      },
      undefined,
    ),
    'emq-race --mode atomic --fault failover --failover-after 5 --failover-calls 2 --wait-replicas 1:500 --replica-lag 20 --sentinel',
  );
  assert.equal(raceCommandLine({ ...DEFAULTS, mode: ['atomic'], fault: ['failover'] }, undefined), 'emq-race --mode atomic --fault failover');
});

/**
 * The heart of the tool on real servers: the atomic script is exact under contention, the loop
 * is not, and a single loop sweeper is exact too (the race needs two). A few hundred jobs show
 * each: eight or sixteen sweepers meet on the same jobs from the first batch on, and the loop's
 * cost grows with the jobs (five round trips each); scale.test.ts is where size is the point.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isClean } from '../../src/audit/rules.js';
import type { Interrupts } from '../../src/shared/interrupt.js';
import type { Session } from '../../src/server/session.js';
import { allKeys } from '../helpers/keyspace.js';
import { assertNoAnomaly, runWith } from '../helpers/run-mode.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';

forEachServer('race', (handle) => {
  let session: Session;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    interrupts = watching;
  });

  test('atomic with 16 sweepers over 500 jobs: every lease reclaimed once, every anomaly 0', async () => {
    const run = await runWith(session, interrupts, 'atomic', { jobs: 500, sweepers: 16 });
    assert.equal(run.recoveries, 500);
    assertNoAnomaly(run);
    assert.ok(isClean(run));
    assert.equal(run.cutShort, false);
  });

  test('loop with 8 sweepers: duplicates in pending and lost increments', async () => {
    // max-stalled out of reach: no dead letter takes entries back out of pending.
    const run = await runWith(session, interrupts, 'loop', { jobs: 300, sweepers: 8, maxStalled: 100 });
    assert.ok(run.duplicatePending > 0, `duplicatePending ${run.duplicatePending}`);
    assert.ok((run.lostIncrements ?? 0) > 0, `lostIncrements ${run.lostIncrements}`);
    assert.ok(run.doubleRecoveries > 0);
    assert.equal(run.recoveries, 300 + run.doubleRecoveries);
    // With a list every extra recovery is one more entry in pending.
    assert.equal(run.duplicatePending, run.doubleRecoveries);
    assert.equal(run.lostJobs, 0);
    assert.equal(run.unreclaimed, 0);
  });

  test('loop with 1 sweeper: no race, no anomaly', async () => {
    const run = await runWith(session, interrupts, 'loop', { jobs: 200, sweepers: 1 });
    assert.equal(run.recoveries, 200);
    assertNoAnomaly(run);
    assert.equal(run.example, null, 'no job was recovered twice, so there is no example');
  });

  test('nothing of a run is left on the server afterwards', async () => {
    assert.deepEqual(await allKeys(session.admin), []);
  });
});

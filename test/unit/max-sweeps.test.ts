/** The default sweep budget (src/race/race.ts): room for a correct run at any size, --cycles included. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultMaxSweeps } from '../../src/race/race.js';
import { LIMITS } from '../../src/shared/model.js';

test('ten sweeps per batch of jobs and ten more; with --cycles, room for every return of every job swept alone', () => {
  assert.equal(defaultMaxSweeps(300, 100), 40);
  assert.equal(defaultMaxSweeps(1, 100), 20);
  assert.equal(defaultMaxSweeps(300, 100, 1), 40);
  // A re-leased job may come back to a sweep of its own: 300 jobs, 3 cycles.
  assert.equal(defaultMaxSweeps(300, 100, 3), 910);
  // Never less than without cycles: one job in batches of one.
  assert.equal(defaultMaxSweeps(1, 1, 2), 20);
  // Never more than --max-sweeps itself takes.
  assert.equal(defaultMaxSweeps(10_000_000, 1000, 100), LIMITS.maxSweeps.max);
});

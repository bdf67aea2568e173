/**
 * The wide table's "round trips per job" (src/report/report.ts): per job seeded, so that a form
 * that recovers each job several times does not read as cheaper for it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tableColumns } from '../../src/report/report.js';
import { runResult } from '../helpers/run-result.js';

const column = tableColumns().find((c) => c.head === 'round trips\nper job');

test('round trips per job: round trips over the jobs seeded, the extra recoveries of a race included', () => {
  assert.ok(column);
  // Bee-Queue's naive port against its guarded one, 200 jobs: 848 round trips for 800 recoveries, 838 for 200.
  assert.equal(column.value(runResult({ jobs: 200, recoveries: 800, roundTrips: 848 })), '4.24');
  assert.equal(column.value(runResult({ jobs: 200, recoveries: 200, roundTrips: 838 })), '4.19');
  // The atomic script: one call per batch, and the sweep that found nothing.
  assert.equal(column.value(runResult({ jobs: 1000, recoveries: 1000, roundTrips: 11 })), '0.01');
});

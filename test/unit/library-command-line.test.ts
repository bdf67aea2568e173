/**
 * The HTML report's "run it again" line for a library's run: --lib and --lib-from as given, so the
 * rerun races the same library from the same project, not the tool's own modes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { raceCommandLine } from '../../src/html/reproduce.js';
import { DEFAULT_FLAGS_SEEN as DEFAULTS } from '../helpers/race-flags-seen.js';

test('--lib and --lib-from are in the rerun line, the path as given', () => {
  assert.equal(raceCommandLine({ ...DEFAULTS, lib: 'bullmq', libFrom: '../my app' }, undefined), "emq-race --lib bullmq --lib-from '../my app'");
  assert.equal(
    raceCommandLine({ ...DEFAULTS, mode: ['bullmq-naive'], libFrom: '/srv/app', jobs: 50 }, undefined),
    'emq-race --mode bullmq-naive --lib-from /srv/app --jobs 50',
  );
  assert.equal(raceCommandLine({ ...DEFAULTS, lib: 'bee-queue' }, undefined), 'emq-race --lib bee-queue');
  assert.equal(raceCommandLine(DEFAULTS, undefined), 'emq-race');
});

/**
 * The memory guard's arithmetic for a queue library's run: weighed in the library's own layout
 * (src/libraries/table.ts), not by the model queue's measured costs (the live check:
 * test/server/library-memory-guard.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BYTES_PER_CONNECTION,
  MARGIN,
  SCRIPT_CACHE_BYTES,
  connectionsOf,
  footprintProblem,
  peakFootprint,
  queueFootprint,
} from '../../src/queue/memory-guard.js';
import { LIBRARIES } from '../../src/libraries/table.js';
import { memoryTraits } from '../../src/sweepers/strategies.js';
import { NO_CONSEQUENCES, type Mode, type ModeRun } from '../../src/shared/model.js';

/** Costs no library run uses: any figure from them would show. */
const COSTS = { hash: 1e6, active: 1e6, pending: 1e6, dead: 1e6, listEntry: 1e6 };

function run(mode: Mode, overrides: Partial<ModeRun> = {}): ModeRun {
  return {
    mode,
    queue: 'race-lib',
    jobs: 1000,
    live: 100,
    sweepers: 8,
    batch: 100,
    maxStalled: 3,
    stalledBefore: 0,
    probeDelayMs: 0,
    keep: false,
    ...overrides,
  };
}

test("a library run's jobs cost its layout's bytes; a mode that races adds a duplicate per job per other caller", () => {
  const bullmq = LIBRARIES.bullmq.memory;
  assert.equal(queueFootprint(run('bullmq'), COSTS, memoryTraits), 1000 * bullmq.bytesPerJob + 4096);
  assert.equal(queueFootprint(run('bullmq-guarded'), COSTS, memoryTraits), 1000 * bullmq.bytesPerJob + 4096);
  assert.equal(queueFootprint(run('bullmq-naive'), COSTS, memoryTraits), 1000 * bullmq.bytesPerJob + 1000 * 7 * bullmq.bytesPerDuplicate + 4096);
  // node-resque's own recovery races by design: its duplicates count too.
  const resque = LIBRARIES['node-resque'].memory;
  assert.equal(queueFootprint(run('node-resque'), COSTS, memoryTraits), 1000 * resque.bytesPerJob + 1000 * 7 * resque.bytesPerDuplicate + 4096);
  assert.equal(queueFootprint(run('bee-queue'), COSTS, memoryTraits), 1000 * LIBRARIES['bee-queue'].memory.bytesPerJob + 4096);
});

test('--fault lapsed-lock weighs a BullMQ job at its lapsed-lock figures', () => {
  const lapsed = LIBRARIES.bullmq.memory.lapsedLock;
  assert.ok(lapsed);
  const consequences = { ...NO_CONSEQUENCES, faults: ['lapsed-lock' as const] };
  assert.equal(
    queueFootprint(run('bullmq-naive', { consequences }), COSTS, memoryTraits),
    1000 * lapsed.bytesPerJob + 1000 * 7 * lapsed.bytesPerDuplicate + 4096,
  );
});

test("connections: each caller's (two for a BullMQ worker and its blocking connection), the seeding's and the admin", () => {
  const seed = LIBRARIES.bullmq.memory.seedConnections;
  assert.equal(connectionsOf(run('bullmq'), memoryTraits), 8 * 2 + seed + 1);
  assert.equal(connectionsOf(run('bullmq-naive'), memoryTraits), 8 + seed + 1);
  // Without the traits, as before: the model queue's count.
  assert.equal(connectionsOf(run('bullmq')), 9);
});

test("the peak adds the library's scripts; the refusal names its bytes a job in the library's layout and no live jobs", () => {
  const peak = peakFootprint([[run('bee-queue', { jobs: 40_000 })]], COSTS, 0, memoryTraits);
  const connections = 8 + LIBRARIES['bee-queue'].memory.seedConnections + 1;
  const data = 40_000 * LIBRARIES['bee-queue'].memory.bytesPerJob + 4096;
  assert.equal(
    peak.bytes,
    Math.ceil((data + connections * BYTES_PER_CONNECTION + SCRIPT_CACHE_BYTES + LIBRARIES['bee-queue'].memory.scriptBytes) * (1 + MARGIN)),
  );
  const problem = footprintProblem({ usedMemory: 1e6, maxMemory: 5 * 1024 * 1024, policy: 'noeviction', notCountedForEvict: 0 }, peak, COSTS, 'redis://h:1');
  assert.match(problem ?? '', /^bee-queue on --jobs 40000 needs about [\d.]+ MB .* at 256 bytes a job in bee-queue's own layout, 12 connections, /);
  assert.match(problem ?? '', /the seeding would fail halfway with OOM\. Refusing, nothing written/);
});

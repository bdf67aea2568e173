/** The memory guard's arithmetic and readings, apart from any server (the live checks: memory-guard.test.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evictedKeys, evictionError } from '../../src/server/eviction-watch.js';
import {
  BYTES_PER_CONNECTION,
  BYTES_PER_NEW_COMMAND,
  KEYSPACE_SLOT_BYTES,
  MARGIN,
  SCRIPT_CACHE_BYTES,
  SET_TABLE_BYTES,
  commandsOf,
  connectionsOf,
  footprintProblem,
  peakFootprint,
  queueFootprint,
  trackedCommands,
  type DataCosts,
} from '../../src/queue/memory-guard.js';
import { parseMemoryInfo, roomLeft } from '../../src/server/memory-check.js';
import { memoryTraits } from '../../src/sweepers/strategies.js';
import { modeRun } from '../helpers/run-result.js';

const MB = 1024 * 1024;
/** Costs of the order MEMORY USAGE reports on Redis 7.0 for a slice of 1,000 jobs. */
const COSTS: DataCosts = { hash: 136, active: 94, pending: 94, dead: 94, listEntry: 4 };
const PER_JOB = COSTS.hash + KEYSPACE_SLOT_BYTES + 94 + SET_TABLE_BYTES;

test('parseMemoryInfo reads used_memory, maxmemory, the policy and what the server does not evict for', () => {
  const info =
    '# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:8388608\r\nmaxmemory_human:8.00M\r\nmaxmemory_policy:allkeys-lru\r\nmem_not_counted_for_evict:4096\r\n';
  const memory = parseMemoryInfo(info);
  assert.deepEqual(memory, { usedMemory: MB, maxMemory: 8 * MB, policy: 'allkeys-lru', notCountedForEvict: 4096 });
  assert.equal(roomLeft(memory), 7 * MB + 4096);
});

test('queueFootprint: every job (live ones too) costs its hash, its keyspace slot and the dearest of its three places', () => {
  assert.equal(queueFootprint(modeRun(), COSTS, memoryTraits), 6600 * PER_JOB + 4096);
  // A dearer pending (a sorted set) raises every job's cost to it.
  assert.equal(queueFootprint(modeRun({ pending: 'zset' }), { ...COSTS, pending: 110 }, memoryTraits), 6600 * (PER_JOB + 16) + 4096);
});

test('queueFootprint: a loop on a list may push each job once per other sweeper and cycle; a sorted set keeps one entry', () => {
  const loop = modeRun({ mode: 'loop', sweepers: 4, consequences: { faults: [], workers: 0, cycles: 2, observe: false, notes: [] } });
  assert.equal(queueFootprint(loop, COSTS, memoryTraits), 6600 * PER_JOB + 6000 * 3 * 2 * COSTS.listEntry + 4096);
  assert.equal(queueFootprint({ ...loop, pending: 'zset' }, COSTS, memoryTraits), 6600 * PER_JOB + 4096);
  assert.equal(queueFootprint({ ...loop, mode: 'claim' }, COSTS, memoryTraits), 6600 * PER_JOB + 4096);
});

test('connectionsOf: sweepers, workers, observer, re-leaser, chaos, and the queue admin', () => {
  assert.equal(connectionsOf(modeRun()), 3);
  assert.equal(
    connectionsOf(modeRun({ sweepers: 8, consequences: { faults: ['client-kill'], workers: 4, cycles: 3, observe: true, notes: [] } })),
    8 + 4 + 1 + 1 + 1 + 1,
  );
});

test('peakFootprint: the dearest moment counts, with connections, new commands, the script cache and the margin', () => {
  const one = [modeRun()];
  const four = [modeRun({ queue: 'a' }), modeRun({ queue: 'b' }), modeRun({ queue: 'c' }), modeRun({ queue: 'd' })];
  const peak = peakFootprint([one, four, one], COSTS, 5, memoryTraits);
  assert.equal(peak.moment, four);
  assert.equal(peak.connections, 12);
  assert.equal(peak.data, 4 * queueFootprint(modeRun(), COSTS, memoryTraits));
  assert.equal(peak.bytes, Math.ceil((peak.data + 12 * BYTES_PER_CONNECTION + 5 * BYTES_PER_NEW_COMMAND + SCRIPT_CACHE_BYTES) * (1 + MARGIN)));
});

test('footprintProblem: no limit, a fit, and each kind of policy when it does not fit, in one line with the numbers', () => {
  const four = peakFootprint([[modeRun({ queue: 'a' }), modeRun({ queue: 'b' }), modeRun({ queue: 'c' }), modeRun({ queue: 'd' })]], COSTS, 0, memoryTraits);
  const at = (usedMemory: number, maxMemory: number, policy: string): string | undefined =>
    footprintProblem({ usedMemory, maxMemory, policy, notCountedForEvict: 0 }, four, COSTS, 'redis://h:1');
  assert.equal(at(MB, 0, 'noeviction'), undefined);
  assert.equal(at(MB, 64 * MB, 'allkeys-lru'), undefined);
  const refused = at(2 * MB, 5 * MB, 'allkeys-lru') ?? '';
  assert.match(
    refused,
    /^4 queues side by side \(atomic\), each --jobs 6000 \(with 600 live jobs\), needs about [\d.]+ MB on the server at redis:\/\/h:1 at its peak \([\d.]+ MB of job data at 270 bytes a job as measured there, 12 connections, 0 commands new to the server, and a 10% margin\), but only 3\.0 MB is left below its maxmemory of 5\.0 MB; under maxmemory-policy allkeys-lru the server would evict other keys \(yours\) to make room\. Refusing, nothing written: lower --jobs or --queues, or use a server with more room$/,
  );
  assert.doesNotMatch(refused, /\n/);
  assert.match(at(2 * MB, 5 * MB, 'volatile-ttl') ?? '', /evict keys that have a TTL/);
  assert.match(at(2 * MB, 5 * MB, 'noeviction') ?? '', /fail halfway with OOM/);
  // Already over the limit: no negative room in the message.
  assert.match(at(9 * MB, 8 * MB, 'noeviction') ?? '', /only 0\.0 MB is left/);
  // One of each is said in the singular.
  const single =
    footprintProblem(
      { usedMemory: 2 * MB, maxMemory: 5 * MB, policy: 'noeviction', notCountedForEvict: 0 },
      { ...four, connections: 1, newCommands: 1 },
      COSTS,
      'redis://h:1',
    ) ?? '';
  assert.match(single, /, 1 connection, 1 command new to the server,/);
  // A round-trip mode whose jobs --loop-jobs set, below --jobs: the line names that flag, to lower.
  const refusal = (run: Parameters<typeof modeRun>[0]) =>
    footprintProblem(
      { usedMemory: 2 * MB, maxMemory: 3 * MB, policy: 'noeviction', notCountedForEvict: 0 },
      peakFootprint([[modeRun(run)]], COSTS, 0, memoryTraits),
      COSTS,
      'redis://h:1',
    ) ?? '';
  const capped = refusal({ mode: 'loop', live: 0, jobsFlag: { flag: 'loop-jobs', axis: false } });
  assert.match(capped, /^loop on --loop-jobs 6000 needs about /);
  assert.match(capped, /Refusing, nothing written: lower --loop-jobs, or use a server with more room$/);
  // Where --jobs was the fewer, it set the loop's jobs too, and is the one to lower.
  assert.match(refusal({ mode: 'loop', live: 0 }), /^loop on --jobs 6000 needs about .*: lower --jobs, or use/);
  // Modes run one after another: a mode on --jobs that does not fit either is named with it, since
  // lowering --loop-jobs alone would only bring the next refusal.
  const both = footprintProblem(
    { usedMemory: 2 * MB, maxMemory: 3 * MB, policy: 'noeviction', notCountedForEvict: 0 },
    peakFootprint(
      [[modeRun({ mode: 'atomic', jobs: 5000 })], [modeRun({ mode: 'loop', live: 0, jobsFlag: { flag: 'loop-jobs', axis: false } })]],
      COSTS,
      0,
      memoryTraits,
    ),
    COSTS,
    'redis://h:1',
  );
  assert.match(both ?? '', /: lower --jobs and --loop-jobs, or use a server with more room$/);
});

test('commandsOf: the base commands, and what each mode and feature adds', () => {
  const base = commandsOf([modeRun()], memoryTraits);
  assert.ok(base.has('evalsha') && base.has('memory|usage') && !base.has('watch'));
  const more = commandsOf(
    [
      modeRun({
        mode: 'watch',
        serverStats: 'required',
        consequences: { faults: ['client-kill', 'script-flush'], workers: 2, cycles: 2, observe: true, notes: [] },
      }),
    ],
    memoryTraits,
  );
  for (const command of [
    'watch',
    'multi',
    'exec',
    'unwatch',
    'lmove',
    'zpopmin',
    'zcount',
    'lindex',
    'lpos',
    'latency|histogram',
    'client|kill',
    'script|flush',
  ])
    assert.ok(more.has(command), command);
});

test('trackedCommands and evictedKeys read INFO latencystats and INFO stats', () => {
  assert.deepEqual(
    trackedCommands('# Latencystats\r\nlatency_percentiles_usec_set:p50=1.003,p99=2.007\r\nlatency_percentiles_usec_script|load:p50=5.001\r\n'),
    new Set(['set', 'script|load']),
  );
  assert.equal(trackedCommands('# Latencystats\r\n'), undefined);
  assert.equal(evictedKeys('# Stats\r\nexpired_keys:3\r\nevicted_keys:42\r\n'), 42);
  const error = evictionError('redis://h:1', 'allkeys-lru', 42);
  assert.equal(error.exitCode, 3);
  assert.match(error.message, /^the server at redis:\/\/h:1 evicted 42 keys while the run was live \(maxmemory-policy allkeys-lru\)/);
});

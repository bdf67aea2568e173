/**
 * The fast paths against their plain counterparts on real servers: the shipped sweep script and
 * the one-command-per-step script leave the same state behind, server-side seeding writes what
 * client seeding writes, and the streaming audit reads what the straightforward one reads.
 */
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { test } from 'node:test';
import { auditJobs, isClean, movesPerJob, type JobSnapshot } from '../../src/audit/rules.js';
import { floorSweeper, SWEEP_FLOOR_LUA, withoutPushes } from '../../src/bench/calibration/floor-sweeper.js';
import { perCommandSweeper } from '../../src/bench/calibration/per-command-sweeper.js';
import { seedJobsPipelined } from '../../src/bench/calibration/pipelined-seed.js';
import { readSnapshotStraightforward } from '../../src/bench/calibration/straightforward-audit.js';
import { measureFloor, measureSize } from '../../src/bench/measure.js';
import { connect } from '../../src/server/connection.js';
import type { Interrupts } from '../../src/shared/interrupt.js';
import { queueKeys, type QueueKeys } from '../../src/queue/keys.js';
import { defaultMaxSweeps, race } from '../../src/race/race.js';
import { expiredDeadline, forEachSliceId, jobKeyChunks, seedJobs, seedSlices, sliceSize } from '../../src/queue/seed.js';
import { measureServerClock, serverTimeMs } from '../../src/server/clock.js';
import type { Session } from '../../src/server/session.js';
import { SWEEP_STALLED_LUA } from '../../src/lua/registry.js';
import { readSnapshot } from '../../src/audit/snapshot.js';
import { atomicSweeper } from '../../src/sweepers/atomic.js';
import { loopSweeper } from '../../src/sweepers/loop.js';
import type { SweeperFactory } from '../../src/sweepers/sweeper.js';
import { allKeys } from '../helpers/keyspace.js';
import { runWith } from '../helpers/run-mode.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';
import { LIMITS } from '../../src/shared/model.js';

let counter = 0;
const fresh = (label: string): QueueKeys => queueKeys(`scale-t${process.pid}-${label}-${counter++}`);

/** Every job hash 1..ARGV[2] under the job prefix ARGV[1], in id order, each as HGETALL answers it. */
const READ_HASHES_LUA = "local out = {} for id = 1, tonumber(ARGV[2]) do out[id] = redis.call('HGETALL', ARGV[1] .. id) end return out";

/** Everything a queue holds, in a comparable form: list order, set members with scores, hashes. */
async function queueState(redis: Redis, keys: QueueKeys, jobs: number): Promise<object> {
  // Read on the server in one call, in id order: thousands of HGETALLs cost the client a command
  // object each, the server a few microseconds each.
  const replies = (await redis.eval(READ_HASHES_LUA, 0, keys.job(''), jobs)) as string[][];
  const hashes = replies.map((fields) => {
    const hash: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) hash[fields[i] ?? ''] = fields[i + 1] ?? '';
    return hash;
  });
  assert.equal(hashes.length, jobs);
  return {
    active: await redis.zrange(keys.active, 0, -1, 'WITHSCORES'),
    pending: await redis.lrange(keys.pending, 0, -1),
    dead: await redis.zrange(keys.dead, 0, -1, 'WITHSCORES'),
    hashes,
  };
}

async function unlinkQueue(redis: Redis, keys: QueueKeys, jobs: number): Promise<void> {
  const names = [keys.active, keys.pending, keys.dead];
  for (let id = 1; id <= jobs; id++) names.push(keys.job(id));
  await redis.unlink(...names);
}

function plainSnapshot(snapshot: JobSnapshot): object {
  return {
    inPending: [...snapshot.inPending],
    inActive: [...snapshot.inActive],
    activeExpired: [...snapshot.activeExpired],
    inDead: [...snapshot.inDead],
    stalled: [...snapshot.stalled].map((v) => (Number.isNaN(v) ? 'NaN' : v)),
    state: [...snapshot.state],
  };
}

/** Jobs a slice seeds: the ids first..last whose residue lies in high..low. */
function idsOf(slice: { first: number; last: number; high: number; low: number }): number[] {
  const ids: number[] = [];
  for (let id = slice.first; id <= slice.last; id++) if (id % 1000 >= slice.low && id % 1000 <= slice.high) ids.push(id);
  return ids;
}

test('seeding slices cover every id once, at most perCall jobs per call, in ascending deadline order', () => {
  const cases = [
    [1, 1, 5000],
    [1, 999, 5000],
    [1, 12_345, 5000],
    [1001, 100_000, 5000],
    [777, 54_321, 700],
    [1, 30_000, 7],
    [5, 4, 1],
  ] as const;
  for (const [origin, count, perCall] of cases) {
    const slices = seedSlices(origin, count, perCall);
    const seen = new Uint8Array(origin + count);
    let previousWindow = 0;
    let previousHigh = 1000;
    for (const slice of slices) {
      const ids = idsOf(slice);
      assert.ok(ids.length <= perCall, `${origin}+${count}/${perCall}: ${ids.length} jobs in one call`);
      for (const id of ids) seen[id] = (seen[id] ?? 0) + 1;
      // Within one window of ids the deadline bands rise (residue falls) from call to call.
      if (slice.first === previousWindow) assert.ok(slice.high < previousHigh && slice.high >= slice.low);
      previousWindow = slice.first;
      previousHigh = slice.low;
    }
    for (let id = 0; id < seen.length; id++) assert.equal(seen[id], id >= origin ? 1 : 0, `${origin}+${count}/${perCall}: id ${id}`);
  }
  assert.deepEqual(seedSlices(1, 0, 5000), []);
});

test('a slice is read back in the order it was seeded: residue falling, ids rising within a residue', () => {
  const cases = [
    [1, 12_345, 5000],
    [1001, 100_000, 5000],
    [777, 54_321, 700],
    [1, 30_000, 7],
    [1, 600, 5000],
  ] as const;
  for (const [origin, count, perCall] of cases) {
    for (const slice of seedSlices(origin, count, perCall)) {
      const visited: number[] = [];
      forEachSliceId(slice, (id, index) => {
        assert.equal(index, visited.length);
        visited.push(id);
      });
      assert.equal(sliceSize(slice), visited.length);
      const expected = idsOf(slice).sort((a, b) => (b % 1000) - (a % 1000) || a - b);
      assert.deepEqual(visited, expected, `${origin}+${count}/${perCall}: ${JSON.stringify(slice)}`);
    }
  }
});

test("a run's job keys for the clean-up: every id once, at most a chunk per call, in the order seeding made them", () => {
  const keys = queueKeys('chunks');
  for (const [jobs, size] of [
    [0, 1000],
    [1, 1000],
    [999, 1000],
    [12_345, 1000],
    [110_000, 1000],
    [30_000, 7],
  ] as const) {
    const chunks = [...jobKeyChunks(keys, jobs, size)];
    const order: string[] = [];
    for (const slice of seedSlices(1, jobs, 5000)) forEachSliceId(slice, (id) => order.push(keys.job(id)));
    assert.deepEqual(chunks.flat(), order, `${jobs}/${size}`);
    assert.equal(new Set(order).size, jobs);
    assert.ok(chunks.every((chunk) => chunk.length > 0 && chunk.length <= size));
    assert.ok(
      chunks.slice(0, -1).every((chunk) => chunk.length === size),
      `${jobs}/${size}: only the last chunk is short`,
    );
  }
});

test('the floor script is the shipped sweep line for line, with its three pushes turned into locals', () => {
  const shipped = SWEEP_STALLED_LUA.split('\n');
  const floor = SWEEP_FLOOR_LUA.split('\n');
  assert.equal(floor.length, shipped.length);
  const changed = shipped.flatMap((line, i) => (line === floor[i] ? [] : [[line.trim(), floor[i]?.trim()]]));
  assert.deepEqual(changed, [
    ["rcall('ZADD', KEYS[2], unpack(toPending))", 'local _ = toPending'],
    ["rcall('RPUSH', KEYS[2], unpack(toPending))", 'local _ = toPending'],
    ["if deadCount > 0 then rcall('ZADD', KEYS[3], unpack(toDead)) end", 'if deadCount > 0 then local _ = toDead end'],
  ]);
  // A shipped script whose pushes took another form would leave a floor that measures nothing.
  assert.throws(
    () => withoutPushes(SWEEP_STALLED_LUA.replace("rcall('RPUSH', KEYS[2], unpack(toPending))", "rcall('RPUSH', KEYS[2], 'x')")),
    /expected 3 batched pushes/,
  );
});

forEachServer('scale', (handle) => {
  let session: Session;
  let admin: Redis;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    admin = opened.admin;
    interrupts = watching;
  });

  /** Seeds a queue, gives odd jobs one stall already (so they dead-letter), sweeps it with one sweeper. */
  async function sweptWith(factory: SweeperFactory, jobs: number, batch: number): Promise<{ keys: QueueKeys; state: object }> {
    const keys = fresh('equiv');
    await seedJobs(admin, keys, { jobs, runId: 'scale-run', stalledBefore: 0, serverNowMs: await serverTimeMs(admin) });
    const pipeline = admin.pipeline();
    for (let id = 1; id <= jobs; id += 2) pipeline.hset(keys.job(id), 'stalled', 1);
    await pipeline.exec();
    const redis = await connect(session.target);
    try {
      const result = await race({
        connections: [redis],
        factory,
        keys,
        clock: await measureServerClock(admin),
        batch,
        maxStalled: 2,
        probeDelayMs: 0,
        maxSweeps: defaultMaxSweeps(jobs, batch),
        signal: new AbortController().signal,
      });
      assert.equal(result.cutShort, false);
    } finally {
      redis.disconnect();
    }
    return { keys, state: await queueState(admin, keys, jobs) };
  }

  test('the shipped sweep script leaves exactly the state the one-command-per-step script leaves', async () => {
    for (const batch of [1, 7, LIMITS.batch.max]) {
      // At the largest batch, one full call and a short one after it: the one-command-per-step
      // script pays several round trips a job, so more full calls would only repeat the first.
      const jobs = batch === LIMITS.batch.max ? batch + 5 : 40;
      const ours = await sweptWith(atomicSweeper, jobs, batch);
      const plain = await sweptWith(perCommandSweeper, jobs, batch);
      assert.deepEqual(ours.state, plain.state, `batch ${batch}`);
      const state = ours.state as { pending: string[]; dead: string[] };
      assert.equal(state.pending.length, Math.floor(jobs / 2), 'even jobs back in pending');
      assert.equal(state.dead.length / 2, Math.ceil(jobs / 2), 'odd jobs dead-lettered');
      await unlinkQueue(admin, ours.keys, jobs);
      await unlinkQueue(admin, plain.keys, jobs);
    }
  });

  test('the floor script does every per-job step of the shipped one and pushes nothing', async () => {
    const ours = await sweptWith(atomicSweeper, 40, 7);
    const bound = await sweptWith(floorSweeper, 40, 7);
    const shipped = ours.state as { active: string[]; pending: string[]; dead: string[]; hashes: object[] };
    const floor = bound.state as typeof shipped;
    assert.deepEqual(floor.hashes, shipped.hashes, 'same counters and states');
    assert.deepEqual([floor.active, floor.pending, floor.dead], [[], [], []]);
    assert.equal(shipped.pending.length, 20);
    await unlinkQueue(admin, ours.keys, 40);
    await unlinkQueue(admin, bound.keys, 40);
  });

  test('at the largest --batch every job dead-letters in one ZADD per call, and the run is clean', async () => {
    // One full call and one of a single job.
    const jobs = LIMITS.batch.max + 1;
    const run = await runWith(session, interrupts, 'atomic', { queue: fresh('maxbatch').queue, jobs, batch: LIMITS.batch.max, stalledBefore: 2 });
    assert.equal(run.recoveries, jobs);
    assert.ok(isClean(run));
  });

  test('server-side seeding writes the same keys, hashes and scores as both client seedings', async () => {
    // More than one seeding call (5,000 jobs each, cut by deadline band) and a last call of another
    // size (4,499 jobs, then 1,001): every path of the slicing writes here. The slicing itself, over
    // counts up to 100,000, is checked without a server above.
    const jobs = 5500;
    const serverNowMs = await serverTimeMs(admin);
    const ours = fresh('seed');
    await seedJobs(admin, ours, { jobs, runId: 'scale-run', stalledBefore: 1, serverNowMs });
    assert.equal(await admin.zcard(ours.active), jobs);
    const expected = await queueState(admin, ours, jobs);
    for (const zadd of ['per-job', 'per-chunk'] as const) {
      const plain = fresh('seed');
      await seedJobsPipelined(admin, plain, { jobs, runId: 'scale-run', stalledBefore: 1, serverNowMs }, zadd);
      assert.deepEqual(await queueState(admin, plain, jobs), expected, zadd);
      await unlinkQueue(admin, plain, jobs);
    }
    await unlinkQueue(admin, ours, jobs);
  });

  test('seeding from an id past 1 (the live jobs) writes exactly those ids, hashes and deadlines', async () => {
    const keys = fresh('offset');
    const serverNowMs = await serverTimeMs(admin);
    const firstId = 1234;
    const jobs = 2345;
    await seedJobs(admin, keys, { jobs, firstId, runId: 'offset-run', stalledBefore: 2, serverNowMs });
    const scored = await admin.zrange(keys.active, 0, -1, 'WITHSCORES');
    const expected = new Map<string, string>();
    for (let id = firstId; id < firstId + jobs; id++) expected.set(String(id), String(expiredDeadline(serverNowMs, id)));
    assert.equal(scored.length / 2, jobs);
    for (let i = 0; i < scored.length; i += 2) assert.equal(scored[i + 1], expected.get(scored[i] ?? ''), `score of ${scored[i]}`);
    // Every hash carries the run's id: what `clean` checks before it deletes one.
    assert.deepEqual(await admin.hgetall(keys.job(firstId)), { state: 'active', stalled: '2', run: 'offset-run' });
    assert.deepEqual(await admin.hgetall(keys.job(firstId + jobs - 1)), { state: 'active', stalled: '2', run: 'offset-run' });
    assert.equal(await admin.exists(keys.job(firstId - 1), keys.job(firstId + jobs)), 0);
    await admin.unlink(keys.active, ...Array.from({ length: jobs }, (_, i) => keys.job(firstId + i)));
  });

  test('the streaming audit reads what the straightforward audit reads, after a racy loop', async () => {
    const jobs = 1500;
    const keys = fresh('audit');
    await seedJobs(admin, keys, { jobs, runId: 'scale-run', stalledBefore: 0, serverNowMs: await serverTimeMs(admin) });
    const connections = [];
    for (let i = 0; i < 4; i++) connections.push(await connect(session.target));
    let records;
    try {
      // Only part of the queue is swept (a sweep budget), so every place a job can be shows up.
      const result = await race({
        connections,
        factory: loopSweeper,
        keys,
        clock: await measureServerClock(admin),
        batch: 50,
        maxStalled: 2,
        probeDelayMs: 0,
        maxSweeps: 6,
        signal: new AbortController().signal,
      });
      records = result.records;
    } finally {
      for (const redis of connections) redis.disconnect();
    }
    // Members that are not seeded jobs, and counters and states no sweep writes, are read alike.
    await admin.rpush(keys.pending, 'not-a-job', String(jobs + 1));
    await admin.hset(keys.job(3), 'stalled', 'x');
    await admin.hset(keys.job(4), 'stalled', '1.5');
    await admin.hset(keys.job(5), 'stalled', '-2', 'state', 'elsewhere');
    await admin.hdel(keys.job(6), 'stalled');
    await admin.hset(keys.job(7), 'stalled', '007');
    const ours = await readSnapshot(admin, keys, jobs, 0);
    const plain = await readSnapshotStraightforward(admin, keys, jobs, 0);
    assert.deepEqual(plainSnapshot(ours), plainSnapshot(plain));
    const counts = auditJobs(ours, movesPerJob(jobs, records).moves);
    assert.ok(counts.duplicatePending > 0, 'the loop raced');
    assert.ok(
      ours.inActive.some((v) => v === 1),
      'some jobs were left in active',
    );
    await unlinkQueue(admin, keys, jobs);
  });

  test('the benchmark measures ours beside its calibrations and both audits agree', async () => {
    // Three batches: what is checked is that every figure is there and agrees, not its size.
    const figures = await measureSize(session.target, { jobs: 300, batch: 100, repeats: 1, sweeperCounts: [2], loopUpTo: 300 });
    assert.equal(figures.audit.sameSnapshot, true);
    assert.equal(figures.audit.clean, true);
    assert.equal(figures.atomicSweep.ours[0]?.clean, true);
    assert.equal(figures.atomicSweep.calibration[0]?.clean, true);
    assert.equal(figures.loop?.sweepers, 8);
    for (const value of [
      figures.seeding.ratio,
      figures.seeding.batchedRatio,
      figures.atomicSweep.ratio,
      figures.atomicSweep.serverRatio,
      figures.audit.ratio,
      figures.serverCommandsPerSec,
    ]) {
      assert.ok(Number.isFinite(value) && value > 0, String(value));
    }
    // The server's time in the race's scripts, read from INFO commandstats around it.
    for (const sweep of [...figures.atomicSweep.ours, ...figures.atomicSweep.calibration, figures.atomicSweep.floor]) {
      assert.ok(sweep?.serverUsPerJob !== undefined && sweep.serverUsPerJob > 0, JSON.stringify(sweep));
    }
    // The floor runs at the standard count only: 8 sweepers, or the last count when 8 is not measured.
    assert.equal(figures.atomicSweep.floor?.sweepers, 2);
    for (const value of [figures.atomicSweep.ceilingRatio, figures.atomicSweep.serverCeilingRatio]) {
      assert.ok(Number.isFinite(value) && value > 0, String(value));
    }
  });

  test("the floor set beside the CLI's race sweeps a queue with the CLI's live leases and leaves them alone", async () => {
    const figures = await measureFloor(session.target, { jobs: 300, live: 30, batch: 100, sweepers: 2 });
    // What the floor left in active is the live leases, every one: the queue held them, and the
    // floor took the 300 expired jobs only. The queue, live jobs' hashes too, is gone (next test).
    assert.equal(figures.leftInActive, 30);
    assert.equal(figures.sweepers, 2);
    assert.ok(figures.serverUsPerJob !== undefined && figures.serverUsPerJob > 0, JSON.stringify(figures));
  });

  test('nothing of any of this is left on the server', async () => {
    assert.deepEqual(await allKeys(admin), []);
  });
});

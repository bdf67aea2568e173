/**
 * The benchmark's measurements on one server at one size: every figure of ours beside its
 * calibration, made in the same process on the same server, one after the other. Run by
 * size-child.ts in a process of its own per size, so sizes do not share a heap.
 */
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { auditJobs, isClean, movesPerJob, type JobSnapshot } from '../audit/rules.js';
import { summarizeLatency, type CallLatency } from '../server/call-latency.js';
import { floorSweeper, SWEEP_FLOOR_LUA } from './calibration/floor-sweeper.js';
import { perCommandSweeper, SWEEP_PER_COMMAND_LUA } from './calibration/per-command-sweeper.js';
import { seedJobsPipelined } from './calibration/pipelined-seed.js';
import { readSnapshotStraightforward } from './calibration/straightforward-audit.js';
import { claimQueue } from '../queue/owner-claim.js';
import { deleteRunKeys } from '../queue/cleanup.js';
import { connect, type ServerTarget } from '../server/connection.js';
import { queueKeys, type QueueKeys } from '../queue/keys.js';
import { newOwnerMarker, newRunId } from '../queue/owner-marker.js';
import { usedMemory } from '../server/memory-check.js';
import { defaultMaxSweeps, race } from '../race/race.js';
import { callCommandRate } from '../lua/calibration-scripts.js';
import { loadScript, preloadScripts } from '../lua/registry.js';
import { seedJobs, type SeedPlan } from '../queue/seed.js';
import { seedLiveJobs } from '../queue/seed-live.js';
import { measureServerClock, serverTimeMs } from '../server/clock.js';
import { readScriptStats, scriptStatsBetween } from '../server/latency-histogram.js';
import { readSnapshot } from '../audit/snapshot.js';
import { atomicSweeper } from '../sweepers/atomic.js';
import { loopSweeper } from '../sweepers/loop.js';
import type { SweeperFactory } from '../sweepers/sweeper.js';
import { jobsPerSec } from '../shared/model.js';

export interface SweepFigures extends Partial<CallLatency> {
  readonly sweepers: number;
  readonly jobsPerSec: number;
  readonly serverCallMsP99?: number;
  /**
   * The server's time in script calls during the race, per job (INFO commandstats): what the
   * script itself costs, without the client's share of the wall time.
   */
  readonly serverUsPerJob?: number;
  readonly clean: boolean;
}

export interface SizeFigures {
  readonly jobs: number;
  readonly batch: number;
  readonly repeats: number;
  /** HINCRBYs per second inside one script: the server's ceiling. */
  readonly serverCommandsPerSec: number;
  readonly seeding: {
    readonly jobsPerSec: number;
    /** The straightforward client: each job's HSET and ZADD, pipelined. */
    readonly calibrationJobsPerSec: number;
    readonly ratio: number;
    /** A tuned client: one HSET per job, one ZADD per 5,000 jobs, pipelined. */
    readonly batchedCalibrationJobsPerSec: number;
    readonly batchedRatio: number;
  };
  readonly atomicSweep: {
    readonly ours: SweepFigures[];
    readonly calibration: SweepFigures[];
    /**
     * The shipped script without its pushes (calibration/floor-sweeper.ts), at the standard
     * sweeper count only. Not a sweep, so it has no `clean`: its jobs go nowhere.
     */
    readonly floor: Omit<SweepFigures, 'clean'> | null;
    /** Jobs per second, ours ÷ calibration, at 8 sweepers (at the last count measured when 8 is not). */
    readonly ratio: number;
    /** The same two runs by the server's own time per job (calibration ÷ ours), without the client's share. */
    readonly serverRatio: number;
    /**
     * The most `ratio` could be with HINCRBY and HSET kept per job: floor ÷ calibration jobs/s
     * (0 when the floor was not measured).
     */
    readonly ceilingRatio: number;
    /** The same ceiling by the server's time per job: calibration ÷ floor. */
    readonly serverCeilingRatio: number;
  };
  readonly loop: SweepFigures | null;
  readonly audit: {
    readonly jobsPerSec: number;
    readonly calibrationJobsPerSec: number;
    readonly ratio: number;
    /** Peak growth of V8 heap + array buffers during our audit, per job (the worst repeat). */
    readonly heapBytesPerJob: number;
    readonly calibrationHeapBytesPerJob: number;
    readonly sameSnapshot: boolean;
    /** The swept queue audited with our reader came out with zero anomalies. */
    readonly clean: boolean;
  };
  readonly serverUsedMemoryBytes: number;
  readonly nodePeakRssBytes: number;
}

export interface MeasureOptions {
  readonly jobs: number;
  readonly batch: number;
  /** Each figure is the best of this many alternating runs of ours and its calibration. */
  readonly repeats: number;
  readonly sweeperCounts: readonly number[];
  /** Loop figures at 8 sweepers are taken only up to this size (a round trip per command is slow). */
  readonly loopUpTo: number;
}

/** The floor's turn beside the CLI's race: its figures, and what it left in `active`. */
export interface FloorFigures extends Omit<SweepFigures, 'clean'> {
  /**
   * Members of `active` after the race: the live leases alone when the floor took every expired
   * job and no live one, which main.ts checks before it sets the turn beside the CLI's.
   */
  readonly leftInActive: number;
}

/** The floor's one measurement beside the CLI's race. */
export interface FloorOptions {
  readonly jobs: number;
  /**
   * Live leases seeded after the expired jobs, as many as the CLI's run seeds: the floor then
   * sweeps the same queue, its sorted set and keyspace as large as the CLI's.
   */
  readonly live: number;
  readonly batch: number;
  readonly sweepers: number;
}

/**
 * `ours` ÷ `theirs` to 0.01; 0 when `theirs` is not above 0. Figures below 1 are real
 * (milliseconds of a tiny seeding, microseconds per job): only zero is refused. Pure.
 */
export const ratio = (ours: number, theirs: number): number => (theirs > 0 ? Math.round((ours / theirs) * 100) / 100 : 0);

/** A fresh queue of its own for each measurement, claimed like a run's; resolves to its keys and the run id its jobs carry. */
async function freshQueue(admin: Redis, jobs: number): Promise<{ keys: QueueKeys; runId: string }> {
  const keys = queueKeys(`bench-${randomBytes(4).toString('hex')}`);
  const runId = newRunId();
  await claimQueue(admin, keys, newOwnerMarker(runId, jobs), "the benchmark's server");
  return { keys, runId };
}

/** The queue joins `created` as soon as it is claimed, so that measureSize deletes it whatever fails. */
async function timedSeed(
  admin: Redis,
  created: Set<QueueKeys>,
  jobs: number,
  seed: (redis: Redis, keys: QueueKeys, plan: SeedPlan) => Promise<void>,
): Promise<{ keys: QueueKeys; runId: string; ms: number }> {
  const { keys, runId } = await freshQueue(admin, jobs);
  created.add(keys);
  const serverNowMs = await serverTimeMs(admin);
  const started = performance.now();
  await seed(admin, keys, { jobs, runId, stalledBefore: 0, serverNowMs });
  return { keys, runId, ms: performance.now() - started };
}

/**
 * Timed from the client, less an empty call's round trip: a script's TIME is frozen for the
 * whole call on some servers (Valkey), so the script cannot time itself.
 */
async function serverCommandRate(admin: Redis): Promise<number> {
  const { keys } = await freshQueue(admin, 0);
  const timed = async (count: number): Promise<number> => {
    const started = performance.now();
    await callCommandRate(admin, `${keys.prefix}scratch`, count);
    return performance.now() - started;
  };
  try {
    await timed(0);
    const empty = await timed(0);
    const count = 200_000;
    const ms = (await timed(count)) - empty;
    return jobsPerSec(count, ms);
  } finally {
    await admin.unlink(`${keys.prefix}scratch`, keys.heartbeat, keys.owner);
  }
}

interface SweepRun {
  readonly figures: SweepFigures;
  readonly keys: QueueKeys;
  readonly moves: Uint32Array;
}

async function sweep(
  target: ServerTarget,
  admin: Redis,
  created: Set<QueueKeys>,
  jobs: number,
  sweepers: number,
  batch: number,
  factory: SweeperFactory,
  serverStats: boolean,
  live = 0,
): Promise<SweepRun> {
  const { keys, runId } = await timedSeed(admin, created, jobs, seedJobs);
  if (live > 0) {
    const serverNowMs = await serverTimeMs(admin);
    await seedLiveJobs(admin, keys, { firstId: jobs + 1, jobs: live, runId, stalledBefore: 0, serverNowMs });
  }
  const connections: Redis[] = [];
  try {
    for (let i = 0; i < sweepers; i++) {
      const redis = await connect(target);
      connections.push(redis);
    }
    const clock = await measureServerClock(admin);
    const before = serverStats ? await readScriptStats(admin, 'required') : undefined;
    const result = await race({
      connections,
      factory,
      keys,
      clock,
      batch,
      maxStalled: 3,
      probeDelayMs: 0,
      maxSweeps: defaultMaxSweeps(jobs, batch),
      signal: new AbortController().signal,
    });
    // The same readings and arithmetic as a run of the command line's (race/run-mode.ts).
    const server = before ? scriptStatsBetween(before, await readScriptStats(admin, 'required'), jobs) : undefined;
    const { moves } = movesPerJob(jobs, result.records);
    const recoveries = moves.reduce((sum, n) => sum + n, 0);
    const latency = summarizeLatency(result.latencies);
    return {
      keys,
      moves,
      figures: {
        sweepers,
        jobsPerSec: jobsPerSec(jobs, result.wallMs),
        ...(latency ?? {}),
        ...(server?.serverCallMsP99 != null ? { serverCallMsP99: server.serverCallMsP99 } : {}),
        ...(server?.serverUsPerJob != null ? { serverUsPerJob: server.serverUsPerJob } : {}),
        // The loop is expected to race; the figures record whether the run was exact.
        clean: recoveries === jobs && !result.cutShort,
      },
    };
  } finally {
    for (const redis of connections) redis.disconnect();
  }
}

/**
 * The floor alone, once, at `sweepers`: what the CLI's own race is set beside (main.ts runs the
 * two in turn, each in a process of its own), on a fresh queue with the CLI's live leases beside
 * its expired jobs, deleted before it returns.
 */
export async function measureFloor(target: ServerTarget, { jobs, live, batch, sweepers }: FloorOptions): Promise<FloorFigures> {
  const admin = await connect(target);
  const created = new Set<QueueKeys>();
  try {
    await preloadScripts(admin);
    await loadScript(admin, SWEEP_FLOOR_LUA);
    // A race first, unmeasured and deleted: in a fresh process the first calls took 20 to 50 ms
    // more than later ones (reading a few large array replies first took that away too: it is the
    // process's first replies of a batch of ids each), which a bound should not carry. Two batches
    // per sweeper, or every job if fewer: the size the bench's figures were measured with
    // (docs/benchmark.md).
    const warmJobs = Math.min(jobs, 2 * batch * sweepers);
    const warm = await sweep(target, admin, created, warmJobs, sweepers, batch, floorSweeper, false);
    await deleteRunKeys(admin, warm.keys, warmJobs);
    created.delete(warm.keys);
    const run = await sweep(target, admin, created, jobs, sweepers, batch, floorSweeper, true, live);
    return { ...withoutClean(run.figures), leftInActive: await admin.zcard(run.keys.active) };
  } finally {
    for (const keys of created) await deleteRunKeys(admin, keys, jobs + live).catch(() => {});
    admin.disconnect();
  }
}

/** Runs `read` while sampling heap + array buffers; the peak growth over the starting point. */
async function withHeapPeak<T>(read: () => Promise<T>): Promise<{ value: T; ms: number; peakBytes: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const used = (): number => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const base = used();
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, used())), 2);
  const started = performance.now();
  try {
    const value = await read();
    const ms = performance.now() - started;
    peak = Math.max(peak, used());
    return { value, ms, peakBytes: peak - base };
  } finally {
    clearInterval(sampler);
  }
}

function withoutClean({ clean: _clean, ...figures }: SweepFigures): Omit<SweepFigures, 'clean'> {
  return figures;
}

function sameSnapshot(a: JobSnapshot, b: JobSnapshot): boolean {
  const fields = ['inPending', 'inActive', 'activeExpired', 'inDead', 'state'] as const;
  for (const field of fields) if (!Buffer.from(a[field].buffer).equals(Buffer.from(b[field].buffer))) return false;
  for (let id = 1; id <= a.jobs; id++) {
    const x = a.stalled[id] ?? Number.NaN;
    const y = b.stalled[id] ?? Number.NaN;
    if (!(x === y || (Number.isNaN(x) && Number.isNaN(y)))) return false;
  }
  return true;
}

/** `items` begun at index `by` (modulo its length), wrapping round: the order of the sides in repeat `by`. Pure. */
export function rotated<T>(items: readonly T[], by: number): T[] {
  const start = items.length > 0 ? by % items.length : 0;
  return [...items.slice(start), ...items.slice(0, start)];
}

/** The better of two figures of one kind: the most jobs per second the run managed (the first on a tie). */
export function best<T extends { readonly jobsPerSec: number }>(a: T | undefined, b: T): T {
  return a && a.jobsPerSec >= b.jobsPerSec ? a : b;
}

/** What every measurement of one size shares: the server, its admin connection, the queues still to delete. */
interface Bench {
  readonly target: ServerTarget;
  readonly admin: Redis;
  readonly options: MeasureOptions;
  /** The queues not yet deleted; whatever is left when measuring fails goes at the end. */
  readonly created: Set<QueueKeys>;
  readonly drop: (keys: QueueKeys) => Promise<void>;
}

export async function measureSize(target: ServerTarget, options: MeasureOptions): Promise<SizeFigures> {
  const admin = await connect(target);
  const created = new Set<QueueKeys>();
  const drop = async (keys: QueueKeys): Promise<void> => {
    await deleteRunKeys(admin, keys, options.jobs);
    created.delete(keys);
  };
  const bench: Bench = { target, admin, options, created, drop };
  try {
    const seeded = await measureSeeding(bench);
    const swept = await measureSweeps(bench);
    const audit = await measureAudit(bench, swept.audited);
    return {
      jobs: options.jobs,
      batch: options.batch,
      repeats: options.repeats,
      serverCommandsPerSec: seeded.serverCommandsPerSec,
      seeding: seeded.seeding,
      atomicSweep: swept.atomicSweep,
      loop: swept.loop,
      audit,
      serverUsedMemoryBytes: seeded.serverUsedMemoryBytes,
      nodePeakRssBytes: process.resourceUsage().maxRSS * 1024,
    };
  } finally {
    for (const keys of created) await deleteRunKeys(admin, keys, options.jobs).catch(() => {});
    admin.disconnect();
  }
}

/** Our server-side seeding against the pipelined client's, per job and per chunk; and the server's command rate. */
async function measureSeeding({
  admin,
  options,
  created,
  drop,
}: Bench): Promise<Pick<SizeFigures, 'serverCommandsPerSec' | 'seeding' | 'serverUsedMemoryBytes'>> {
  const { jobs, repeats } = options;
  // Ours and its calibration alternate, `repeats` times each; each keeps its best, so a burst of
  // load from elsewhere on the machine does not decide a ratio.
  let serverCommandsPerSec = 0;
  let seedMs = Infinity;
  let calibrationSeedMs = Infinity;
  let batchedSeedMs = Infinity;
  let serverUsedMemoryBytes = 0;
  // One unmeasured round first: the server's first touch of fresh memory (page faults, which a
  // virtual machine makes slow) and Node's first compile would otherwise land on whichever side
  // runs first. Both sides then run on memory the server has already used, as a server does.
  const warmUp = await timedSeed(admin, created, jobs, seedJobs);
  await drop(warmUp.keys);
  const sides: (() => Promise<void>)[] = [
    async () => {
      const ours = await timedSeed(admin, created, jobs, seedJobs);
      seedMs = Math.min(seedMs, ours.ms);
      serverUsedMemoryBytes = Math.max(serverUsedMemoryBytes, await usedMemory(admin));
      await drop(ours.keys);
    },
    async () => {
      const calibration = await timedSeed(admin, created, jobs, (redis, keys, plan) => seedJobsPipelined(redis, keys, plan, 'per-job'));
      calibrationSeedMs = Math.min(calibrationSeedMs, calibration.ms);
      await drop(calibration.keys);
    },
    async () => {
      const batched = await timedSeed(admin, created, jobs, (redis, keys, plan) => seedJobsPipelined(redis, keys, plan, 'per-chunk'));
      batchedSeedMs = Math.min(batchedSeedMs, batched.ms);
      await drop(batched.keys);
    },
  ];
  for (let r = 0; r < repeats; r++) {
    serverCommandsPerSec = Math.max(serverCommandsPerSec, await serverCommandRate(admin));
    // Each repeat starts with the next side: none always follows the same one.
    for (const side of rotated(sides, r)) await side();
  }
  const seeding = {
    jobsPerSec: jobsPerSec(jobs, seedMs),
    calibrationJobsPerSec: jobsPerSec(jobs, calibrationSeedMs),
    ratio: ratio(calibrationSeedMs, seedMs),
    batchedCalibrationJobsPerSec: jobsPerSec(jobs, batchedSeedMs),
    batchedRatio: ratio(batchedSeedMs, seedMs),
  };
  return { serverCommandsPerSec, seeding, serverUsedMemoryBytes };
}

/**
 * The shipped sweep against the per-command script at every sweeper count (and the floor at the
 * standard count), then the loop once. The first queue the shipped sweep swept is kept for the audit.
 */
async function measureSweeps({ target, admin, options, created, drop }: Bench): Promise<Pick<SizeFigures, 'atomicSweep' | 'loop'> & { audited: SweepRun }> {
  const { jobs, batch, repeats } = options;
  const oursSweeps: SweepFigures[] = [];
  const calibrationSweeps: SweepFigures[] = [];
  let audited: SweepRun | undefined;
  // Once is enough: nothing here empties the script cache, so no race pays for an EVAL.
  // The floor joins the alternation at the standard sweeper count only, the one the ratio is
  // taken at.
  await preloadScripts(admin);
  await loadScript(admin, SWEEP_PER_COMMAND_LUA);
  await loadScript(admin, SWEEP_FLOOR_LUA);
  const standard = options.sweeperCounts.includes(8) ? 8 : options.sweeperCounts[options.sweeperCounts.length - 1];
  let floor: SweepFigures | undefined;
  for (const sweepers of options.sweeperCounts) {
    let ours: SweepFigures | undefined;
    let calibrated: SweepFigures | undefined;
    const sides: (() => Promise<void>)[] = [
      async () => {
        const run = await sweep(target, admin, created, jobs, sweepers, batch, atomicSweeper, true);
        ours = best(ours, run.figures);
        // The first swept queue stays for the audit; the others go at once.
        if (audited) await drop(run.keys);
        else audited = run;
      },
      async () => {
        const calibration = await sweep(target, admin, created, jobs, sweepers, batch, perCommandSweeper, true);
        calibrated = best(calibrated, calibration.figures);
        await drop(calibration.keys);
      },
    ];
    if (sweepers === standard) {
      sides.push(async () => {
        const bound = await sweep(target, admin, created, jobs, sweepers, batch, floorSweeper, true);
        floor = best(floor, bound.figures);
        await drop(bound.keys);
      });
    }
    // Each repeat starts with the next side, so that no side always runs first (on a server its
    // predecessor's deletions may still be freeing) or always last.
    for (let r = 0; r < repeats; r++) {
      for (const side of rotated(sides, r)) await side();
    }
    if (ours) oursSweeps.push(ours);
    if (calibrated) calibrationSweeps.push(calibrated);
  }
  // The ratios are taken at the standard count.
  const oursAt = oursSweeps.find((f) => f.sweepers === standard);
  const calibrationAt = calibrationSweeps.find((f) => f.sweepers === standard);

  let loop: SweepFigures | null = null;
  if (jobs <= options.loopUpTo) {
    const run = await sweep(target, admin, created, jobs, 8, batch, loopSweeper, false);
    loop = run.figures;
    await drop(run.keys);
  }
  if (!audited) throw new Error('no sweeper count to measure');
  return {
    atomicSweep: {
      ours: oursSweeps,
      calibration: calibrationSweeps,
      ratio: ratio(oursAt?.jobsPerSec ?? 0, calibrationAt?.jobsPerSec ?? 0),
      serverRatio: ratio(calibrationAt?.serverUsPerJob ?? 0, oursAt?.serverUsPerJob ?? 0),
      floor: floor ? withoutClean(floor) : null,
      ceilingRatio: ratio(floor?.jobsPerSec ?? 0, calibrationAt?.jobsPerSec ?? 0),
      serverCeilingRatio: ratio(calibrationAt?.serverUsPerJob ?? 0, floor?.serverUsPerJob ?? 0),
    },
    loop,
    audited,
  };
}

/** Our streaming audit against the straightforward one, on the queue the shipped sweep left. */
async function measureAudit({ admin, options, drop }: Bench, audited: SweepRun): Promise<SizeFigures['audit']> {
  const { jobs, repeats } = options;
  const keys = audited.keys;
  let auditMs = Infinity;
  let calibrationAuditMs = Infinity;
  let heapBytes = 0;
  let calibrationHeapBytes = 0;
  let same = true;
  let clean = true;
  for (let r = 0; r < repeats; r++) {
    const ours = await withHeapPeak(() => readSnapshot(admin, keys, jobs, 0));
    auditMs = Math.min(auditMs, ours.ms);
    heapBytes = Math.max(heapBytes, ours.peakBytes);
    clean &&= isClean(auditJobs(ours.value, audited.moves));
    const theirs = await withHeapPeak(() => readSnapshotStraightforward(admin, keys, jobs, 0));
    calibrationAuditMs = Math.min(calibrationAuditMs, theirs.ms);
    calibrationHeapBytes = Math.max(calibrationHeapBytes, theirs.peakBytes);
    same &&= sameSnapshot(ours.value, theirs.value);
  }
  await drop(keys);
  return {
    jobsPerSec: jobsPerSec(jobs, auditMs),
    calibrationJobsPerSec: jobsPerSec(jobs, calibrationAuditMs),
    ratio: ratio(calibrationAuditMs, auditMs),
    heapBytesPerJob: Math.round((heapBytes / jobs) * 10) / 10,
    calibrationHeapBytesPerJob: Math.round((calibrationHeapBytes / jobs) * 10) / 10,
    sameSnapshot: same,
    clean,
  };
}

/**
 * One BullMQ mode end to end on a queue of its own: claim (the library's namespace in the queue,
 * see keys.ts), seed real stalled work through BullMQ (seed.ts), race N callers from one barrier,
 * each on its own connection, each checking until a check moves nothing, stop every BullMQ client,
 * read BullMQ's keys back (snapshot.ts) and audit them (audit.ts). The claim's clean-up removes the
 * namespace on every way out.
 *
 *   bullmq          each caller a BullMQ Worker of the user's installed package, calling its own
 *                   stalled check (Worker#moveStalledJobsToWait, the moveStalledJobsToWait script);
 *   bullmq-naive    each caller the round-trip port of that script, deaf to LREM's reply (port.ts);
 *   bullmq-guarded  the same port, acting on LREM's reply.
 */
import type { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { figureSources } from '../../audit/sources.js';
import { onClaimedQueue, type ClaimedRun } from '../../queue/claimed-run.js';
import { queueKeys } from '../../queue/keys.js';
import { connect, libraryClientOptions } from '../../server/connection.js';
import { NO_CONSEQUENCES, jobsPerSec, type AuditCounts, type ModeRun, type RunResult } from '../../model.js';
import type { LibraryRunner } from '../runner.js';
import { auditBullmq } from './audit.js';
import { BULLMQ, bullmqKeys, type BullmqKeys } from './keys.js';
import { loadBullmq, type Bullmq } from './module.js';
import { portedStalledCheck, type Exec } from './port.js';
import { readBullmqSnapshot } from './snapshot.js';
import { BullmqClients, seedStalledJobs } from './seed.js';

/** The callers' stalledInterval and lockDuration (ms): BullMQ's defaults. The gate a check sets lives this long. */
const RACE_INTERVAL_MS = 30_000;
/** Checks one caller may make: a bound, so a broken recovery cannot spin. */
const MAX_CHECKS = 100;

/** One caller: a check resolves to the job ids it moved, in order. */
interface Caller {
  check(): Promise<string[]>;
  /** Server calls it has sent: one per check for BullMQ's script, one per command for a port. */
  readonly commands: number;
}

/** BullMQ's maxStalledCount for --max-stalled N: BullMQ fails a job whose count goes above it, the tool at N. */
export function maxStalledCount(maxStalled: number): number {
  return Math.max(0, maxStalled - 1);
}

export const runBullmqMode: LibraryRunner = async (session, run, interrupts) => {
  const found = run.library;
  if (!found) throw new Error(`mode ${run.mode} ran without its library`);
  const bullmq = await loadBullmq(found);
  const keys = queueKeys(run.queue);
  const claim = { admin: session.admin, where: session.target.display, keys, jobs: run.jobs, keep: run.keep, library: BULLMQ };
  return onClaimedQueue(claim, interrupts, async (claimed) => {
    const clients = new BullmqClients();
    const connections: Redis[] = [];
    try {
      const bull = bullmqKeys(run.queue);
      const seedConnection = libraryClientOptions(session.target);
      await seedStalledJobs(session.admin, {
        bullmq,
        connection: seedConnection,
        keys: bull,
        jobs: run.jobs,
        runId: claimed.runId,
        maxStalledCount: maxStalledCount(run.maxStalled),
        clients,
        signal: claimed.signal,
      });
      const raceTarget = session.raceTarget ?? session.target;
      const callers: Caller[] = [];
      for (let i = 0; i < run.sweepers; i++) {
        claimed.signal.throwIfAborted();
        if (run.mode === 'bullmq') callers.push(await workerCaller(bullmq, libraryClientOptions(raceTarget), bull, run, clients));
        else {
          const redis = await connect(raceTarget);
          connections.push(redis);
          callers.push(portCaller(redis, bull, run, run.mode === 'bullmq-guarded', claimed.signal));
        }
      }
      const raced = await raceCallers(callers, run.jobs, claimed.signal);
      clients.check();
      // BullMQ's timers (lock renewal, stalled checks) stop before the server is read back.
      await clients.closeAll();
      await claimed.confirmKeys();
      const counts = await judge(session.admin, bull, run, raced.moves, claimed);
      return resultOf(run, raced, counts);
    } finally {
      await clients.closeAll();
      for (const redis of connections) redis.disconnect();
    }
  });
};

/** A BullMQ worker of the user's package, its stalled check called as its own timer calls it. */
async function workerCaller(bullmq: Bullmq, connection: object, keys: BullmqKeys, run: ModeRun, clients: BullmqClients): Promise<Caller> {
  const worker = clients.add(
    new bullmq.Worker(keys.name, null, {
      connection,
      prefix: keys.prefix,
      autorun: false,
      lockDuration: RACE_INTERVAL_MS,
      stalledInterval: RACE_INTERVAL_MS,
      maxStalledCount: maxStalledCount(run.maxStalled),
    }),
  );
  const moved: string[] = [];
  worker.on('stalled', (jobId: string) => moved.push(jobId));
  await worker.waitUntilReady();
  let commands = 0;
  return {
    async check() {
      const before = moved.length;
      commands++;
      await worker.moveStalledJobsToWait();
      clients.check();
      return moved.slice(before);
    },
    get commands() {
      return commands;
    },
  };
}

/** The round-trip port on one connection of the tool's, every command a round trip, stopped by `signal` between two. */
function portCaller(redis: Redis, keys: BullmqKeys, run: ModeRun, guarded: boolean, signal: AbortSignal): Caller {
  let commands = 0;
  const exec: Exec = (command, ...args) => {
    signal.throwIfAborted();
    commands++;
    return redis.call(command, ...args);
  };
  const args = { maxStalledCount: maxStalledCount(run.maxStalled), maxCheckTime: RACE_INTERVAL_MS };
  return {
    check: () => portedStalledCheck(exec, keys, { ...args, now: Date.now() }, guarded),
    get commands() {
      return commands;
    },
  };
}

interface Raced {
  readonly wallMs: number;
  /** Moves per job id, from the callers' own records. */
  readonly moves: Uint32Array;
  readonly commands: number;
  readonly checks: number;
  readonly cutShort: boolean;
}

/** Every caller released at once from one barrier, each checking until a check moves nothing; one failing stops the rest. */
async function raceCallers(callers: readonly Caller[], jobs: number, signal: AbortSignal): Promise<Raced> {
  const stop = new AbortController();
  const stopped = AbortSignal.any([signal, stop.signal]);
  const moves = new Uint32Array(jobs + 1);
  let checks = 0;
  let cutShort = false;
  let release!: () => void;
  const barrier = new Promise<void>((resolve) => (release = resolve));
  const runs = callers.map(async (caller) => {
    await barrier;
    try {
      for (let made = 0; ; made++) {
        if (made === MAX_CHECKS) {
          cutShort = true;
          return;
        }
        stopped.throwIfAborted();
        const moved = await caller.check();
        checks++;
        for (const id of moved) {
          const n = Number(id);
          if (Number.isInteger(n) && n >= 1 && n <= jobs) moves[n] = (moves[n] ?? 0) + 1;
        }
        if (moved.length === 0) return;
      }
    } catch (err) {
      stop.abort();
      throw err;
    }
  });
  const started = performance.now();
  release();
  const settled = await Promise.allSettled(runs);
  const wallMs = performance.now() - started;
  // The first failure is the cause; the others are callers it stopped.
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw signal.aborted ? signal.reason : failed.reason;
  return { wallMs, moves, commands: callers.reduce((sum, c) => sum + c.commands, 0), checks, cutShort };
}

async function judge(admin: Redis, keys: BullmqKeys, run: ModeRun, moves: Uint32Array, claimed: Pick<ClaimedRun, 'signal'>): Promise<AuditCounts> {
  const snapshot = await readBullmqSnapshot(admin, keys, run.jobs, claimed.signal);
  return auditBullmq(snapshot, moves, run.maxStalled);
}

/** The run's result: its spec, the audit's counts and the race's own figures. Pure. */
function resultOf(run: ModeRun, raced: Raced, counts: AuditCounts): RunResult {
  const found = run.library;
  return {
    mode: run.mode,
    queue: run.queue,
    sweepers: run.sweepers,
    jobs: run.jobs,
    batch: run.batch,
    maxStalled: run.maxStalled,
    stalledBefore: 0,
    ...counts,
    wallMs: Math.round(raced.wallMs * 10) / 10,
    jobsPerSec: jobsPerSec(run.jobs, raced.wallMs),
    roundTrips: raced.commands,
    sweeps: raced.checks,
    cutShort: raced.cutShort,
    consequences: NO_CONSEQUENCES,
    noscriptFallbacks: 0,
    samples: undefined,
    faultCounts: undefined,
    executions: undefined,
    trial: run.trial ?? 1,
    pending: 'list',
    live: 0,
    maxSweeps: MAX_CHECKS,
    processes: false,
    retries: 0,
    callMsP50: null,
    callMsP99: null,
    callMsMax: null,
    serverCallMsP99: null,
    sources: figureSources(counts, 1),
    example: null,
    ...(found ? { library: { name: found.name, version: found.version } } : {}),
  };
}

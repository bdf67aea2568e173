/**
 * One mode, end to end, on a queue of its own: claim, seed, race, audit, clean up. Cleanup runs on
 * every path once the claim is won, unless --keep or a second Ctrl-C says otherwise.
 */
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { auditJobs, movesPerJob, type AuditCounts } from './audit.js';
import { summarizeLatency } from './call-latency.js';
import { claimQueue } from './claim.js';
import { deleteRunKeys } from './cleanup.js';
import { connect } from './connection.js';
import { describeServerError } from './errors.js';
import { interruption, type Interrupts } from './interrupt.js';
import { queueKeys } from './keys.js';
import type { Mode } from './options.js';
import { watchProgress, type ProgressWriter } from './progress.js';
import { defaultMaxSweeps, race } from './race.js';
import { defineScripts, preloadScripts } from './scripts.js';
import { seedJobs } from './seed.js';
import { measureServerClock, serverTimeMs, type ServerClock } from './server-clock.js';
import type { Session } from './session.js';
import { histogramDelta, histogramPercentileMs, readScriptHistogram, type Histograms } from './server-latency.js';
import { readSnapshot } from './snapshot.js';
import { SWEEPERS } from './sweepers/index.js';

export interface ModeRun {
  readonly mode: Mode;
  readonly queue: string;
  readonly jobs: number;
  readonly sweepers: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly probeDelayMs: number;
  readonly keep: boolean;
  /** Read the server's LATENCY HISTOGRAM around the race for serverCallMsP99. */
  readonly serverStats?: boolean;
  /** Where progress lines go on long runs (a terminal's stderr), if anywhere. */
  readonly progress?: ProgressWriter;
}

export interface RunResult extends AuditCounts {
  readonly mode: Mode;
  readonly queue: string;
  readonly sweepers: number;
  readonly jobs: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly wallMs: number;
  readonly jobsPerSec: number;
  /** Commands the sweepers sent, all together. */
  readonly roundTrips: number;
  readonly sweeps: number;
  /** A sweeper hit its sweep budget before a sweep found nothing. */
  readonly cutShort: boolean;
  /** Per-call time of one-call-per-sweep strategies as the client saw it (ms); null for round-trip modes. */
  readonly callMsP50: number | null;
  readonly callMsP99: number | null;
  readonly callMsMax: number | null;
  /** p99 of the server's own time per script call during the race (ms, power-of-two resolution); null when not measured. */
  readonly serverCallMsP99: number | null;
  /** The server (`host:port`) the queue lived on; set by the caller that placed the queue. */
  readonly node?: string;
}

export const newRunId = (): string => randomBytes(8).toString('hex');

export async function runMode(session: Session, run: ModeRun, interrupts: Interrupts, clientNow?: () => number): Promise<RunResult> {
  const { admin, target } = session;
  const keys = queueKeys(run.queue);
  const runId = newRunId();
  const signal = interrupts.signal;

  try {
    await claimQueue(admin, keys, runId);
  } catch (err) {
    throw describeServerError(err, target.display);
  }

  const sweeperConnections: Redis[] = [];
  try {
    const serverNowMs = await serverTimeMs(admin);
    await seedJobs(admin, keys, { jobs: run.jobs, stalledBefore: run.stalledBefore, serverNowMs }, signal);
    defineScripts(admin);
    await preloadScripts(admin);
    for (let i = 0; i < run.sweepers; i++) {
      signal.throwIfAborted();
      const redis = await connect(target);
      defineScripts(redis);
      sweeperConnections.push(redis);
    }
    const clock: ServerClock = await measureServerClock(admin, clientNow);
    const histogramBefore = run.serverStats ? await readScriptHistogram(admin).catch(() => undefined) : undefined;
    const stopProgress = run.progress ? watchProgress(run.progress, admin, keys.active, `${run.mode} ${run.queue}`, run.jobs) : undefined;
    const result = await race({
      connections: sweeperConnections,
      factory: SWEEPERS[run.mode],
      keys,
      clock,
      batch: run.batch,
      maxStalled: run.maxStalled,
      probeDelayMs: run.probeDelayMs,
      maxSweeps: defaultMaxSweeps(run.jobs, run.batch),
      signal,
    }).finally(() => stopProgress?.());
    const serverCallMsP99 = histogramBefore ? await serverP99(admin, histogramBefore) : null;
    signal.throwIfAborted();
    const snapshot = await readSnapshot(admin, keys, run.jobs, run.stalledBefore, signal);
    const counts = auditJobs(snapshot, movesPerJob(run.jobs, result.records));
    const latency = summarizeLatency(result.latencies);
    return {
      mode: run.mode,
      queue: run.queue,
      sweepers: run.sweepers,
      jobs: run.jobs,
      batch: run.batch,
      maxStalled: run.maxStalled,
      stalledBefore: run.stalledBefore,
      ...counts,
      wallMs: Math.round(result.wallMs * 10) / 10,
      jobsPerSec: Math.round(run.jobs / (Math.max(result.wallMs, 0.001) / 1000)),
      roundTrips: result.commands,
      sweeps: result.sweeps,
      cutShort: result.cutShort,
      callMsP50: latency?.callMsP50 ?? null,
      callMsP99: latency?.callMsP99 ?? null,
      callMsMax: latency?.callMsMax ?? null,
      serverCallMsP99,
    };
  } catch (err) {
    throw interruption(signal) ?? describeServerError(err, target.display);
  } finally {
    for (const redis of sweeperConnections) redis.disconnect();
    if (!run.keep && !interrupts.hurried) {
      await deleteRunKeys(admin, keys, run.jobs).catch(() => {
        process.stderr.write(`emq-race: could not delete the keys of queue ${run.queue} (${keys.prefix}*): they remain on the server\n`);
      });
    }
  }
}

/** The p99 of the script calls since `before`, or null where the server cannot say. */
async function serverP99(admin: Redis, before: Histograms): Promise<number | null> {
  const after = await readScriptHistogram(admin).catch(() => undefined);
  if (!after) return null;
  return histogramPercentileMs(histogramDelta(before, after), 99) ?? null;
}

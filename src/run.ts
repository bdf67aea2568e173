/**
 * One mode, end to end, on a queue of its own: claim, seed, race, audit, clean up. The claim, the
 * run's heartbeat and the cleanup are src/claimed-run.ts's; this file is the race in between.
 */
import type { Redis } from 'ioredis';
import { withCycleSums } from './audit-consequences.js';
import { auditJobs, type AuditCounts } from './audit.js';
import { summarizeLatency } from './call-latency.js';
import { onClaimedQueue } from './claimed-run.js';
import { connect } from './connection.js';
import { describeServerError } from './errors.js';
import type { Interrupts } from './interrupt.js';
import { queueKeys, type QueueKeys } from './keys.js';
import type { ChaosCounts } from './faults/chaos.js';
import type { FaultCounts } from './faults/sweeper-faults.js';
import { deleteSweepFunction, loadSweepFunction, type SweepFunction } from './function-library.js';
import type { Mode, PendingKind } from './options.js';
import { raceInProcesses } from './process-race.js';
import { defaultMaxSweeps } from './race.js';
import { NO_CONSEQUENCES, raceRounds, type Consequences } from './rounds.js';
import { seedLiveJobs } from './seed-live.js';
import { BACK_TO_BACK, type Cadence } from './sweep-loop.js';
import { checkMemoryRoom } from './memory-check.js';
import type { ProgressBoard } from './progress.js';
import { jobsPerSec } from './rate.js';
import { preloadScripts } from './scripts.js';
import { seedJobs } from './seed.js';
import { measureServerClock, serverTimeMs, type ServerClock } from './server-clock.js';
import type { Session } from './session.js';
import { p99Between, readScriptHistogram, type Histograms } from './server-latency.js';
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
  /** Faults, workers, cycles, observer; absent for the plain race. */
  readonly consequences?: Consequences;
  /** The rest defaults to the foundation's behaviour: a list, no live jobs, back to back, one process. */
  readonly pending?: PendingKind;
  readonly live?: number;
  readonly maxSweeps?: number;
  readonly cadence?: Cadence;
  readonly processes?: boolean;
  /** The script mode's source, already loaded by SCRIPT LOAD. */
  readonly userScript?: string;
  /** Which of several trials this is (1-based). */
  readonly trial?: number;
  /**
   * Read the server's LATENCY HISTOGRAM around the race for serverCallMsP99: 'required' (asked
   * for with --server-stats: a refusal is the run's error) or 'if-available' (the tool's own
   * server: the figure is left out where the server cannot give it).
   */
  readonly serverStats?: 'required' | 'if-available';
  /** The progress line for long runs (on a terminal's stderr), shared by the races run side by side. */
  readonly progress?: ProgressBoard;
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
  readonly consequences: Consequences;
  /** EVALSHA calls that fell back to EVAL after NOSCRIPT. */
  readonly noscriptFallbacks: number;
  /** Observer samples (jobs checked); undefined without --observe. */
  readonly samples: number | undefined;
  /** What the faults did; undefined without --fault. */
  readonly faultCounts: (FaultCounts & ChaosCounts) | undefined;
  /** Jobs the workers took, a job taken twice counted twice; undefined without --workers. */
  readonly executions: number | undefined;
  readonly trial: number;
  readonly pending: PendingKind;
  readonly live: number;
  readonly maxSweeps: number;
  readonly processes: boolean;
  /** Attempts repeated because WATCH saw a change (watch mode; 0 elsewhere). */
  readonly retries: number;
  /** The function mode's library, when --keep left it on the server. */
  readonly keptLibrary?: string;
  /** Per-call time of one-call-per-sweep strategies as the client saw it (ms); null for round-trip modes and with --processes. */
  readonly callMsP50: number | null;
  readonly callMsP99: number | null;
  readonly callMsMax: number | null;
  /** p99 of the server's own time per script call during the race (ms, power-of-two resolution); null when not measured. */
  readonly serverCallMsP99: number | null;
  /** The server (`host:port`) the queue lived on; set by the caller that placed the queue. */
  readonly node?: string;
}

/** A mode's run on `session`'s server: it needs only the admin connection and the target. */
export async function runMode(session: Pick<Session, 'admin' | 'target'>, run: ModeRun, interrupts: Interrupts, clientNow?: () => number): Promise<RunResult> {
  const { admin, target } = session;
  const live = run.live ?? 0;
  interrupts.signal.throwIfAborted();
  try {
    await checkMemoryRoom(admin, run.jobs, run.sweepers, live);
  } catch (err) {
    throw describeServerError(err, target.display);
  }
  const keys = queueKeys(run.queue);
  // The marker records the job count, so `emq-race clean` can delete a crashed run's keys by name.
  const plan = { admin, where: target.display, keys, jobs: run.jobs + live, keep: run.keep, say: (line: string) => process.stderr.write(line) };
  return onClaimedQueue(plan, interrupts, ({ runId, signal }) => raceOnQueue(session, run, keys, runId, signal, clientNow));
}

/** Seed, race, audit on a queue the run owns; `signal` stops it. */
async function raceOnQueue(session: Pick<Session, 'admin' | 'target'>, run: ModeRun, keys: QueueKeys, runId: string, signal: AbortSignal, clientNow?: () => number): Promise<RunResult> {
  const { admin, target } = session;
  const live = run.live ?? 0;
  const consequences = run.consequences ?? NO_CONSEQUENCES;
  const sweeperConnections: Redis[] = [];
  const pending = run.pending ?? 'list';
  const maxSweeps = run.maxSweeps ?? defaultMaxSweeps(run.jobs, run.batch);
  let sweepFunction: SweepFunction | undefined;
  try {
    if (run.mode === 'function') sweepFunction = await loadSweepFunction(admin, runId);
    const extras = {
      pending,
      ...(run.userScript !== undefined ? { userScript: run.userScript } : {}),
      ...(sweepFunction ? { functionName: sweepFunction.name } : {}),
    };
    const serverNowMs = await serverTimeMs(admin);
    await seedJobs(admin, keys, { jobs: run.jobs, runId, stalledBefore: run.stalledBefore, serverNowMs }, signal);
    if (live > 0) await seedLiveJobs(admin, keys, { firstId: run.jobs + 1, jobs: live, runId, stalledBefore: run.stalledBefore, serverNowMs }, signal);
    await preloadScripts(admin);
    const cadence = run.cadence ?? BACK_TO_BACK;
    if (!run.processes) {
      for (let i = 0; i < run.sweepers; i++) {
        signal.throwIfAborted();
        // Killed connections come back (the tool, not the client, decides what is sent again).
        const redis = await connect(target, { reconnect: consequences.faults.includes('client-kill') });
        sweeperConnections.push(redis);
      }
    }
    const clock: ServerClock = await measureServerClock(admin, clientNow);
    const histogramBefore = run.serverStats
      ? await readScriptHistogram(admin).catch((err: unknown) => {
          if (run.serverStats === 'if-available') return undefined;
          throw err;
        })
      : undefined;
    const stopProgress = run.progress?.watch(admin, keys.active, run.mode, run.queue, run.jobs, live);
    const result = await raceRounds({
      target,
      admin,
      connections: sweeperConnections,
      factory: SWEEPERS[run.mode],
      keys,
      clock,
      jobs: run.jobs,
      tracked: run.jobs + live,
      batch: run.batch,
      maxStalled: run.maxStalled,
      probeDelayMs: run.probeDelayMs,
      maxSweeps,
      signal,
      consequences,
      cadence,
      extras,
      // In --processes mode each sweeper is a child process with its own connection.
      ...(run.processes
        ? {
            runOnce: () =>
              raceInProcesses({
                sweepers: run.sweepers,
                setup: { url: target.url, display: target.display, ...(target.tls ? { tls: target.tls } : {}), mode: run.mode, queue: run.queue, batch: run.batch, maxStalled: run.maxStalled, probeDelayMs: run.probeDelayMs, maxSweeps, cadence, ...extras },
                signal,
              }),
          }
        : {}),
    }).finally(() => stopProgress?.());
    const serverCallMsP99 = histogramBefore ? await serverP99(admin, histogramBefore) : null;
    signal.throwIfAborted();
    const snapshot = await readSnapshot(admin, keys, run.jobs, run.stalledBefore, signal, { pending, live, workers: consequences.workers > 0 });
    const audited = auditJobs(snapshot, result.tally.totalMoves, {
      callsInDoubt: result.callsInDoubt,
      maxStalled: run.maxStalled,
      trueStalls: result.tally.trueStalls,
      crossCheck: run.mode === 'script',
      strayIds: result.strayIds,
    });
    const counts = withCycleSums(audited, result.tally, result.windows);
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
      jobsPerSec: jobsPerSec(run.jobs, result.wallMs),
      roundTrips: result.commands,
      sweeps: result.sweeps,
      cutShort: result.cutShort,
      consequences,
      noscriptFallbacks: result.noscriptFallbacks,
      samples: result.windows?.samples,
      faultCounts: result.faultCounts,
      executions: result.executions,
      trial: run.trial ?? 1,
      pending,
      live,
      maxSweeps,
      processes: run.processes ?? false,
      retries: result.retries,
      ...(run.keep && sweepFunction ? { keptLibrary: sweepFunction.library } : {}),
      callMsP50: latency?.callMsP50 ?? null,
      callMsP99: latency?.callMsP99 ?? null,
      callMsMax: latency?.callMsMax ?? null,
      serverCallMsP99,
    };
  } finally {
    for (const redis of sweeperConnections) redis.disconnect();
    // The library is not a key of the queue: it goes even when a second Ctrl-C skips the keys.
    if (sweepFunction && !run.keep) {
      const library = sweepFunction.library;
      await deleteSweepFunction(admin, sweepFunction).catch(() => {
        process.stderr.write(`emq-race: could not delete the function library ${library}: it remains on the server (FUNCTION DELETE ${library})\n`);
      });
    }
  }
}

/** The p99 of the script calls since `before`, or null where the server cannot say. */
async function serverP99(admin: Redis, before: Histograms): Promise<number | null> {
  const after = await readScriptHistogram(admin).catch(() => undefined);
  if (!after) return null;
  return p99Between(before, after) ?? null;
}

/**
 * One mode, end to end, on a queue of its own: claim, seed, race, audit, clean up. Cleanup runs on
 * every path once the claim is won, unless --keep or a second Ctrl-C says otherwise.
 */
import type { Redis } from 'ioredis';
import { withCycleSums } from '../audit/consequence-rules.js';
import { auditJobs } from '../audit/rules.js';
import { summarizeLatency } from '../sweepers/call-latency.js';
import { claimQueue } from '../queue/owner-claim.js';
import { deleteRunKeys, leftBehindHint } from '../queue/cleanup.js';
import { connect } from '../server/connection.js';
import { describeServerError, type EmqError } from '../errors.js';
import { interruption, type Interrupts } from '../interrupt.js';
import { queueKeys } from '../queue/keys.js';
import { deleteSweepFunction, loadSweepFunction, type SweepFunction } from '../sweepers/function-library.js';
import { raceInProcesses } from './process-race.js';
import { defaultMaxSweeps } from './race.js';
import { raceRounds } from './rounds.js';
import { seedLiveJobs } from '../queue/seed-live.js';
import { checkMemoryRoom } from '../server/memory-check.js';
import { newOwnerMarker, newRunId, ownerValue } from '../queue/owner-marker.js';
import { preloadScripts } from '../lua/registry.js';
import { seedJobs } from '../queue/seed.js';
import { measureServerClock, serverTimeMs, type ServerClock } from '../server/clock.js';
import type { Session } from '../server/session.js';
import { p99Between, readScriptHistogram, type Histograms } from '../server/latency-histogram.js';
import { readSnapshot } from '../audit/snapshot.js';
import { STRATEGIES } from '../sweepers/strategies.js';
import { NO_CONSEQUENCES, BACK_TO_BACK, jobsPerSec, type ModeRun, type RunResult } from '../model.js';

/**
 * A mode's run on `session`'s server: it needs only the admin connection and the target, and the
 * race's own target when its connections take another way (the latency proxy).
 */
export async function runMode(session: Pick<Session, 'admin' | 'target' | 'raceTarget'>, run: ModeRun, interrupts: Interrupts, clientNow?: () => number): Promise<RunResult> {
  const { admin, target } = session;
  const raceTarget = session.raceTarget ?? target;
  const keys = queueKeys(run.queue);
  const runId = newRunId();
  const signal = interrupts.signal;

  const live = run.live ?? 0;
  signal.throwIfAborted();
  try {
    await checkMemoryRoom(admin, run.jobs, run.sweepers, live);
    // The marker records the job count, so `emq-race clean` can delete a crashed run's keys by name.
    await claimQueue(admin, keys, ownerValue(newOwnerMarker(runId, run.jobs + live)));
  } catch (err) {
    throw describeServerError(err, target.display);
  }

  const consequences = run.consequences ?? NO_CONSEQUENCES;
  const sweeperConnections: Redis[] = [];
  const pending = run.pending ?? 'list';
  const maxSweeps = run.maxSweeps ?? defaultMaxSweeps(run.jobs, run.batch);
  let sweepFunction: SweepFunction | undefined;
  let failure: EmqError | undefined;
  try {
    if (STRATEGIES[run.mode].needs === 'functions') sweepFunction = await loadSweepFunction(admin, runId);
    const extras = {
      pending,
      ...(run.userScript !== undefined ? { userScript: run.userScript } : {}),
      ...(sweepFunction ? { functionName: sweepFunction.name } : {}),
    };
    const serverNowMs = await serverTimeMs(admin);
    await seedJobs(admin, keys, { jobs: run.jobs, stalledBefore: run.stalledBefore, serverNowMs }, signal);
    if (live > 0) await seedLiveJobs(admin, keys, { firstId: run.jobs + 1, jobs: live, stalledBefore: run.stalledBefore, serverNowMs }, signal);
    await preloadScripts(admin);
    const cadence = run.cadence ?? BACK_TO_BACK;
    if (!run.processes) {
      for (let i = 0; i < run.sweepers; i++) {
        signal.throwIfAborted();
        // Killed connections come back (the tool, not the client, decides what is sent again).
        const redis = await connect(raceTarget, { reconnect: consequences.faults.includes('client-kill') });
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
      target: raceTarget,
      admin,
      connections: sweeperConnections,
      factory: STRATEGIES[run.mode].build,
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
                setup: { url: raceTarget.url, display: raceTarget.display, ...(raceTarget.tls ? { tls: raceTarget.tls } : {}), mode: run.mode, queue: run.queue, batch: run.batch, maxStalled: run.maxStalled, probeDelayMs: run.probeDelayMs, maxSweeps, cadence, ...extras },
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
      crossCheck: STRATEGIES[run.mode].crossChecked === true,
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
  } catch (err) {
    failure = interruption(signal) ?? describeServerError(err, target.display);
    throw failure;
  } finally {
    for (const redis of sweeperConnections) redis.disconnect();
    // The library is not a key of the queue: it goes even when a second Ctrl-C skips the keys.
    if (sweepFunction && !run.keep) {
      const library = sweepFunction.library;
      await deleteSweepFunction(admin, sweepFunction).catch(() => {
        process.stderr.write(`emq-race: could not delete the function library ${library}: it remains on the server (FUNCTION DELETE ${library})\n`);
      });
    }
    if (!run.keep) await cleanUp(admin, keys, run.jobs + live, run.queue, interrupts, failure);
  }
}

/**
 * Deletes the run's keys unless a second signal says not to. What cannot be deleted (a lost
 * server, a hurried exit) is said once: appended to the run's error when there is one, so a failed
 * run still ends in one line.
 */
async function cleanUp(admin: Redis, keys: ReturnType<typeof queueKeys>, jobCount: number, queue: string, interrupts: Interrupts, failure: EmqError | undefined): Promise<void> {
  const hint = leftBehindHint(queue);
  if (!interrupts.hurried && admin.status === 'ready') {
    try {
      await deleteRunKeys(admin, keys, jobCount, interrupts.hurry);
      return;
    } catch {
      // said below
    }
  }
  if (failure && !interrupts.hurried) failure.message += `; ${hint}`;
  else process.stderr.write(`emq-race: ${hint}\n`);
}

/** The p99 of the script calls since `before`, or null where the server cannot say. */
async function serverP99(admin: Redis, before: Histograms): Promise<number | null> {
  const after = await readScriptHistogram(admin).catch(() => undefined);
  if (!after) return null;
  return p99Between(before, after) ?? null;
}

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
import { queueKeys, type QueueKeys } from '../queue/keys.js';
import { deleteSweepFunction, loadSweepFunction, type SweepFunction } from '../sweepers/function-library.js';
import { raceInProcesses } from './process-race.js';
import { defaultMaxSweeps } from './race.js';
import { raceRounds, type RoundsResult } from './rounds.js';
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
import { BACK_TO_BACK, NO_CONSEQUENCES, jobsPerSec, type AuditCounts, type Cadence, type Consequences, type ModeRun, type PendingKind, type RunResult } from '../model.js';

/** What a run settles before it starts, from its spec and defaults. */
interface Settled {
  readonly consequences: Consequences;
  readonly pending: PendingKind;
  readonly live: number;
  readonly maxSweeps: number;
  readonly cadence: Cadence;
}

/** What the race hands the judge and the result. */
type Raced = RoundsResult & { readonly serverCallMsP99: number | null };

/**
 * A mode's run on `session`'s server: it needs only the admin connection and the target. Claim,
 * then prepare (seed, load, connect), race, judge (read the server back, then the pure audit), and
 * the result; the clean-up runs on every path once the claim is won.
 */
export async function runMode(session: Pick<Session, 'admin' | 'target'>, run: ModeRun, interrupts: Interrupts, clientNow?: () => number): Promise<RunResult> {
  const { admin, target } = session;
  const keys = queueKeys(run.queue);
  const runId = newRunId();
  const signal = interrupts.signal;
  const settled = settle(run);
  signal.throwIfAborted();
  try {
    await checkMemoryRoom(admin, run.jobs, run.sweepers, settled.live);
    // The marker records the job count, so `emq-race clean` can delete a crashed run's keys by name.
    await claimQueue(admin, keys, ownerValue(newOwnerMarker(runId, run.jobs + settled.live)));
  } catch (err) {
    throw describeServerError(err, target.display);
  }

  const sweeperConnections: Redis[] = [];
  let sweepFunction: SweepFunction | undefined;
  let failure: EmqError | undefined;
  try {
    if (STRATEGIES[run.mode].needs === 'functions') sweepFunction = await loadSweepFunction(admin, runId);
    await seed(admin, keys, run, settled.live, signal);
    if (!run.processes) {
      for (let i = 0; i < run.sweepers; i++) {
        signal.throwIfAborted();
        // Killed connections come back (the tool, not the client, decides what is sent again).
        sweeperConnections.push(await connect(target, { reconnect: settled.consequences.faults.includes('client-kill') }));
      }
    }
    const raced = await raceQueue({ admin, target }, keys, run, settled, sweeperConnections, sweepFunction, signal, clientNow);
    signal.throwIfAborted();
    const counts = await judge(admin, keys, run, settled, raced, signal);
    return resultOf(run, settled, raced, counts, sweepFunction);
  } catch (err) {
    failure = interruption(signal) ?? describeServerError(err, target.display);
    throw failure;
  } finally {
    for (const redis of sweeperConnections) redis.disconnect();
    // The library is not a key of the queue: it goes even when a second Ctrl-C skips the keys.
    if (sweepFunction && !run.keep) {
      const library = sweepFunction.library;
      await deleteSweepFunction(admin, sweepFunction).catch(() => {
        run.warn?.(`could not delete the function library ${library}: it remains on the server (FUNCTION DELETE ${library})`);
      });
    }
    if (!run.keep) await cleanUp(admin, keys, run.jobs + settled.live, run.queue, interrupts, failure, run.warn);
  }
}

function settle(run: ModeRun): Settled {
  return {
    consequences: run.consequences ?? NO_CONSEQUENCES,
    pending: run.pending ?? 'list',
    live: run.live ?? 0,
    maxSweeps: run.maxSweeps ?? defaultMaxSweeps(run.jobs, run.batch),
    cadence: run.cadence ?? BACK_TO_BACK,
  };
}

/** The expired leases, the live ones after them, and the sweep script in the server's cache. */
async function seed(admin: Redis, keys: QueueKeys, run: ModeRun, live: number, signal: AbortSignal): Promise<void> {
  const serverNowMs = await serverTimeMs(admin);
  await seedJobs(admin, keys, { jobs: run.jobs, stalledBefore: run.stalledBefore, serverNowMs }, signal);
  if (live > 0) await seedLiveJobs(admin, keys, { firstId: run.jobs + 1, jobs: live, stalledBefore: run.stalledBefore, serverNowMs }, signal);
  await preloadScripts(admin);
}

/** The race itself, in this process or in one process per sweeper, with the server's own call times around it. */
async function raceQueue(
  session: Pick<Session, 'admin' | 'target'>,
  keys: QueueKeys,
  run: ModeRun,
  settled: Settled,
  connections: readonly Redis[],
  sweepFunction: SweepFunction | undefined,
  signal: AbortSignal,
  clientNow: (() => number) | undefined,
): Promise<Raced> {
  const { admin, target } = session;
  const { consequences, pending, live, maxSweeps, cadence } = settled;
  const extras = {
    pending,
    ...(run.userScript !== undefined ? { userScript: run.userScript } : {}),
    ...(sweepFunction ? { functionName: sweepFunction.name } : {}),
  };
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
    connections,
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
              setup: { url: target.url, display: target.display, ...(target.tls ? { tls: target.tls } : {}), mode: run.mode, queue: run.queue, batch: run.batch, maxStalled: run.maxStalled, probeDelayMs: run.probeDelayMs, maxSweeps, cadence, ...extras },
              signal,
            }),
        }
      : {}),
  }).finally(() => stopProgress?.());
  return { ...result, serverCallMsP99: histogramBefore ? await serverP99(admin, histogramBefore) : null };
}

/** The server's state read back, then the pure audit of it against what the sweepers recorded. */
async function judge(admin: Redis, keys: QueueKeys, run: ModeRun, settled: Settled, raced: Raced, signal: AbortSignal): Promise<AuditCounts> {
  const snapshot = await readSnapshot(admin, keys, run.jobs, run.stalledBefore, signal, { pending: settled.pending, live: settled.live, workers: settled.consequences.workers > 0 });
  const audited = auditJobs(snapshot, raced.tally.totalMoves, {
    callsInDoubt: raced.callsInDoubt,
    maxStalled: run.maxStalled,
    trueStalls: raced.tally.trueStalls,
    crossCheck: STRATEGIES[run.mode].crossChecked === true,
    strayIds: raced.strayIds,
  });
  return withCycleSums(audited, raced.tally, raced.windows);
}

/** The run's result: its spec, the audit's counts and the race's own figures. Pure. */
function resultOf(run: ModeRun, settled: Settled, raced: Raced, counts: AuditCounts, sweepFunction: SweepFunction | undefined): RunResult {
  const latency = summarizeLatency(raced.latencies);
  return {
    mode: run.mode,
    queue: run.queue,
    sweepers: run.sweepers,
    jobs: run.jobs,
    batch: run.batch,
    maxStalled: run.maxStalled,
    stalledBefore: run.stalledBefore,
    ...counts,
    wallMs: Math.round(raced.wallMs * 10) / 10,
    jobsPerSec: jobsPerSec(run.jobs, raced.wallMs),
    roundTrips: raced.commands,
    sweeps: raced.sweeps,
    cutShort: raced.cutShort,
    consequences: settled.consequences,
    noscriptFallbacks: raced.noscriptFallbacks,
    samples: raced.windows?.samples,
    faultCounts: raced.faultCounts,
    executions: raced.executions,
    trial: run.trial ?? 1,
    pending: settled.pending,
    live: settled.live,
    maxSweeps: settled.maxSweeps,
    processes: run.processes ?? false,
    retries: raced.retries,
    ...(run.keep && sweepFunction ? { keptLibrary: sweepFunction.library } : {}),
    callMsP50: latency?.callMsP50 ?? null,
    callMsP99: latency?.callMsP99 ?? null,
    callMsMax: latency?.callMsMax ?? null,
    serverCallMsP99: raced.serverCallMsP99,
  };
}

/**
 * Deletes the run's keys unless a second signal says not to. What cannot be deleted (a lost
 * server, a hurried exit) is said once: appended to the run's error when there is one, so a failed
 * run still ends in one line.
 */
async function cleanUp(admin: Redis, keys: ReturnType<typeof queueKeys>, jobCount: number, queue: string, interrupts: Interrupts, failure: EmqError | undefined, warn: ModeRun['warn']): Promise<void> {
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
  else warn?.(hint);
}

/** The p99 of the script calls since `before`, or null where the server cannot say. */
async function serverP99(admin: Redis, before: Histograms): Promise<number | null> {
  const after = await readScriptHistogram(admin).catch(() => undefined);
  if (!after) return null;
  return p99Between(before, after) ?? null;
}

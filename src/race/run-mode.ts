/**
 * One mode, end to end, on a queue of its own: claim, seed, race, audit, clean up. The claim, the
 * run's heartbeat and the cleanup are queue/claimed-run.ts's; this file is the race in between.
 */
import type { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { withCycleSums } from '../audit/consequence-rules.js';
import { pickExample } from '../audit/interleaving.js';
import { missingJobs } from '../audit/job-state.js';
import { failoverLosses, jobsOnBothSides, takesBeyondFirst } from '../audit/failover-rules.js';
import { type AuditDoubts, auditJobs, heldCounts } from '../audit/rules.js';
import { figureSources } from '../audit/sources.js';
import { summarizeLatency } from '../server/call-latency.js';
import { onClaimedQueue, overLiveConnection, type ClaimedRun } from '../queue/claimed-run.js';
import { HEARTBEAT_TTL_MS } from '../queue/owner-claim.js';
import { connect, serverGoesWithSignal } from '../server/connection.js';
import { openEach } from '../server/slices.js';
import { startFailoverPair, type FailoverPair } from '../server/failover-pair.js';
import { keptPromotedWords } from '../server/kept-server.js';
import { FAILOVER_SOURCES, FailoverDrill } from './failover-drill.js';
import { withLibraryAclHint } from '../shared/errors.js';
import { underHelper, type Interrupts } from '../shared/interrupt.js';
import { queueKeys, type QueueKeys } from '../queue/keys.js';
import type { SweepFunction } from '../lua/function-source.js';
import { deleteSweepFunction, loadSweepFunction } from '../sweepers/function-library.js';
import { raceInProcesses } from './process-race.js';
import { defaultMaxSweeps } from './race.js';
import { raceRounds, type RoundsResult } from './rounds.js';
import { seedLiveJobs } from '../queue/seed-live.js';
import { preloadScripts } from '../lua/registry.js';
import { seedJobs } from '../queue/seed.js';
import { measureServerClock, serverTimeMs, type ServerClock } from '../server/clock.js';
import type { Session } from '../server/session.js';
import { readScriptStats, scriptStatsBetween } from '../server/latency-histogram.js';
import { readSnapshot } from '../audit/snapshot.js';
import { STRATEGIES, loadSweeper } from '../sweepers/strategies.js';
import { LIBRARIES } from '../libraries/table.js';
import {
  BACK_TO_BACK,
  NO_CONSEQUENCES,
  raceTiming,
  type AuditCounts,
  type Cadence,
  type CallDoubts,
  type Consequences,
  type FailoverFigures,
  type Mode,
  type ModeRun,
  type PendingKind,
  type PhasesMs,
  type RunResult,
} from '../shared/model.js';

/** What a run settles before it starts, from its spec and defaults. */
interface Settled {
  readonly consequences: Consequences;
  readonly pending: PendingKind;
  readonly live: number;
  readonly maxSweeps: number;
  readonly cadence: Cadence;
}

/** What the race hands the judge and the result. */
type Raced = RoundsResult & { readonly serverCallMsP99: number | null; readonly serverUsPerJob: number | null; readonly drill?: FailoverDrill };

/** The session a mode's run needs: the embedded server's binary too, for --fault failover's pair. */
type RunSession = Pick<Session, 'admin' | 'target' | 'raceTarget'> & { readonly embedded?: Pick<NonNullable<Session['embedded']>, 'bin'> | undefined };

/**
 * A mode's run on `session`'s server: it needs only the admin connection and the target, and the
 * race's own target when its connections take another way (the latency proxy). Claim, then
 * prepare (seed, load, connect), race, judge (read the server back, then the pure audit), and the
 * result; the clean-up runs on every path once the claim is won.
 */
export async function runMode(session: RunSession, run: ModeRun, interrupts: Interrupts, clientNow?: () => number): Promise<RunResult> {
  const library = STRATEGIES[run.mode].library;
  // A library's mode is the library's to run, seed to audit (src/libraries/).
  if (library) {
    const runLibrary = await LIBRARIES[library].load();
    return runLibrary(session, run, interrupts).catch((err: unknown) => {
      throw withLibraryAclHint(err, library);
    });
  }
  const settled = settle(run);
  interrupts.signal.throwIfAborted();
  if (settled.consequences.failover) return onFailoverPair(session.embedded?.bin, run, settled, interrupts, clientNow);
  return claimAndRace(session, run, settled, interrupts, clientNow);
}

/**
 * --fault failover: the run on a primary and replica of its own, started for it and stopped on
 * every way out; its connections, the admin's among them, go through the pair's front proxy. With
 * --keep a run that went through its failover leaves the promoted replica running, the queue's
 * keys on it, and says where.
 *
 * With --wait-replicas the run has a companion: the same mode, jobs and schedule on a fresh pair
 * of its own, without WAIT, run just before it on odd trials and just after it on even ones (so
 * that neither side always gets the quieter machine). Its jobs/s is what WAIT's cost is read
 * against; it reports nothing else and keeps nothing.
 */
async function onFailoverPair(bin: string | undefined, run: ModeRun, settled: Settled, interrupts: Interrupts, clientNow?: () => number): Promise<RunResult> {
  const failover = settled.consequences.failover;
  if (!failover?.waitReplicas) return onePairRun(bin, run, settled, interrupts, clientNow);
  const { waitReplicas: _wait, ...withoutWait } = failover;
  const noWait: Settled = { ...settled, consequences: { ...settled.consequences, failover: withoutWait } };
  const { progress: _progress, ...quiet } = run;
  const first = (run.trial ?? 1) % 2 === 1;
  const { result, without } = await besideCompanion(
    first,
    () => onePairRun(bin, run, settled, interrupts, clientNow),
    () => onePairRun(bin, { ...quiet, keep: false }, noWait, interrupts, clientNow),
    interrupts,
  );
  if (!result.failover || !without.failover) return result;
  return {
    ...result,
    failover: {
      ...result.failover,
      withoutWait: { jobsPerSec: without.jobsPerSec, ackedMovesLost: without.failover.ackedMovesLost, order: first ? 'before' : 'after' },
    },
  };
}

/** The runs a stopped command kept that no result reports, by the error that stopped it (see besideCompanion). */
const keptByStop = new WeakMap<object, readonly RunResult[]>();

/** The runs `err` stopped after they had kept something (--keep) that no result of the command reports. */
export function keptUnreported(err: unknown): readonly RunResult[] {
  return (typeof err === 'object' && err !== null && keptByStop.get(err)) || [];
}

/**
 * A run and its companion without WAIT: the companion first on odd trials, after the run on even
 * ones. A companion stopped after the run (a signal, a failure) leaves the run unreported, yet
 * --keep may have kept its promoted replica running: the run is recorded against the error, so
 * that the command's one error line names the replica as it names what the runs before kept
 * (runPlan), and a third signal meanwhile names it too.
 */
export async function besideCompanion(
  first: boolean,
  main: () => Promise<RunResult>,
  companion: () => Promise<RunResult>,
  interrupts: Pick<Interrupts, 'owe'>,
): Promise<{ result: RunResult; without: RunResult }> {
  if (first) {
    const without = await companion();
    return { result: await main(), without };
  }
  const result = await main();
  const kept = result.failover?.keptServer;
  const settle = kept ? interrupts.owe(keptPromotedWords(result.queue, kept)) : undefined;
  try {
    return { result, without: await companion() };
  } catch (err) {
    if (kept && typeof err === 'object' && err !== null) keptByStop.set(err, [result]);
    throw err;
  } finally {
    settle?.();
  }
}

async function onePairRun(bin: string | undefined, run: ModeRun, settled: Settled, interrupts: Interrupts, clientNow?: () => number): Promise<RunResult> {
  const failover = settled.consequences.failover;
  const pair = await startFailoverPair({ bin, replicaLagMs: failover?.replicaLagMs, sentinel: failover?.sentinel, signal: interrupts.signal });
  let admin: Redis | undefined;
  try {
    // A keeper of the pair (or of its Sentinel) killed from outside stops the run with its own
    // line, as the session's server's keeper does.
    return await underHelper(pair.lost, interrupts, async (watched) => {
      admin = await connect(pair.target);
      const result = await claimAndRace({ admin, target: pair.target }, run, settled, watched, clientNow, pair);
      const kept = run.keep && result.failover ? pair.keepPromoted() : undefined;
      return kept && result.failover ? { ...result, failover: { ...result.failover, keptServer: { url: kept.url, pid: kept.pid } } } : result;
    });
  } finally {
    admin?.disconnect();
    await pair.stop();
  }
}

async function claimAndRace(
  session: Pick<Session, 'admin' | 'target' | 'raceTarget'>,
  run: ModeRun,
  settled: Settled,
  interrupts: Interrupts,
  clientNow: (() => number) | undefined,
  pair?: FailoverPair,
): Promise<RunResult> {
  const { admin, target } = session;
  const keys = queueKeys(run.queue);
  // The marker records the job count, so `emq-race clean` can delete a crashed run's keys by name.
  const claim = {
    admin,
    target,
    keys,
    jobs: run.jobs + settled.live,
    keep: run.keep,
    ...(run.warn ? { warn: run.warn } : {}),
    ...(STRATEGIES[run.mode].needs === 'script-file' ? { userScript: true } : {}),
  };
  // The clean-up runs in onClaimedQueue once the work has returned, and the run returns only after
  // it: its time is the time from the work's end to here, known before any report is made.
  const started = performance.now();
  let workEnded = started;
  const result = await onClaimedQueue(claim, interrupts, async (claimed) => {
    const claimMs = performance.now() - started;
    const raced = await raceOnQueue(session, keys, run, settled, claimed, clientNow, interrupts, pair, claimMs);
    workEnded = performance.now();
    return raced;
  });
  const phases = result.phasesMs;
  return phases ? { ...result, phasesMs: { ...phases, clean: tenths(performance.now() - workEnded) } } : result;
}

/** Milliseconds to a tenth. Pure. */
const tenths = (ms: number): number => Math.round(ms * 10) / 10;

/** Missing job hashes named to the vanished-keys check at most: a few prove the point, all would cost a pipeline per job. */
const MISSING_CHECKED = 1000;

/** Prepare (seed, load, connect), race, judge and the result, on a queue the run owns; `signal` stops it. */
async function raceOnQueue(
  session: Pick<Session, 'admin' | 'target' | 'raceTarget'>,
  keys: QueueKeys,
  run: ModeRun,
  settled: Settled,
  claimed: ClaimedRun,
  clientNow: (() => number) | undefined,
  interrupts: Pick<Interrupts, 'owe' | 'signal'>,
  pair: FailoverPair | undefined,
  claimMs: number,
): Promise<RunResult> {
  const { admin } = session;
  const { runId, signal } = claimed;
  // The race's own connections take raceTarget (the latency proxy with --latency); seeding and the audit go direct.
  const raceTarget = session.raceTarget ?? session.target;
  const sweeperConnections: Redis[] = [];
  const dropSweepers = (): void => {
    for (const redis of sweeperConnections) redis.disconnect();
  };
  // The sweepers' calls in flight are dropped and the function library is not deleted when the
  // server goes with a signal.
  const serverGoesNow = (): boolean => serverGoesWithSignal(session.target, interrupts.signal);
  const dropOnSignal = (): void => {
    if (serverGoesNow()) dropSweepers();
  };
  let sweepFunction: SweepFunction | undefined;
  let settleLibrary: (() => void) | undefined;
  try {
    if (STRATEGIES[run.mode].needs === 'functions') {
      sweepFunction = await loadSweepFunction(admin, runId);
      // A third signal leaves at once: it names the library it leaves behind.
      const library = sweepFunction.library;
      if (!run.keep) settleLibrary = interrupts.owe(`the function library ${library} may remain on the server: remove it with FUNCTION DELETE ${library}`);
    }
    const seedStarted = performance.now();
    await seed(admin, keys, run, settled.live, runId, signal);
    // The drill's first calls are measured against a replica that receives them (their WAITs).
    await pair?.caughtUp(signal);
    const raceStarted = performance.now();
    if (!run.processes) {
      // Killed connections come back (the tool, not the client, decides what is sent again).
      const reconnect = settled.consequences.faults.includes('client-kill');
      await openEach(run.sweepers, () => connect(raceTarget, { reconnect }), signal, sweeperConnections);
    }
    signal.addEventListener('abort', dropOnSignal, { once: true });
    // Seeding went through admin, direct; the race's own connections take raceTarget.
    const failover = settled.consequences.failover;
    // The run's heartbeat refreshes written after the cut died with the old primary: the one the
    // new primary holds is lengthened as it is promoted, so the run's own bookkeeping does not
    // read the failover as its keys vanishing.
    const steps = pair && {
      cut: (s: AbortSignal) => pair.cut(s),
      failover: (s: AbortSignal, promoted: () => void) =>
        pair.failover(s, async (primary) => {
          await primary.pexpire(keys.heartbeat, HEARTBEAT_TTL_MS);
          promoted();
        }),
    };
    const drill = failover && steps ? new FailoverDrill(failover, steps, run.jobs + settled.live, signal) : undefined;
    const raced = await raceQueue({ admin, target: raceTarget }, keys, run, settled, sweeperConnections, sweepFunction, signal, clientNow, drill);
    signal.throwIfAborted();
    // The audit reads only a queue still there as the run wrote it: the marker, the heartbeat,
    // and the first and last job's hash (every job keeps its hash all run long).
    const auditStarted = performance.now();
    await claimed.confirmKeys(['1', String(run.jobs + settled.live)]);
    const [counts, failoverFigures] = await judge(admin, keys, run, settled, raced, signal, claimed, pair?.promotedBy ?? 'tool');
    const phasesMs: PhasesMs = {
      claim: tenths(claimMs),
      seed: tenths(raceStarted - seedStarted),
      race: tenths(auditStarted - raceStarted),
      audit: tenths(performance.now() - auditStarted),
      clean: 0,
    };
    return { ...resultOf(run, settled, raced, counts, sweepFunction), ...(failoverFigures ? { failover: failoverFigures } : {}), phasesMs };
  } finally {
    signal.removeEventListener('abort', dropOnSignal);
    dropSweepers();
    // The library is not a key of the queue: it goes on every way out but a third signal.
    if (sweepFunction && !run.keep && !serverGoesNow()) {
      const loaded = sweepFunction;
      const library = loaded.library;
      // Over a fresh connection when the admin's closed under the run, as the queue's keys are.
      await overLiveConnection(admin, session.target, (redis) => deleteSweepFunction(redis, loaded)).catch(() => {
        run.warn?.(`could not delete the function library ${library}: it remains on the server (FUNCTION DELETE ${library})`);
      });
    }
    settleLibrary?.();
  }
}

function settle(run: ModeRun): Settled {
  const consequences = run.consequences ?? NO_CONSEQUENCES;
  return {
    consequences,
    pending: run.pending ?? 'list',
    live: run.live ?? 0,
    maxSweeps: run.maxSweeps ?? defaultMaxSweeps(run.jobs, run.batch, consequences.cycles),
    cadence: run.cadence ?? BACK_TO_BACK,
  };
}

/** The expired leases, the live ones after them (every hash carrying `runId`), and the sweep script in the server's cache. */
async function seed(admin: Redis, keys: QueueKeys, run: ModeRun, live: number, runId: string, signal: AbortSignal): Promise<void> {
  const serverNowMs = await serverTimeMs(admin);
  // A large queue takes seconds to seed: the progress line shows it batch by batch.
  const seeding = run.progress?.seeding(run.mode, run.queue, run.jobs + live);
  try {
    await seedJobs(admin, keys, { jobs: run.jobs, runId, stalledBefore: run.stalledBefore, serverNowMs }, signal, seeding?.seeded);
    if (live > 0)
      await seedLiveJobs(admin, keys, { firstId: run.jobs + 1, jobs: live, runId, stalledBefore: run.stalledBefore, serverNowMs }, signal, seeding?.seeded);
  } finally {
    seeding?.stop();
  }
  await preloadScripts(admin);
}

/**
 * The race itself, in this process or in one process per sweeper, with the server's own call times
 * around it. `target` is where the race's connections go (the latency proxy with --latency).
 */
async function raceQueue(
  session: Pick<Session, 'admin' | 'target'>,
  keys: QueueKeys,
  run: ModeRun,
  settled: Settled,
  connections: readonly Redis[],
  sweepFunction: SweepFunction | undefined,
  signal: AbortSignal,
  clientNow: (() => number) | undefined,
  drill: FailoverDrill | undefined,
): Promise<Raced> {
  const { admin, target } = session;
  const { consequences, pending, live, maxSweeps, cadence } = settled;
  const extras = {
    pending,
    ...(run.userScript !== undefined ? { userScript: run.userScript } : {}),
    ...(sweepFunction ? { functionName: sweepFunction.name } : {}),
  };
  const clock: ServerClock = await measureServerClock(admin, clientNow);
  // The server's script counters, and which server process answered them, on either side of the race.
  const statsBefore = await readScriptStats(admin, run.serverStats);
  // What the race waits on, where the progress line's count cannot move: a drill's step, or the
  // workers still running the jobs once the sweeps are done.
  let workersStage: (() => string | undefined) | undefined;
  const stage = drill || consequences.workers > 0 ? () => drill?.stage ?? workersStage?.() : undefined;
  const stopProgress = run.progress?.watch(admin, keys.active, run.mode, run.queue, run.jobs, live, stage);
  const result = await raceRounds({
    target,
    admin,
    connections,
    factory: await loadSweeper(run.mode),
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
    ...(drill ? { drill } : {}),
    ...(run.seed !== undefined ? { seed: run.seed } : {}),
    onWorkers: (reader) => {
      workersStage = reader;
    },
    // In --processes mode each sweeper is a child process with its own connection.
    ...(run.processes
      ? {
          runOnce: () =>
            raceInProcesses({
              sweepers: run.sweepers,
              setup: {
                url: target.url,
                display: target.display,
                ...(target.tls ? { tls: target.tls } : {}),
                mode: run.mode,
                queue: run.queue,
                batch: run.batch,
                maxStalled: run.maxStalled,
                probeDelayMs: run.probeDelayMs,
                maxSweeps,
                cadence,
                ...extras,
              },
              signal,
            }),
        }
      : {}),
  }).finally(() => stopProgress?.());
  const statsAfter = await readScriptStats(admin, statsBefore.histograms ? 'if-available' : undefined);
  return { ...result, ...scriptStatsBetween(statsBefore, statsAfter, run.jobs), ...(drill ? { drill } : {}) };
}

/** The server's state read back, then the pure audit of it against what the sweepers recorded. */
async function judge(
  admin: Redis,
  keys: QueueKeys,
  run: ModeRun,
  settled: Settled,
  raced: Raced,
  signal: AbortSignal,
  claimed: Pick<ClaimedRun, 'runId' | 'confirmKeys'>,
  promotedBy: FailoverFigures['promotedBy'],
): Promise<[AuditCounts, FailoverFigures | undefined]> {
  // No built-in strategy deletes a job hash, so one without the run id the seed wrote into it (gone,
  // or gone and re-created by a sweep's write) is another client's doing, a DEL in the middle of
  // the queue: confirmed, it ends the run as vanished keys, never as lost jobs blamed on the
  // strategy. A user's --script may delete hashes itself: there a missing hash is a finding about
  // the script, read as the audit always read it.
  const ownHashes = STRATEGIES[run.mode].needs !== 'script-file';
  const snapshot = await readSnapshot(admin, keys, run.jobs, run.stalledBefore, signal, {
    pending: settled.pending,
    live: settled.live,
    workers: settled.consequences.workers > 0,
    ...(ownHashes ? { runId: claimed.runId } : {}),
  });
  if (ownHashes) {
    const missing = missingJobs(snapshot.state, MISSING_CHECKED);
    // The rest, past those checked again, are counted in the line as the audit found them.
    await claimed.confirmKeys(missing.ids, missing.count - missing.ids.length);
  }
  const audited = auditJobs(snapshot, raced.tally.totalMoves, {
    ...(raced.doubts ? { doubts: auditDoubts(raced.doubts, run.mode, run.batch, raced.tally.totalMoves.length) } : {}),
    maxStalled: run.maxStalled,
    // Only re-leases make a job stall more than once: without them the true count is not measured.
    ...(settled.consequences.cycles > 1 ? { trueStalls: raced.tally.trueStalls } : {}),
    crossCheck: STRATEGIES[run.mode].crossChecked === true,
    strayIds: raced.strayIds,
    movesLeaveEntries: settled.pending === 'list' && settled.consequences.workers === 0 && settled.consequences.cycles === 1 && !settled.consequences.failover,
    // Across a failover the workers' own record of their takes counts the double executions (figureSources says so).
    ...(settled.consequences.failover ? { takesBeyondFirst: raced.workerTakes ? takesBeyondFirst(raced.workerTakes) : null } : {}),
  });
  return [
    withCycleSums(audited, raced.tally, settled.consequences.cycles, raced.windows),
    raced.drill ? failoverFigures(run, raced.drill, snapshot, promotedBy, raced.workerTakes) : undefined,
  ];
}

/** The drill's own counts beside the new primary's counters set against the sweepers' records. */
function failoverFigures(
  run: ModeRun,
  drill: FailoverDrill,
  snapshot: Parameters<typeof failoverLosses>[0],
  promotedBy: FailoverFigures['promotedBy'],
  workerTakes: RoundsResult['workerTakes'],
): FailoverFigures {
  const counts = drill.counts;
  const losses = failoverLosses(snapshot, drill.tally);
  const wait = drill.settings.waitReplicas;
  return {
    after: drill.settings.after,
    calls: drill.settings.calls,
    ackedMovesLost: losses.ackedMovesLost,
    // A one-call sweep moves what it returns, all or nothing: its loss is known before the audit.
    predictedLoss: STRATEGIES[run.mode].roundTrips ? null : counts.predictedLoss,
    jobsRecoveredTwice: losses.jobsRecoveredTwice,
    counterIncrementsLost: losses.counterIncrementsLost,
    jobsRunTwice: workerTakes ? jobsOnBothSides(workerTakes) : null,
    callsBeforeCut: counts.callsBeforeCut,
    callsAfterCut: counts.callsAfterCut,
    unconfirmedMoves: counts.unconfirmedMoves,
    waitTimeouts: counts.waitTimeouts,
    waitReplies: counts.waitReplies,
    waitReplicas: wait ? { replicas: wait.replicas, timeoutMs: wait.timeoutMs } : null,
    replicaLagMs: drill.settings.replicaLagMs ?? 0,
    keptServer: null,
    withoutWait: null,
    promotedBy,
    sources: FAILOVER_SOURCES,
  };
}

/** The run's result: its spec, the audit's counts and the race's own figures. Pure. */
function resultOf(run: ModeRun, settled: Settled, raced: Raced, counts: AuditCounts, sweepFunction: SweepFunction | undefined): RunResult {
  const latency = summarizeLatency(raced.latencies);
  const { workers } = settled.consequences;
  const example = raced.sample
    ? pickExample(raced.sample.jobs(), {
        keys: queueKeys(run.queue),
        stalledBefore: run.stalledBefore,
        pendingOnlyGrows: workers === 0 && !raced.sample.pendingShrank,
        othersTakeFromPending: workers > 0,
        activeOnlyShrinks: true,
        serial: run.seed !== undefined,
      })
    : null;
  return {
    mode: run.mode,
    queue: run.queue,
    sweepers: run.sweepers,
    jobs: run.jobs,
    batch: run.batch,
    maxStalled: run.maxStalled,
    stalledBefore: run.stalledBefore,
    ...counts,
    ...raceTiming({ jobs: run.jobs, unreclaimed: counts.unreclaimed, cutShort: raced.cutShort }, raced.wallMs),
    roundTrips: raced.commands,
    sweeps: raced.sweeps,
    cutShort: raced.cutShort,
    consequences: settled.consequences,
    noscriptFallbacks: raced.noscriptFallbacks,
    workerNoscriptFallbacks: raced.workerNoscriptFallbacks,
    releaserNoscriptFallbacks: raced.releaserNoscriptFallbacks,
    observerNoscriptFallbacks: raced.observerNoscriptFallbacks,
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
    // The server's histogram counts every script call, the run's own heartbeat among them: a mode
    // whose sweepers call no script (the loop's round trips) has no script latency of its own to
    // report. Read from the server, so with sweeper processes too, whose calls the tool does not time.
    serverCallMsP99: STRATEGIES[run.mode].roundTrips ? null : raced.serverCallMsP99,
    serverUsPerJob: STRATEGIES[run.mode].roundTrips ? null : raced.serverUsPerJob,
    sources: figureSources(counts, settled.consequences.cycles, settled.consequences.failover !== undefined),
    example,
  };
}

/**
 * The calls a fault left in doubt, as the audit reads them for this mode: a round-trip mode's held
 * jobs, or a one-call mode's unanswered calls, each of up to `batch` jobs; and whether the mode's
 * moves are the tool's own, whose traces on the server the audit may trust (a user's --script's
 * are not).
 */
function auditDoubts(doubts: CallDoubts, mode: Mode, batch: number, size: number): AuditDoubts {
  const oneCall = !STRATEGIES[mode].roundTrips;
  return {
    held: heldCounts(doubts.held, size),
    blindMoves: oneCall ? doubts.blindCalls * batch : 0,
    oneCall,
    trusted: STRATEGIES[mode].needs !== 'script-file',
  };
}

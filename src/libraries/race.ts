/**
 * What every library's run shares: its callers released at once from one barrier, each checking
 * until a check moves nothing, their records of what they moved, and the run's result made of the
 * audit's counts and the race's own figures.
 */
import { defaultMaxListeners, setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { figureSources } from '../audit/sources.js';
import { heldServerError, isBusyReply } from '../shared/errors.js';
import { NO_CONSEQUENCES, raceTiming, type AuditCounts, type ModeRun, type RunResult } from '../shared/model.js';
import { summarizeLatency, LatencyLog, type CallLatency } from '../server/call-latency.js';

/**
 * How long each call of a library's own recovery took as the client saw it, from sending to the
 * reply (waiting behind other callers' calls on the server's one thread included): for the modes
 * whose check is one call of it (a script), as the tool's one-call strategies report theirs.
 */
export class CallTimes {
  readonly log = new LatencyLog();

  async time<T>(call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await call();
    } finally {
      this.log.add(performance.now() - started);
    }
  }
}

/** One caller: a check resolves to the job ids it moved, in order. */
export interface Caller {
  /** `stopped` aborts once the run is stopped or another caller failed: a caller waiting between its calls waits on it. */
  check(stopped: AbortSignal): Promise<string[]>;
  /** Round trips it has made: one per command sent alone and one per MULTI or pipeline, whether a library's own recovery sent them (a script call; node-resque's cleanOldWorkers, counted on its client) or a port. */
  readonly commands: number;
  /** The caller stopped at a bound of its own (a library whose caller retries within one check). */
  readonly cutShort?: boolean;
  /** Its calls' times, for a caller whose every call is one call of the library's own recovery. */
  readonly callTimes?: CallTimes;
}

export interface Raced {
  readonly wallMs: number;
  /** Moves per job id, from the callers' own records. */
  readonly moves: Uint32Array;
  readonly commands: number;
  readonly checks: number;
  readonly cutShort: boolean;
  /** p50, p99 and max of the timed calls; undefined when no caller is timed. */
  readonly latency: CallLatency | undefined;
}

/**
 * Every caller released at once from one barrier, each checking until a check moves nothing; one
 * failing stops the rest, and its error is the run's. `ownScript` names, in words, the library's
 * own script when each caller's check is a call of it (`Bee-Queue's own checkStalledJobs script`):
 * a BUSY reply is then that script holding the server, which the error says.
 */
export async function raceCallers(callers: readonly Caller[], jobs: number, signal: AbortSignal, maxChecks: number, ownScript?: string): Promise<Raced> {
  const stop = new AbortController();
  const stopped = AbortSignal.any([signal, stop.signal]);
  // Each caller waits on it at most once at a time (a timer between two calls): a listener each, no leak.
  setMaxListeners(Math.max(defaultMaxListeners, callers.length), stopped);
  const moves = new Uint32Array(jobs + 1);
  let checks = 0;
  let cutShort = false;
  // The first caller to fail, in time: every later failure is a caller that failure stopped.
  let cause: { readonly error: unknown } | undefined;
  let release!: () => void;
  const barrier = new Promise<void>((resolve) => (release = resolve));
  const runs = callers.map(async (caller) => {
    await barrier;
    try {
      for (let made = 0; ; made++) {
        if (made === maxChecks) {
          cutShort = true;
          return;
        }
        stopped.throwIfAborted();
        const moved = await caller.check(stopped);
        checks++;
        for (const id of moved) {
          const n = Number(id);
          if (Number.isInteger(n) && n >= 1 && n <= jobs) moves[n] = (moves[n] ?? 0) + 1;
        }
        if (moved.length === 0) return;
      }
    } catch (err) {
      cause ??= { error: err };
      stop.abort();
      throw err;
    }
  });
  const started = performance.now();
  release();
  await Promise.allSettled(runs);
  const wallMs = performance.now() - started;
  // The run's own signal may have stopped the callers first: the heartbeat, refused with BUSY
  // while a caller's script held the server, is that script's doing too, and said as such.
  if (cause) throw raceFailure(signal.aborted ? signal.reason : cause.error, ownScript);
  return {
    wallMs,
    moves,
    commands: callers.reduce((sum, c) => sum + c.commands, 0),
    checks,
    cutShort: cutShort || callers.some((c) => c.cutShort),
    latency: summarizeLatency(callers.flatMap((c) => (c.callTimes ? [c.callTimes.log] : []))),
  };
}

/**
 * The error a failed race ends with: the first caller's own, or what stopped the run. A BUSY reply
 * while the callers run the library's own script (to another caller, or to the run's heartbeat) is
 * that script holding the server past its busy-reply-threshold: said in words, as what it is, a
 * finding. Pure.
 */
export function raceFailure(error: unknown, ownScript: string | undefined): unknown {
  if (ownScript === undefined || !isBusyReply(error)) return error;
  return heldServerError(
    ownScript,
    ". That is a finding in itself: on this many jobs one call of the library's own recovery blocks every client of the server longer than the server lets a script run; race fewer --jobs to compare the modes",
  );
}

/** The run's result: its spec, the audit's counts, the race's own figures and what a fault added (`fault`). Pure. */
export function libraryResult(
  run: ModeRun,
  raced: Raced,
  counts: AuditCounts,
  maxChecks: number,
  fault?: Pick<RunResult, 'consequences' | 'faultCounts' | 'lapsedLock'>,
): RunResult {
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
    ...raceTiming({ jobs: run.jobs, unreclaimed: counts.unreclaimed, cutShort: raced.cutShort }, raced.wallMs),
    roundTrips: raced.commands,
    sweeps: raced.checks,
    cutShort: raced.cutShort,
    consequences: NO_CONSEQUENCES,
    noscriptFallbacks: 0,
    workerNoscriptFallbacks: undefined,
    releaserNoscriptFallbacks: undefined,
    observerNoscriptFallbacks: undefined,
    samples: undefined,
    faultCounts: undefined,
    executions: undefined,
    trial: run.trial ?? 1,
    pending: 'list',
    live: 0,
    maxSweeps: maxChecks,
    processes: false,
    retries: 0,
    callMsP50: raced.latency?.callMsP50 ?? null,
    callMsP99: raced.latency?.callMsP99 ?? null,
    callMsMax: raced.latency?.callMsMax ?? null,
    serverCallMsP99: null,
    sources: figureSources(counts, 1),
    example: null,
    ...(found ? { library: { name: found.name, version: found.version } } : {}),
    ...fault,
  };
}

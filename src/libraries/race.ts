/**
 * What every library's run shares: its callers released at once from one barrier, each checking
 * until a check moves nothing, their records of what they moved, and the run's result made of the
 * audit's counts and the race's own figures.
 */
import { performance } from 'node:perf_hooks';
import { figureSources } from '../audit/sources.js';
import { NO_CONSEQUENCES, jobsPerSec, type AuditCounts, type ModeRun, type RunResult } from '../model.js';
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
  check(): Promise<string[]>;
  /** Calls it has made: one per call of the library's own recovery (a script, or node-resque's cleanOldWorkers and its many commands), one per command or MULTI for a port. */
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

/** Every caller released at once from one barrier, each checking until a check moves nothing; one failing stops the rest. */
export async function raceCallers(callers: readonly Caller[], jobs: number, signal: AbortSignal, maxChecks: number): Promise<Raced> {
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
        if (made === maxChecks) {
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
  return {
    wallMs,
    moves,
    commands: callers.reduce((sum, c) => sum + c.commands, 0),
    checks,
    cutShort: cutShort || callers.some((c) => c.cutShort),
    latency: summarizeLatency(callers.flatMap((c) => (c.callTimes ? [c.callTimes.log] : []))),
  };
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

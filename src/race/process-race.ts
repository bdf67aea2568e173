/**
 * The race with every sweeper in a Node process of its own (--processes), as separate deployments
 * would run them: each child connects and prepares, the barrier releases them all with one message
 * each, and each sends its record back. Same records, same audit, as the one-process race.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { EmqError, serverError, type ExitCode } from '../shared/errors.js';
import { childEnvironment } from '../shared/secrets.js';
import { awakeTimeout } from '../server/frozen.js';
import { MoveLog } from '../sweepers/move-log.js';
import type { RaceResult } from './race.js';
import { DESTINATION_CODES, type FromWorker, type WorkerDone, type WorkerSetup } from './process-protocol.js';

const WORKER = fileURLToPath(new URL('./sweeper-process.js', import.meta.url));

/**
 * How long a sweeper process may say nothing once it has spoken (it says `alive` every
 * ALIVE_EVERY_MS, process-protocol.ts) before it counts as stopped: SIGSTOP, a debugger, an event
 * loop stuck. The same as a silent server's one wait (connection.ts), so a run with a helper gone
 * quiet ends within the bound a dead helper's does.
 */
const SILENT_MS = 10_000;

/**
 * Before its first word, a child is still starting Node and loading the tool's modules, which on a
 * small machine starting many of them at once takes long (64 children on 2 cores: half a minute):
 * it is given this much more per sweeper of the race.
 */
const START_MS_PER_SWEEPER = 2_000;

/** How long a child has to end after SIGTERM (and SIGCONT) before SIGKILL. */
const STOP_GRACE_MS = 3_000;

export interface ProcessRaceSetup {
  readonly sweepers: number;
  /** What every child is told, the same for all. */
  readonly setup: Omit<WorkerSetup, 'type'>;
  readonly signal: AbortSignal;
}

interface Child {
  readonly process: ChildProcess;
  /** Resolves once the process has exited, however. */
  readonly exited: Promise<void>;
  /** Resolves on the next message of the given type; rejects if the child fails or exits first. */
  next<T extends FromWorker['type']>(type: T): Promise<Extract<FromWorker, { type: T }>>;
  /** When its `swept` came (performance.now()): its last sweep answered, before its record is sent. */
  sweptAt(): number | undefined;
}

const running = (child: ChildProcess): boolean => child.pid !== undefined && child.exitCode === null && child.signalCode === null;

/** How long a child's channel may be read after its exit before the exit stands for its end. */
const CLOSE_GRACE_MS = 2_000;

/** `startMs`: how long it may take to say its first word (see START_MS_PER_SWEEPER). */
function spawnChild(startMs: number): Child {
  const child = fork(WORKER, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: childEnvironment() });
  const inbox: FromWorker[] = [];
  const waiters: (() => void)[] = [];
  // The first reason the child failed is the one told: a child the tool stops after it fell
  // silent then exits, which says less.
  let ended: Error | undefined;
  const wake = (): void => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  let silence: NodeJS.Timeout | undefined;
  const listen = (ms: number): void => {
    clearTimeout(silence);
    // Judged on time the tool was awake (frozen.ts): a tool stopped with its children (Ctrl-Z
    // stops the whole group) does not blame them for its own pause once resumed.
    awakeTimeout(
      ms,
      () => {
        ended ??= serverError(
          `a sweeper process (pid ${String(child.pid)}) sent nothing for ${ms / 1000} s: is it paused (SIGSTOP) or stuck? The race cannot be judged without its record`,
        );
        wake();
      },
      (timer) => (silence = timer),
    );
  };
  listen(startMs);
  let sweptAt: number | undefined;
  child.on('message', (message: FromWorker) => {
    listen(SILENT_MS);
    if (message.type === 'alive') return;
    // Stamped as it comes, whenever the race asks: the end of this sweeper's part of the race.
    if (message.type === 'swept') {
      sweptAt = performance.now();
      return;
    }
    inbox.push(message);
    wake();
  });
  // 'close', not 'exit': a child that sent its record and ended at once may be seen to exit before
  // its last messages are read off the channel (with 64 children on 2 cores, a few runs in three);
  // 'close' comes once the channel is read to its end, so an exit after `done` is no early end.
  // Should the channel outlive the child (a process it started holding it), its exit, with
  // CLOSE_GRACE_MS for the channel to be read, stands for the close: a run stopping its children
  // must not wait on it.
  const exited = new Promise<void>((resolve) => {
    let settled = false;
    const settle = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(silence);
      // The tool's end of a channel a process of the child's still holds: left open, it would keep
      // the tool's own process alive, the run over, until that process let go.
      if (child.connected) child.disconnect();
      // Its record is lost with it: the race cannot be judged, and ends like any run whose tools failed.
      ended ??= serverError(
        `a sweeper process ended early (${signal ? `killed by ${signal}` : `exit code ${String(code)}`}): the race cannot be judged without its record`,
      );
      wake();
      resolve();
    };
    child.on('close', settle);
    child.on('exit', (code, signal) => {
      clearTimeout(silence);
      setTimeout(() => settle(code, signal), CLOSE_GRACE_MS).unref();
    });
  });
  child.on('error', (err: NodeJS.ErrnoException) => {
    // A message sent to a child that has just died fails (EPIPE, a closed channel) before its exit
    // is seen: the exit, which follows, says what happened, not the broken pipe.
    if (err.code === 'EPIPE' || err.code === 'ERR_IPC_CHANNEL_CLOSED' || err.code === 'ECONNRESET') return;
    ended ??= err;
    wake();
  });
  return {
    process: child,
    exited,
    sweptAt: () => sweptAt,
    async next(type) {
      for (;;) {
        const at = inbox.findIndex((m) => m.type === type || m.type === 'failed');
        if (at >= 0) {
          const [message] = inbox.splice(at, 1);
          if (message?.type === 'failed') throw new EmqError(message.message, message.exitCode as ExitCode);
          return message as never;
        }
        if (ended) throw ended;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

function recordOf(done: WorkerDone): MoveLog {
  const record = new MoveLog();
  done.ids.forEach((id, i) => record.add(id, DESTINATION_CODES[done.destinations[i] ?? 0] ?? 'unknown'));
  return record;
}

/**
 * Ends every child still running, and resolves once they have all exited. SIGTERM, then SIGCONT: a
 * stopped child (SIGSTOP, Ctrl-Z on it alone) holds a SIGTERM unhandled until it runs again, and
 * resumed after it, it ends at once rather than sweeping on. One that has not ended after
 * STOP_GRACE_MS awake (stopped again, stuck) is killed: the run's clean-up must not race a sweeper
 * still writing, nor wait on one for ever.
 */
function stopChildren(children: readonly Child[]): Promise<void> {
  const live = children.filter((child) => running(child.process));
  if (live.length === 0) return Promise.resolve();
  for (const child of live) {
    child.process.kill('SIGTERM');
    child.process.kill('SIGCONT');
  }
  let grace: NodeJS.Timeout | undefined;
  awakeTimeout(
    STOP_GRACE_MS,
    () => {
      for (const child of live) if (running(child.process)) child.process.kill('SIGKILL');
    },
    (timer) => (grace = timer),
  );
  return Promise.all(live.map((child) => child.exited)).then(() => clearTimeout(grace));
}

export async function raceInProcesses(race: ProcessRaceSetup): Promise<RaceResult> {
  const children: Child[] = [];
  // Once: every child is spawned before anything can call it (the spawning loop runs at one go).
  let stopping: Promise<void> | undefined;
  const stopAll = (): Promise<void> => (stopping ??= stopChildren(children));
  const onAbort = (): void => void stopAll();
  race.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const startMs = SILENT_MS + START_MS_PER_SWEEPER * race.sweepers;
    for (let i = 0; i < race.sweepers; i++) {
      race.signal.throwIfAborted();
      const child = spawnChild(startMs);
      children.push(child);
      child.process.send({ type: 'setup', ...race.setup });
    }
    await Promise.all(children.map((child) => child.next('ready')));
    race.signal.throwIfAborted();

    const started = performance.now();
    for (const child of children) child.process.send({ type: 'go' });
    let firstFailure: { reason: unknown } | undefined;
    const finished = children.map(async (child) => {
      try {
        return await child.next('done');
      } catch (err) {
        // One failing sweeper stops the others, as in the one-process race; its reason is the one told.
        firstFailure ??= { reason: err };
        void stopAll();
        throw err;
      }
    });
    const settled = await Promise.allSettled(finished);
    // To the last sweeper's last answer, as in one process: not the time the records then take
    // to cross from the children (a move each), which the race did not spend.
    const ended = performance.now();
    const wallMs = Math.max(...children.map((child) => child.sweptAt() ?? ended)) - started;
    race.signal.throwIfAborted();
    if (firstFailure) throw firstFailure.reason;
    const done = settled.map((s) => (s as PromiseFulfilledResult<WorkerDone>).value);
    return {
      wallMs,
      records: done.map(recordOf),
      commands: done.reduce((sum, d) => sum + d.commands, 0),
      sweeps: done.reduce((sum, d) => sum + d.sweeps, 0),
      cutShort: done.some((d) => d.cutShort),
      retries: done.reduce((sum, d) => sum + d.retries, 0),
      strayIds: done.reduce((sum, d) => sum + d.strayIds, 0),
      noscriptFallbacks: done.reduce((sum, d) => sum + d.noscriptFallbacks, 0),
      // Each child times its own script calls, but the times are not sent back (a number per
      // call, where the rest of the record is per move): callMs* are null for a run with --processes.
      latencies: [],
    };
  } finally {
    race.signal.removeEventListener('abort', onAbort);
    // The clean-up that follows must find no sweeper still writing.
    await stopAll();
  }
}

/**
 * The race with every sweeper in a Node process of its own (--processes), as separate deployments
 * would run them: each child connects and prepares, the barrier releases them all with one message
 * each, and each sends its record back. Same records, same audit, as the one-process race.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { EmqError, serverError, type ExitCode } from '../errors.js';
import { MoveLog } from '../sweepers/move-log.js';
import type { RaceResult } from './race.js';
import { DESTINATION_CODES, type FromWorker, type WorkerDone, type WorkerSetup } from './process-protocol.js';

const WORKER = fileURLToPath(new URL('./sweeper-process.js', import.meta.url));

export interface ProcessRaceSetup {
  readonly sweepers: number;
  /** What every child is told, the same for all. */
  readonly setup: Omit<WorkerSetup, 'type'>;
  readonly signal: AbortSignal;
}

interface Child {
  readonly process: ChildProcess;
  /** Resolves on the next message of the given type; rejects if the child fails or exits first. */
  next<T extends FromWorker['type']>(type: T): Promise<Extract<FromWorker, { type: T }>>;
}

function spawnChild(): Child {
  const child = fork(WORKER, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const inbox: FromWorker[] = [];
  const waiters: (() => void)[] = [];
  let ended: Error | undefined;
  const wake = (): void => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  child.on('message', (message: FromWorker) => {
    inbox.push(message);
    wake();
  });
  child.on('exit', (code, signal) => {
    // Its record is lost with it: the race cannot be judged, and ends like any run whose tools failed.
    ended = serverError(
      `a sweeper process ended early (${signal ? `killed by ${signal}` : `exit code ${String(code)}`}): the race cannot be judged without its record`,
    );
    wake();
  });
  child.on('error', (err: NodeJS.ErrnoException) => {
    // A message sent to a child that has just died fails (EPIPE, a closed channel) before its exit
    // is seen: the exit, which follows, says what happened, not the broken pipe.
    if (err.code === 'EPIPE' || err.code === 'ERR_IPC_CHANNEL_CLOSED' || err.code === 'ECONNRESET') return;
    ended = err;
    wake();
  });
  return {
    process: child,
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

export async function raceInProcesses(race: ProcessRaceSetup): Promise<RaceResult> {
  const children: Child[] = [];
  const stopAll = (): void => {
    for (const child of children) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGTERM');
  };
  race.signal.addEventListener('abort', stopAll, { once: true });
  try {
    for (let i = 0; i < race.sweepers; i++) {
      race.signal.throwIfAborted();
      const child = spawnChild();
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
        stopAll();
        throw err;
      }
    });
    const settled = await Promise.allSettled(finished);
    const wallMs = performance.now() - started;
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
      // Each child counts its own script calls; their NOSCRIPT fallbacks and call times are not
      // reported back, so callMs* are null for a run with --processes.
      noscriptFallbacks: 0,
      latencies: [],
    };
  } finally {
    race.signal.removeEventListener('abort', stopAll);
    stopAll();
  }
}

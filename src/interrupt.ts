/**
 * SIGINT, SIGTERM and SIGHUP (a closed terminal window, a dropped SSH session) stop a run rather
 * than the process: the first signal aborts the work so the
 * run can delete its keys and stop its server; a second one also skips (or cuts short) the key
 * cleanup, the embedded server is still stopped; a third exits at once, and the process's exit
 * hook still kills an embedded server.
 */
import { EmqError, InterruptedError } from './errors.js';

export interface Interrupts {
  /** Aborted (with an InterruptedError as reason) on the first signal. */
  readonly signal: AbortSignal;
  /** Aborted on the second signal: key cleanup stops between batches. */
  readonly hurry: AbortSignal;
  /** True once a second signal asked to skip the key cleanup. */
  readonly hurried: boolean;
  dispose(): void;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const satisfies readonly NodeJS.Signals[];

/** `say` takes each line the signals cause (the command line binds it to stderr). */
export function watchInterrupts(say: (line: string) => void): Interrupts {
  const controller = new AbortController();
  const hurry = new AbortController();
  let count = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    count++;
    if (count === 1) {
      say(`emq-race: ${signal} received, cleaning up (again to skip deleting the run's keys)\n`);
      controller.abort(new InterruptedError(signal));
    } else if (count === 2) {
      say(`emq-race: ${signal} received again, skipping key cleanup\n`);
      hurry.abort(new InterruptedError(signal));
    } else {
      const first = controller.signal.reason as InterruptedError;
      say(`emq-race: ${signal} received a third time, exiting now\n`);
      process.exit(first.exitCode);
    }
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    signal: controller.signal,
    hurry: hurry.signal,
    get hurried() {
      return count > 1;
    },
    dispose() {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}

/** The InterruptedError behind an aborted signal, or undefined if it was not aborted by a signal. */
export function interruption(signal: AbortSignal): InterruptedError | undefined {
  return signal.aborted && signal.reason instanceof InterruptedError ? signal.reason : undefined;
}

/** Why a run was stopped: a signal, or another stop such as an eviction (see withStop); undefined if it was not. */
export function stopCause(signal: AbortSignal): EmqError | undefined {
  return signal.aborted && signal.reason instanceof EmqError ? signal.reason : undefined;
}

/**
 * The same interrupts, with a signal that also aborts when `stop` does: a run stopped that way
 * cleans up as after a first Ctrl-C, and ends with `stop`'s reason. `release()` takes its
 * listeners off both signals once the run is over, so a command that runs many (a grid) does not
 * pile them up on the one interrupt signal.
 */
export function withStop(interrupts: Interrupts, stop: AbortSignal): Interrupts & { release(): void } {
  const controller = new AbortController();
  const listeners: [AbortSignal, () => void][] = [];
  for (const source of [interrupts.signal, stop]) {
    const abort = (): void => {
      if (!controller.signal.aborted) controller.abort(source.reason);
    };
    if (source.aborted) abort();
    else {
      source.addEventListener('abort', abort, { once: true });
      listeners.push([source, abort]);
    }
  }
  return {
    signal: controller.signal,
    hurry: interrupts.hurry,
    get hurried() {
      return interrupts.hurried;
    },
    dispose: () => interrupts.dispose(),
    release: () => {
      for (const [source, abort] of listeners) source.removeEventListener('abort', abort);
    },
  };
}

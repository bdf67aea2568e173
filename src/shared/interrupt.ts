/**
 * SIGINT, SIGQUIT (Ctrl-\), SIGTERM and SIGHUP (a closed terminal window, a dropped SSH session) stop a run rather
 * than the process. The first signal aborts the work so the run can delete its keys and stop its
 * server; a second changes nothing but the words (a closed terminal sends two hang-ups, the
 * kernel's and the shell's, and a person presses Ctrl-C twice without meaning "leave my keys
 * behind"); only a third, deliberate one leaves at once, naming the `clean` line for every queue
 * whose keys it leaves. The exit code is always the first signal's.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CodeBugError, EmqError, ExitCode, InterruptedError } from './errors.js';

export interface Interrupts {
  /** Aborted (with an InterruptedError as reason) on the first signal. */
  readonly signal: AbortSignal;
  /**
   * Records `line`, the way to remove what the caller is writing, until the returned function is
   * called: a third signal prints every line still owed before it leaves.
   */
  owe(line: string): () => void;
  /** Stops listening: at once if no signal came; after one, only once late signals have had their time. */
  dispose(): void;
}

// SIGQUIT is the terminal's Ctrl-\: a user's way to stop a run as much as Ctrl-C is, so it cleans up too.
const SIGNALS = ['SIGINT', 'SIGQUIT', 'SIGTERM', 'SIGHUP'] as const satisfies readonly NodeJS.Signals[];

/** One of the signals that stop a run: a terminal sends them to the whole process group, helpers included. */
export function isStopSignal(signal: string | null): boolean {
  return (SIGNALS as readonly string[]).includes(signal ?? '');
}

/** What each signal's line says the command does next, after "SIGINT received, " (and "a second signal: "). */
export interface SignalWords {
  readonly first: string;
  readonly second: string;
  readonly third: string;
}

/** A run's: the first signal cleans up, the third leaves the run's keys. */
const RUN_WORDS: SignalWords = {
  first: "cleaning up (a third signal leaves without deleting the run's keys)",
  second: "still cleaning up (a third signal leaves without deleting the run's keys)",
  third: 'leaving now without finishing the clean-up',
};

/** What marks bin/emq-race.js's listeners for the signals that come before any command watches them. */
const EARLY = Symbol.for('emq-race.early-signals');

/** How long a stopped run's listeners outlast its clean-up (see dispose). */
const LATE_SIGNALS_MS = 10_000;

/** Watches begun and not yet disposed: the signals are handed over only when the last one goes. */
let watching = 0;
/** The stop of each watch begun and not yet disposed: what stopEveryWatch aborts. */
const stops = new Set<(reason: EmqError) => void>();

/**
 * Stops every run that watches now, as a first signal would, with `reason` as what it ends with
 * (a failure met where no caller of the run's could catch it: see cli/uncaught.ts); each cleans up
 * and ends with `reason`. False when no run watches, so that the caller ends the command itself.
 */
export function stopEveryWatch(reason: EmqError): boolean {
  for (const stop of stops) stop(reason);
  return stops.size > 0;
}
/**
 * Signals between the end of a command that no signal stopped and the process's own end (its
 * connections closing, Node's teardown). Without a listener, Node's default would end the process
 * by the signal, with no line and no exit code of the tool's. Not the last fraction of a ms: once
 * Node's event loop has ended, a signal is either never read (the command's own code stands) or
 * meets the default again as Node resets it on its way out. The last watch, disposed, hands
 * them here: the output is complete by then, so the command ends with the signal's code and the
 * line that says so, as a signal during the session's close does (server/session.ts). A new watch
 * takes them back; the listeners go once the process should long have ended.
 */
let afterLast: { readonly say: (line: string) => void; readonly leave: (code: number, message: string) => void } | undefined;
let afterLastTimer: NodeJS.Timeout | undefined;
const afterLastSignal = (signal: NodeJS.Signals): void => {
  const last = afterLast;
  if (!last) return;
  afterLast = undefined;
  const stop = new InterruptedError(signal);
  last.say(`emq-race: ${stop.message}, once its output was complete\n`);
  last.leave(stop.exitCode, stop.message);
};
function stopAfterLast(): void {
  clearTimeout(afterLastTimer);
  afterLast = undefined;
  for (const signal of SIGNALS) process.off(signal, afterLastSignal);
}

/**
 * `say` takes each line the signals cause (the command line binds it to stderr); `leave` ends the
 * process with the first signal's exit code and message on the third (the command line's own exit,
 * which prints the JSON error object under --json and spares a closed terminal; process.exit where
 * none is given). `lateMs`: how long a stopped run still counts signals after dispose(). `words`:
 * what the lines say comes next (a run's clean-up by default).
 */
export function watchInterrupts(
  say: (line: string) => void,
  leave: (code: number, message: string) => void = (code) => process.exit(code),
  lateMs = LATE_SIGNALS_MS,
  words: SignalWords = RUN_WORDS,
): Interrupts {
  const controller = new AbortController();
  const owed = new Set<{ readonly line: string }>();
  let count = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    count++;
    if (count === 1) {
      say(`emq-race: ${signal} received, ${words.first}\n`);
      controller.abort(new InterruptedError(signal));
    } else if (count === 2) {
      // Counted as signals, whichever: INT then TERM is a second signal, not a SIGTERM "again".
      say(`emq-race: ${signal} received, a second signal: ${words.second}\n`);
    } else if (count === 3) {
      const first = controller.signal.reason as EmqError;
      say(`emq-race: ${signal} received, a third signal: ${words.third}\n`);
      for (const { line } of owed) say(`emq-race: ${line}\n`);
      say(`emq-race: ${first.message}\n`);
      leave(first.exitCode, first.message);
    }
  };
  for (const signal of SIGNALS) {
    // The command line's own listeners while the program loaded (bin/emq-race.js), which end the
    // process at once: from here, signals are this watch's. Ours goes on first: a signal's
    // listeners all gone, even for a moment, drops one that has arrived but not yet been handed
    // out.
    process.on(signal, onSignal);
    for (const listener of process.listeners(signal)) if (EARLY in listener) process.off(signal, listener);
  }
  stopAfterLast();
  watching++;
  // A failure no caller could catch stops the run as a first signal does, without its line; a
  // signal after it still counts as the first for the lines it prints and the third's way out.
  const stop = (reason: EmqError): void => {
    if (!controller.signal.aborted) controller.abort(reason);
  };
  stops.add(stop);
  let disposed = false;
  return {
    signal: controller.signal,
    owe(line) {
      const entry = { line };
      owed.add(entry);
      return () => void owed.delete(entry);
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      watching--;
      stops.delete(stop);
      const remove = (): void => {
        for (const signal of SIGNALS) process.off(signal, onSignal);
      };
      if (count === 0) {
        // Handed over before ours go: never a moment without a listener (see watchInterrupts).
        if (watching === 0) {
          afterLast = { say, leave };
          for (const signal of SIGNALS) process.on(signal, afterLastSignal);
          afterLastTimer = setTimeout(stopAfterLast, lateMs).unref();
        }
        return remove();
      }
      // A run a signal stopped is on its way out once its clean-up is done, and the next signal
      // may come only then: a closed terminal's second SIGHUP (the shell's, after the kernel's), a
      // second Ctrl-C. Without a listener it would kill the process mid-way through its last lines,
      // by the signal rather than with its exit code; it is counted as before instead (a third
      // still leaves). The listeners go once the process should long have ended.
      setTimeout(remove, lateMs).unref();
    },
  };
}

/** Whether `signal` was aborted by a signal from outside (SIGINT, SIGQUIT, SIGTERM, SIGHUP), not by a failure it also carries. */
export function stoppedBySignal(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason instanceof InterruptedError;
}

/** Why a run was stopped: a signal, or another stop such as an eviction (see withStop); undefined if it was not. */
export function stopCause(signal: AbortSignal): EmqError | undefined {
  return signal.aborted && signal.reason instanceof EmqError ? signal.reason : undefined;
}

/**
 * A bug of the tool's that stopped the watch of `signal` once the command's output was complete (a
 * callback past every caller firing as its connections close, cli/uncaught.ts), marked so: the
 * command line says it with its stack after the output, which stands as printed, exit 3.
 */
export function bugAfterOutput(signal: AbortSignal): CodeBugError | undefined {
  const late = stopCause(signal);
  if (!(late instanceof CodeBugError)) return undefined;
  late.afterOutput = true;
  return late;
}

/**
 * `wait`, unless `signal` aborts first: then its reason, at once. For a wait the run cannot cut
 * short between two steps of its own (one long call, a round trip through a slow proxy), which is
 * otherwise left to settle on its own, unwatched, once nothing awaits it. Without a signal (a
 * caller no command's stop reaches), `wait` itself.
 */
export function orStopped<T>(signal: AbortSignal | undefined, wait: Promise<T>): Promise<T> {
  if (!signal) return wait;
  if (signal.aborted) {
    wait.catch(() => {});
    return Promise.reject(signal.reason);
  }
  let stop = (): void => {};
  const stopped = new Promise<never>((_, reject) => {
    stop = () => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
  });
  // The loser of the two is never awaited: its rejection must not count as unhandled.
  wait.catch(() => {});
  stopped.catch(() => {});
  return Promise.race([wait, stopped]).finally(() => signal.removeEventListener('abort', stop));
}

/**
 * A signal that aborts with a TimeoutError after `ms`, as AbortSignal.timeout's does, for a wait
 * bounded inside AbortSignal.any. Node 20's AbortSignal.timeout holds its signal by a weak
 * reference only, and so does the combined signal: once garbage collection takes it, the combined
 * signal never times out, and a wait bounded at 10 s runs on for good (seen: a failover drill
 * whose primary died while its replica synced waited for that sync until a signal). Here the
 * timer holds the controller until it fires; unref'd, a timeout still pending keeps no process
 * alive.
 */
export function timeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms).unref();
  return controller.signal;
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
    owe: (line) => interrupts.owe(line),
    dispose: () => interrupts.dispose(),
    release: () => {
      for (const [source, abort] of listeners) source.removeEventListener('abort', abort);
    },
  };
}

/**
 * `work` stopped, as a Ctrl-C would, when a helper it relies on dies (`lost` aborts: the embedded
 * server's keeper, the latency proxy's thread). The helper's death is then the error the command
 * ends with, whatever the stopped work tripped on after it (a lost connection, most likely); a
 * signal keeps its own exit code. Without a helper (`lost` undefined) it is `work` alone.
 */
export async function underHelper<T>(lost: AbortSignal | undefined, interrupts: Interrupts, work: (interrupts: Interrupts) => Promise<T>): Promise<T> {
  if (!lost) return work(interrupts);
  const watched = withStop(interrupts, lost);
  try {
    const result = await work(watched);
    // A helper that died after the last reply still ends the command with its line.
    lost.throwIfAborted();
    return result;
  } catch (err) {
    throw await helperDeath(err, lost);
  } finally {
    watched.release();
  }
}

/**
 * `instead`, the error that takes `err`'s place as the command's end (a helper's death, an
 * eviction), still naming what the stopped work had left behind (--keep's earlier queues,
 * EmqError.leftBehind): the new line replaces the work's, not what the user must clean up. Such an
 * error is thrown once, so its line is added to in place.
 */
export function withLeftBehind<E>(instead: E, err: unknown): E {
  if (!(instead instanceof EmqError) || !(err instanceof EmqError) || !err.leftBehind || instead.leftBehind) return instead;
  return instead.leaveBehind(err.leftBehind);
}

/**
 * What a command ends with when `err` stopped it: `err`, or the helper's death (`news` aborted)
 * that it stands for, still naming what the work left behind. A server's death reaches the run's
 * sockets at once, and the tool only through the helper that waited on it (a keeper's exit, a few
 * ms later, more on a loaded machine): a server error is given that long to turn out to be the
 * helper's news (helperNews). A signal keeps its own exit code.
 */
export async function helperDeath(err: unknown, news: AbortSignal): Promise<unknown> {
  await helperNews(err, news);
  return err instanceof InterruptedError || !news.aborted ? err : withLeftBehind(news.reason, err);
}

/** How long a server error waits for a helper's death to be known before it is taken as the run's own. */
const HELPER_NEWS_MS = 1000;

/**
 * Resolves once `news` (a helper's death) has come, or HELPER_NEWS_MS after a server error `err`
 * that it may explain; at once for any other error, or when the news is already in.
 */
export async function helperNews(err: unknown, news: AbortSignal): Promise<void> {
  if (!(err instanceof EmqError) || err.exitCode !== ExitCode.server || news.aborted || waitedFor.has(err)) return;
  // Once per error: on its way out through the layers that each ask (underHelper, then the
  // session), a server error that is no one's death is given its time once, not once a layer.
  waitedFor.add(err);
  await sleep(HELPER_NEWS_MS, undefined, { signal: news }).catch(() => {});
}

/** The server errors helperNews has already waited on. */
const waitedFor = new WeakSet<EmqError>();

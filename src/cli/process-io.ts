/**
 * The one place the tool's Io is bound to the process: stdout, stderr, the environment, whether
 * each stream is a terminal (and how wide), and the yes/no question asked on a terminal. Everything else writes
 * through an Io it is handed, so the tests can run the whole command line in-process.
 */
import { closeSync, openSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { isatty } from 'node:tty';
import { InterruptedError } from '../errors.js';
import type { Io } from '../model.js';

/**
 * A reader that goes away (`| head`, a closed terminal) is no error of the run's: what it would
 * have read is dropped, quietly, and the run still cleans up and exits as it would have.
 */
const closed = { out: false, err: false };
process.stdout.on('error', () => (closed.out = true));
process.stderr.on('error', () => (closed.err = true));

/**
 * A terminal that closed under the run (a closed window, tmux kill-session, a dropped SSH session)
 * is left alone on the way out. On exit Node puts each standard stream that started on a terminal
 * back as it found it, and Node 20 aborts (exit 134, an assertion in its ResetStdio) when that
 * terminal has hung up. Node skips a stream whose descriptor now names another file, so each one
 * whose terminal is gone is pointed at /dev/null first: the run exits with its own code.
 */
const startedOnTerminal = [0, 1, 2].filter((fd) => isatty(fd));
process.on('exit', () => {
  for (const fd of startedOnTerminal) {
    // isatty asks the terminal itself, which answers no once it has hung up.
    if (isatty(fd)) continue;
    try {
      closeSync(fd);
      // The lowest free descriptor: `fd` itself, now /dev/null.
      openSync('/dev/null', fd === 0 ? 'r' : 'w');
    } catch {
      // Closed is enough: Node also skips a descriptor that is no longer open.
    }
  }
});

export const processIo: Io = {
  out: (text) => void (closed.out || process.stdout.write(text)),
  err: (text) => void (closed.err || process.stderr.write(text)),
  env: process.env,
  stdoutIsTty: Boolean(process.stdout.isTTY),
  stderrIsTty: Boolean(process.stderr.isTTY),
  ...(process.stdout.isTTY ? { stdoutColumns: process.stdout.columns } : {}),
  ...(process.stderr.isTTY ? { stderrColumns: process.stderr.columns } : {}),
  stdinIsTty: Boolean(process.stdin.isTTY),
  confirm,
};

/** Asks on the terminal; Ctrl-C at the prompt ends the command like any other interruption. */
async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const stop = new AbortController();
  rl.on('SIGINT', () => stop.abort());
  try {
    return /^y(es)?$/i.test((await rl.question(question, { signal: stop.signal })).trim());
  } catch (err) {
    if (stop.signal.aborted) throw new InterruptedError('SIGINT');
    throw err;
  } finally {
    rl.close();
  }
}

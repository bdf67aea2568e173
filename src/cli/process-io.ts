/**
 * The one place the tool's Io is bound to the process: stdout, stderr, the environment, whether
 * each stream is a terminal (and how wide), and the yes/no question asked on a terminal. Everything else writes
 * through an Io it is handed, so the tests can run the whole command line in-process.
 */
import { leaveClosedTerminalAlone } from '../closed-terminal.js';
import { InterruptedError } from '../errors.js';
import type { Io } from '../model.js';

/**
 * A reader that goes away (`| head`, a closed terminal) is no error of the run's: what it would
 * have read is dropped, quietly, and the run still cleans up and exits as it would have.
 */
const closed = { out: false, err: false };
process.stdout.on('error', () => (closed.out = true));
process.stderr.on('error', () => (closed.err = true));

leaveClosedTerminalAlone();

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

/**
 * Asks on the terminal. Ctrl-C at the prompt ends the command like any other interruption, and so
 * does `signal` (a signal from outside, which the command watches); an input that ends without an
 * answer (Ctrl-D, a closed terminal) is a no.
 */
async function confirm(question: string, signal?: AbortSignal): Promise<boolean> {
  // Loaded for the one question asked (clean --all): every other command starts without readline.
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const stop = new AbortController();
  rl.on('SIGINT', () => stop.abort());
  try {
    return /^y(es)?$/i.test((await rl.question(question, { signal: signal ? AbortSignal.any([stop.signal, signal]) : stop.signal })).trim());
  } catch (err) {
    // The prompt's line is ended before whatever is said next.
    process.stderr.write('\n');
    if (stop.signal.aborted) throw new InterruptedError('SIGINT');
    if (signal?.aborted) throw signal.reason;
    if ((err as { code?: string }).code === 'ABORT_ERR') return false;
    throw err;
  } finally {
    rl.close();
  }
}

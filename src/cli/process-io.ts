/**
 * The one place the tool's Io is bound to the process: stdout, stderr, the environment, whether
 * each stream is a terminal (and how wide), and the yes/no question asked on a terminal. Everything else writes
 * through an Io it is handed, so the tests can run the whole command line in-process.
 */
import { leaveClosedTerminalAlone } from '../shared/closed-terminal.js';
import { InterruptedError } from '../shared/errors.js';
import type { Io } from '../shared/model.js';

/**
 * A reader that goes away (`| head`, a closed terminal) is no error of the run's: what it would
 * have read is dropped, quietly, and the run still cleans up and exits as it would have. Any other
 * failure to write stdout (a full disk, `> /dev/full`) loses the report a script reads: the run
 * still cleans up, and `lostOutput` says so for the process to end with ExitCode.outputLost.
 */
const closed = { out: false, err: false };
/** The write errors of a reader gone: a closed pipe, a terminal hung up. */
const READER_GONE = new Set(['EPIPE', 'EIO', 'ECONNRESET']);
let lostOut: string | undefined;
const noteOut = (err: unknown): void => {
  closed.out = true;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'an error';
  if (!READER_GONE.has(code)) lostOut ??= code;
};
process.stdout.on('error', noteOut);
process.stderr.on('error', () => (closed.err = true));

/**
 * Once stdout has taken (or refused) the last of what was written to it: why it lost it, a code
 * such as ENOSPC, or undefined when all was written or its reader went away.
 */
export async function lostOutput(): Promise<string | undefined> {
  if (!closed.out) await new Promise<void>((resolve) => process.stdout.write('', (err) => resolve(err ? noteOut(err) : undefined)));
  // A stream's error event comes a tick after the write that failed.
  await new Promise((resolve) => setImmediate(resolve));
  return lostOut;
}

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

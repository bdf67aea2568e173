/**
 * The one place the tool's Io is bound to the process: stdout, stderr, the environment, whether
 * each stream is a terminal, and the yes/no question asked on a terminal. Everything else writes
 * through an Io it is handed, so the tests can run the whole command line in-process.
 */
import { createInterface } from 'node:readline/promises';
import { InterruptedError } from '../errors.js';
import type { Io } from '../model.js';

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  stdoutIsTty: Boolean(process.stdout.isTTY),
  stderrIsTty: Boolean(process.stderr.isTTY),
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

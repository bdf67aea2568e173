/** The built CLI as a running process, for tests that signal it or kill its server mid-run. */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, cliEnv, cliResult, type CliResult } from './cli.js';

/** A loop race that sweeps for seconds (10,000 jobs, a 5 ms pause between probe and move): a run a test can stop mid-sweep. */
export const LONG_LOOP = ['--mode', 'loop', '--jobs', '10000', '--probe-delay', '5'] as const;

export interface RunningCli {
  readonly child: ChildProcess;
  readonly done: Promise<CliResult>;
  /** What the CLI wrote on stderr so far. */
  stderr(): string;
  /** Resolves once stderr matches `pattern`. */
  waitForStderr(pattern: RegExp): Promise<void>;
}

export function startCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, options: { ownGroup?: boolean } = {}): RunningCli {
  // `ownGroup`: the CLI leads a process group of its own, as a shell's foreground job does, so that
  // a test can send a signal to the group (process.kill(-pid)) as a terminal's Ctrl-C does.
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownGroup ?? false,
  });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const w of [...waiters]) {
      if (w.pattern.test(stderr)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(cliResult(code, signal, stdout, stderr)));
  });
  return {
    child,
    done,
    stderr: () => stderr,
    waitForStderr: (pattern) => (pattern.test(stderr) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ pattern, resolve }))),
  };
}

/** Rejects if `promise` takes longer than `ms`: a guard against hangs, not a performance check. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** One `emq-race: …` line and no stack trace: what every failure must look like. */
export function oneErrorLine(stderr: string): string | undefined {
  const lines = stderr.split('\n').filter((line) => line.length > 0);
  const errors = lines.filter((line) => line.startsWith('emq-race: ') && !/received/.test(line));
  if (errors.length !== 1) return undefined;
  if (lines.some((line) => /^\s+at |Unhandled|unexpected error/.test(line))) return undefined;
  return errors[0];
}

/**
 * Resolves once `ready` holds, asked every `everyMs` (a few by default); rejects after `ms` (a guard
 * against a hang, not a timing). A long wait is asked less often: each question costs CPU.
 */
export async function until(ms: number, what: string, ready: () => Promise<boolean> | boolean, everyMs = 2): Promise<void> {
  // The poll stops with the bound: one left asking after its test failed would keep the test
  // file's process from ever ending.
  let over = false;
  try {
    await within(
      ms,
      what,
      (async () => {
        while (!over && !(await ready())) await sleep(everyMs);
      })(),
    );
  } finally {
    over = true;
  }
}

/**
 * The CLI as the tests run it. `runCli` runs the whole command line in this process through the
 * `Io` seam (`run(argv, io)`), its output captured: the same code a user's process runs, without
 * a Node start-up per call. `spawnCli` runs the built CLI as a user does, for the tests where the
 * process itself is under test (exit codes through bin/, signals, pipes, a terminal).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/program.js';
import { progressLines, withoutProgress } from './progress-lines.js';

export const BIN = fileURLToPath(new URL('../../../bin/emq-race.js', import.meta.url));

/** Output with its wrapping undone: each continuation line (indented by two) joined back to the line it continues. */
export const unwrapped = (text: string): string => text.replace(/\n {2}(?=\S)/g, ' ');

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** Everything on stderr but the progress lines, which a slow machine may add to any run. */
  readonly stderr: string;
  /** The plain progress lines a run longer than 5 s prints on stderr without a terminal, each with its continuation lines. */
  readonly progress: readonly string[];
}

/** A finished CLI's output, its progress lines set apart from the rest of stderr. */
export function cliResult(code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string): CliResult {
  return { code, signal, stdout, stderr: withoutProgress(stderr), progress: progressLines(stderr) };
}

/** The environment every test's CLI starts from: no REDIS_URL of the machine's, no colour unless asked. */
export function cliEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, REDIS_URL: '', NO_COLOR: '1', ...env };
}

/**
 * The command line run in-process, as a pipe sees it: no terminal on any stream, `env` as its
 * environment. Its exit code is what bin/emq-race.js would set.
 */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(['node', 'emq-race', ...args], {
    out: (text) => void (stdout += text),
    err: (text) => void (stderr += text),
    env: cliEnv(env),
    stdoutIsTty: false,
    stderrIsTty: false,
    stdinIsTty: false,
  });
  return cliResult(code, null, stdout, stderr);
}

/** The built CLI spawned as a user runs it, to its end: for the tests where the process is the point. */
export function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runProcess(process.execPath, [BIN, ...args], { env: cliEnv(env) });
}

/** Runs any program to its end (an installed `emq-race`, npm) and collects its exit code and output. */
export function runProcess(file: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(cliResult(code, signal, stdout, stderr)));
  });
}

/**
 * The whole command line run in this process through the Io seam: stdout and stderr collected,
 * and, for what a person sees on a terminal, stderr that says it is one (with its width).
 */
import { run } from '../../src/cli/program.js';
import type { Io } from '../../src/shared/model.js';
import { cliResult, type CliResult } from './cli.js';

export interface InProcessRun {
  /** Resolves with the exit code and the output once the command ends. */
  readonly done: Promise<CliResult & { readonly rawStderr: string }>;
  /** Everything written to stderr so far, progress drawn in place included. */
  stderr(): string;
}

/** The command line's entry: the compiled modules' `run`, or the same function from the help bundle. */
export type Entry = typeof run;

export function startInProcess(args: readonly string[], io: Partial<Io> = {}, entry: Entry = run): InProcessRun {
  let stdout = '';
  let stderr = '';
  const done = entry(['node', 'emq-race', ...args], {
    out: (text) => (stdout += text),
    err: (text) => (stderr += text),
    env: { NO_COLOR: '1' },
    stdoutIsTty: false,
    ...io,
  }).then((code) => ({ ...cliResult(code, null, stdout, stderr), rawStderr: stderr }));
  return { done, stderr: () => stderr };
}

export function runInProcess(args: readonly string[], io: Partial<Io> = {}, entry: Entry = run): Promise<CliResult & { readonly rawStderr: string }> {
  return startInProcess(args, io, entry).done;
}

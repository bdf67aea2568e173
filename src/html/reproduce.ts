/** The command lines that reproduce a main run and an explain run, from their parsed flags. */
import { commandLine } from './command-line.js';

export interface RaceFlagsSeen {
  readonly mode: readonly string[];
  readonly sweepers: number;
  readonly jobs: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly probeDelay: number;
  readonly queue?: string | undefined;
  readonly url?: string | undefined;
  readonly serverBin?: string | undefined;
  readonly keep: boolean;
  readonly json: boolean;
  readonly expect?: string | undefined;
  readonly html?: string | undefined;
}

export interface ExplainFlagsSeen {
  readonly mode: readonly string[];
  /** The schedule as SWEEP:STEP items; only the loop uses it. */
  readonly schedule: readonly string[];
  readonly counter?: string | undefined;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly queue?: string | undefined;
  readonly url?: string | undefined;
  readonly serverBin?: string | undefined;
  readonly keep: boolean;
  readonly json: boolean;
  readonly html?: string | undefined;
  readonly svg?: string | undefined;
}

/** `url` is the one the run used (from --url or REDIS_URL); it is redacted on the way out. */
export function raceCommandLine(flags: RaceFlagsSeen, url: string | undefined): string {
  return commandLine([], [
    ['--mode', flags.mode],
    ['--sweepers', flags.sweepers],
    ['--jobs', flags.jobs],
    ['--batch', flags.batch],
    ['--max-stalled', flags.maxStalled],
    ['--stalled-before', flags.stalledBefore],
    ['--probe-delay', flags.probeDelay],
    ['--queue', flags.queue],
    ['--url', url],
    ['--server-bin', flags.serverBin],
    ['--keep', flags.keep],
    ['--json', flags.json],
    ['--expect', flags.expect],
    ['--html', flags.html],
  ]);
}

export function explainCommandLine(flags: ExplainFlagsSeen, url: string | undefined): string {
  const counter = flags.counter !== undefined;
  return commandLine(['explain'], [
    ['--mode', counter ? undefined : flags.mode],
    ['--schedule', counter || !flags.mode.includes('loop') ? undefined : flags.schedule],
    ['--counter', flags.counter],
    ['--max-stalled', flags.maxStalled],
    ['--stalled-before', flags.stalledBefore],
    ['--queue', flags.queue],
    ['--url', url],
    ['--server-bin', flags.serverBin],
    ['--keep', flags.keep],
    ['--json', flags.json],
    ['--html', flags.html],
    ['--svg', flags.svg],
  ]);
}

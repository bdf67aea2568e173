/** The command lines that reproduce a main run and an explain run, from their parsed flags. */
import { commandLine } from './command-line.js';

/** The flags the main command and explain share. */
interface FlagsSeen {
  readonly mode: readonly string[];
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly queue?: string | undefined;
  readonly url?: string | undefined;
  readonly serverBin?: string | undefined;
  readonly keep: boolean;
  readonly json: boolean;
  readonly html?: string | undefined;
}

export interface RaceFlagsSeen extends FlagsSeen {
  readonly sweepers: number;
  readonly jobs: number;
  readonly batch: number;
  readonly probeDelay: number;
  readonly expect?: string | undefined;
  readonly script?: string | undefined;
  readonly pending?: string | undefined;
  readonly maxSweeps?: number | undefined;
  readonly live?: number | undefined;
  readonly interval?: number | undefined;
  readonly jitter?: number | undefined;
  readonly processes?: boolean | undefined;
  readonly trials?: number | undefined;
  readonly fault?: readonly string[] | undefined;
  readonly allowServerWide?: boolean | undefined;
  readonly workers?: number | undefined;
  readonly cycles?: number | undefined;
  readonly observe?: boolean | undefined;
  readonly loopJobs?: number | undefined;
  readonly serverStats?: boolean | undefined;
  readonly queues?: number | undefined;
  readonly cluster?: boolean | undefined;
  readonly embeddedCluster?: number | undefined;
  readonly csv?: boolean | undefined;
  readonly latency?: number | undefined;
  readonly latencyJitter?: number | undefined;
  readonly tlsCa?: string | undefined;
  readonly tlsCert?: string | undefined;
  readonly tlsKey?: string | undefined;
  readonly tlsInsecure?: boolean | undefined;
}

export interface ExplainFlagsSeen extends FlagsSeen {
  /** The schedule as SWEEP:STEP items; only the loop uses it. */
  readonly schedule: readonly string[];
  readonly counter?: string | undefined;
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
    ['--loop-jobs', flags.loopJobs],
    ['--queue', flags.queue],
    ['--queues', flags.queues === 1 ? undefined : flags.queues],
    ['--cluster', flags.cluster],
    ['--embedded-cluster', flags.embeddedCluster],
    ['--url', url],
    ['--tls-ca', flags.tlsCa],
    ['--tls-cert', flags.tlsCert],
    ['--tls-key', flags.tlsKey],
    ['--tls-insecure', flags.tlsInsecure],
    ['--server-bin', flags.serverBin],
    ['--server-stats', flags.serverStats],
    ['--keep', flags.keep],
    ['--json', flags.json],
    ['--csv', flags.csv],
    ['--expect', flags.expect],
    ['--script', flags.script],
    ['--pending', flags.pending === 'list' ? undefined : flags.pending],
    ['--max-sweeps', flags.maxSweeps],
    ['--live', flags.live],
    ['--interval', flags.interval || undefined],
    ['--jitter', flags.jitter || undefined],
    ['--processes', flags.processes],
    ['--latency', flags.latency],
    ['--latency-jitter', flags.latencyJitter],
    ['--trials', flags.trials],
    ...(flags.fault ?? []).map((fault): [string, string] => ['--fault', fault]),
    ['--allow-server-wide', flags.allowServerWide],
    ['--workers', flags.workers || undefined],
    ['--cycles', flags.cycles === 1 ? undefined : flags.cycles],
    ['--observe', flags.observe],
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

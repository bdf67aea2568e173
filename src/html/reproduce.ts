/**
 * The command lines that reproduce a main run and an explain run, from their parsed flags: the
 * settings that differ from the defaults, so the line reads as what was asked for.
 */
import { commandLine, type CommandValue } from './command-line.js';
import { DEFAULT_SCHEDULE } from '../explain/schedule.js';
import { LIMITS } from '../shared/model.js';
import { modeSets, replayedModes, replayOf } from '../sweepers/strategies.js';

/** `value`, or undefined where it is the default (and so left out of the line). */
function unlessDefault(value: number | undefined, fallback: number): number | undefined {
  return value === fallback ? undefined : value;
}

/** The list, or undefined where it is the default. */
function unlessList(modes: readonly string[], fallback: readonly string[]): CommandValue {
  return modes.length === fallback.length && modes.every((mode, i) => mode === fallback[i]) ? undefined : modes;
}

/** The flags the main command and explain share. */
interface FlagsSeen {
  readonly mode: readonly string[];
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly queue?: string | undefined;
  readonly url?: string | undefined;
  readonly serverBin?: string | undefined;
  readonly tlsCa?: string | undefined;
  readonly tlsCert?: string | undefined;
  readonly tlsKey?: string | undefined;
  readonly tlsInsecure?: boolean | undefined;
  readonly keep: boolean;
  readonly json: boolean;
  readonly html?: string | undefined;
}

/** How both commands reach their server: the URL (redacted on the way out), the TLS files, the binary. */
function serverWords(flags: FlagsSeen, url: string | undefined): [string, CommandValue][] {
  return [
    ['--url', url],
    ['--tls-ca', flags.tlsCa],
    ['--tls-cert', flags.tlsCert],
    ['--tls-key', flags.tlsKey],
    ['--tls-insecure', flags.tlsInsecure],
    ['--server-bin', flags.serverBin],
  ];
}

export interface RaceFlagsSeen extends FlagsSeen {
  /** The flags given on the command line: beside --script or --lib, a --mode given changes what runs even when it names the default. */
  readonly given?: readonly string[];
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
  /** --seed: the rerun is then the same run; with --shrink, the shrink the page shows too. */
  readonly seed?: number | undefined;
  readonly shrink?: boolean | undefined;
  /** --fault failover's own flags: the rerun drills the same failover. */
  readonly failoverAfter?: number | undefined;
  readonly failoverCalls?: number | undefined;
  readonly waitReplicas?: { readonly replicas: number; readonly timeoutMs: number } | undefined;
  readonly replicaLag?: number | undefined;
  readonly sentinel?: boolean | undefined;
  /** --lib and --lib-from: the rerun races the same library, found where the run found it (the path as given). */
  readonly lib?: string | undefined;
  readonly libFrom?: string | undefined;
}

export interface ExplainFlagsSeen extends FlagsSeen {
  /** The schedule as SWEEP:STEP items; only the loop uses it. */
  readonly schedule: readonly string[];
  readonly counter?: string | undefined;
  readonly svg?: string | undefined;
}

/** `url` is the one the run used (from --url or REDIS_URL); it is redacted on the way out. */
export function raceCommandLine(flags: RaceFlagsSeen, url: string | undefined): string {
  return commandLine(
    [],
    [
      // Beside --script or --lib, leaving --mode out would race their modes alone.
      [
        '--mode',
        (flags.script !== undefined || flags.lib !== undefined) && flags.given?.includes('--mode') ? flags.mode : unlessList(flags.mode, modeSets().both),
      ],
      ['--lib', flags.lib],
      ['--lib-from', flags.libFrom],
      ['--sweepers', unlessDefault(flags.sweepers, LIMITS.sweepers.default)],
      ['--jobs', unlessDefault(flags.jobs, LIMITS.jobs.default)],
      ['--batch', unlessDefault(flags.batch, LIMITS.batch.default)],
      ['--max-stalled', unlessDefault(flags.maxStalled, LIMITS.maxStalled.default)],
      ['--stalled-before', unlessDefault(flags.stalledBefore, LIMITS.stalledBefore.default)],
      ['--probe-delay', unlessDefault(flags.probeDelay, LIMITS.probeDelay.default)],
      ['--loop-jobs', flags.loopJobs],
      ['--queue', flags.queue],
      ['--queues', unlessDefault(flags.queues, LIMITS.queues.default)],
      ['--cluster', flags.cluster],
      ['--embedded-cluster', flags.embeddedCluster],
      ...serverWords(flags, url),
      ['--server-stats', flags.serverStats],
      ['--keep', flags.keep],
      ['--json', flags.json],
      ['--csv', flags.csv],
      ['--expect', flags.expect],
      ['--script', flags.script],
      ['--pending', flags.pending === 'list' ? undefined : flags.pending],
      ['--max-sweeps', flags.maxSweeps],
      ['--live', flags.live],
      ['--interval', unlessDefault(flags.interval, LIMITS.interval.default)],
      ['--jitter', unlessDefault(flags.jitter, LIMITS.jitter.default)],
      ['--processes', flags.processes],
      ['--latency', flags.latency],
      ['--latency-jitter', flags.latencyJitter],
      ['--trials', flags.trials],
      ['--seed', flags.seed],
      ['--shrink', flags.shrink],
      ...(flags.fault ?? []).map((fault): [string, string] => ['--fault', fault]),
      ['--failover-after', flags.failoverAfter],
      ['--failover-calls', flags.failoverCalls],
      ['--wait-replicas', flags.waitReplicas && `${flags.waitReplicas.replicas}:${flags.waitReplicas.timeoutMs}`],
      ['--replica-lag', flags.replicaLag],
      ['--sentinel', flags.sentinel],
      ['--allow-server-wide', flags.allowServerWide],
      ['--workers', unlessDefault(flags.workers, LIMITS.workers.default)],
      ['--cycles', unlessDefault(flags.cycles, LIMITS.cycles.default)],
      ['--observe', flags.observe],
      ['--html', flags.html],
    ],
  );
}

export function explainCommandLine(flags: ExplainFlagsSeen, url: string | undefined): string {
  const counter = flags.counter !== undefined;
  return commandLine(
    ['explain'],
    [
      ['--mode', counter ? undefined : unlessList(flags.mode, replayedModes())],
      ['--schedule', counter || !flags.mode.some((mode) => replayOf(mode) === 'loop') ? undefined : unlessList(flags.schedule, DEFAULT_SCHEDULE.split(','))],
      ['--counter', flags.counter],
      ['--max-stalled', unlessDefault(flags.maxStalled, LIMITS.maxStalled.default)],
      ['--stalled-before', unlessDefault(flags.stalledBefore, LIMITS.stalledBefore.default)],
      ['--queue', flags.queue],
      ...serverWords(flags, url),
      ['--keep', flags.keep],
      ['--json', flags.json],
      ['--html', flags.html],
      ['--svg', flags.svg],
    ],
  );
}

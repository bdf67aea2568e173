/**
 * The race's flags: their types and their definitions, in the order help lists them. The main
 * command takes them all; `emq-race grid` takes most of them, and varies the numeric ones.
 */
import { Option } from 'commander';
import { collectFault } from '../consequences/faults/names.js';
import { outputFileFlag } from '../html/output-file.js';
import { usageError } from '../shared/errors.js';
import { shownValue } from '../shared/text.js';
import {
  checkLibraryFlagsGiven,
  checkRaceOptions,
  libraryAsked,
  modesWithLibrary,
  intFlag,
  LATENCY_CEILING,
  latencyAsked,
  modesWithScript,
  msFlag,
  parseModes,
  parsePendingKind,
  parseQueueName,
  urlOnce,
} from './options.js';
import { parseExpectation } from './expect.js';
import type { TlsFlags } from '../server/tls.js';
import { LIBRARY_NAMES, LIMITS, type Expectation, type FaultName, type Mode, type PendingKind, type RaceOptions } from '../shared/model.js';
import { STRATEGIES, modeSets, replayOf } from '../sweepers/strategies.js';
import { parseLibraryName } from '../libraries/resolve.js';
import type { LibraryName } from '../shared/model.js';

export interface MainFlags extends TlsFlags {
  mode: Mode[];
  jobs: number;
  sweepers: number;
  batch: number;
  maxStalled: number;
  stalledBefore: number;
  probeDelay: number;
  loopJobs?: number;
  serverStats: boolean;
  queues: number;
  cluster: boolean;
  embeddedCluster?: number;
  queue?: string;
  url?: string;
  serverBin?: string;
  keep: boolean;
  json: boolean;
  expect?: Expectation;
  fault: FaultName[];
  workers: number;
  cycles: number;
  observe: boolean;
  allowServerWide: boolean;
  script?: string;
  pending: PendingKind;
  maxSweeps?: number;
  live?: number;
  interval: number;
  jitter: number;
  processes: boolean;
  csv: boolean;
  trials?: number;
  latency?: number;
  latencyJitter?: number;
  /**
   * The flags given on the command line (long names, `--batch`), not left at their defaults: with
   * --script and no --mode only the script runs, and a library's run refuses those it would ignore.
   */
  given: readonly string[];
  html?: string;
  wide: boolean;
  lib?: LibraryName;
  libFrom?: string;
  failoverAfter?: number;
  failoverCalls?: number;
  waitReplicas?: { replicas: number; timeoutMs: number };
  seed?: number;
  shrink?: boolean;
  exportTest?: string;
  replicaLag?: number;
  sentinel?: boolean;
}

/** A flag's allowed values as help says them: `1–10`, or the one value a range of one allows. */
function range(limit: { min: number; max: number }): string {
  return limit.min === limit.max ? `only ${limit.min}` : `${limit.min}–${limit.max}`;
}

/** Every flag of the race, as commander options (a fresh set per call: commander keeps state in them). */
export function raceFlagOptions(): Option[] {
  return [
    new Option('--mode <mode>', 'the strategies to race, each on a queue of its own: a mode, both, all, or a comma list (see Modes below)')
      .default([...modeSets().both], 'both')
      .argParser(parseModes),
    new Option('--sweepers <n>', `concurrent sweepers, each on its own connection (${range(LIMITS.sweepers)})`)
      .default(LIMITS.sweepers.default)
      .argParser(intFlag('--sweepers', LIMITS.sweepers)),
    new Option('--jobs <n>', `expired leases to seed (${range(LIMITS.jobs)})`).default(LIMITS.jobs.default).argParser(intFlag('--jobs', LIMITS.jobs)),
    new Option('--batch <n>', `jobs per sweep (${range(LIMITS.batch)})`).default(LIMITS.batch.default).argParser(intFlag('--batch', LIMITS.batch)),
    new Option('--max-stalled <n>', `stall count at which a job goes to dead (${range(LIMITS.maxStalled)})`)
      .default(LIMITS.maxStalled.default)
      .argParser(intFlag('--max-stalled', LIMITS.maxStalled)),
    new Option('--stalled-before <n>', 'stall count every job starts with (below --max-stalled)')
      .default(LIMITS.stalledBefore.default)
      .argParser(intFlag('--stalled-before', LIMITS.stalledBefore)),
    new Option('--probe-delay <ms>', `loop only: pause after each probe, standing for a slower liveness check (${range(LIMITS.probeDelay)})`)
      .default(LIMITS.probeDelay.default)
      .argParser(intFlag('--probe-delay', LIMITS.probeDelay)),
    new Option(
      '--loop-jobs <n>',
      `jobs for the round-trip mode (loop), which is slow by nature (${range(LIMITS.loopJobs)}; default ${LIMITS.loopJobs.default}, or --jobs if smaller)`,
    ).argParser(intFlag('--loop-jobs', LIMITS.loopJobs)),
    new Option('--server-stats', "read the server's LATENCY HISTOGRAM around each race for serverCallMsP99 (always on for the embedded server)").default(false),
    new Option(
      '--queues <k>',
      `queues per mode, run side by side, each with its own sweepers; on a cluster spread over the primaries (${range(LIMITS.queues)})`,
    )
      .default(LIMITS.queues.default)
      .argParser(intFlag('--queues', LIMITS.queues)),
    new Option('--cluster', 'the --url node is a Redis Cluster / Valkey cluster node (detected from INFO cluster anyway)').default(false),
    new Option(
      '--embedded-cluster <n>',
      `start a private cluster of n primaries from the server binary instead of one server (${range(LIMITS.embeddedCluster)})`,
    ).argParser(intFlag('--embedded-cluster', LIMITS.embeddedCluster)),
    new Option('--queue <name>', 'queue name: letters, digits, - and _ (default: race- and 8 random hex digits)').argParser(parseQueueName),
    new Option(
      '--url <url>',
      'server URL: redis://[user:pass@]host:port[/db], rediss://… or unix:///path (default: $REDIS_URL, else an embedded server)',
    ).argParser(urlOnce),
    new Option(
      '--server-bin <path>',
      'redis-server, valkey-server or redict-server binary for the embedded server (default: redis-server, then valkey-server, then redict-server, from PATH)',
    ),
    new Option('--keep', "leave the run's keys (and an embedded server) in place").default(false),
    new Option('--json', 'print one JSON object on stdout and nothing else').default(false),
    new Option(
      '--fault <name>',
      'inject a fault: sweeper-crash, script-flush, client-kill (repeat for several), failover (alone: a replica promoted after the primary is killed, see --failover-after), or lapsed-lock (--lib bullmq: live workers whose locks lapse mid-job)',
    )
      .default([], 'none')
      .argParser(collectFault),
    new Option(
      '--failover-after <k>',
      `with --fault failover: cut the replica's link after the k-th answered sweep call (${range(LIMITS.failoverAfter)}; default ${LIMITS.failoverAfter.default})`,
    ).argParser(intFlag('--failover-after', LIMITS.failoverAfter)),
    new Option(
      '--failover-calls <m>',
      `with --fault failover: sweep calls let through after the cut, before the primary is killed (${range(LIMITS.failoverCalls)}; default ${LIMITS.failoverCalls.default})`,
    ).argParser(intFlag('--failover-calls', LIMITS.failoverCalls)),
    new Option(
      '--wait-replicas <n[:ms]>',
      `with --fault failover: WAIT n ms after each sweep call that moved jobs; only moves WAIT confirmed count as acknowledged (n: ${range(LIMITS.waitReplicas)}; ms: ${range(LIMITS.waitTimeout)}, default ${LIMITS.waitTimeout.default})`,
    ).argParser(parseWaitReplicas),
    new Option(
      '--replica-lag <ms>',
      `with --fault failover: hold what the replication link carries this many ms each way (${range(LIMITS.replicaLag)}; default ${LIMITS.replicaLag.default})`,
    ).argParser(intFlag('--replica-lag', LIMITS.replicaLag)),
    new Option('--sentinel', 'with --fault failover: an embedded Sentinel promotes the replica after the primary is killed, not the tool'),
    new Option('--allow-server-wide', "let --fault script-flush run on a --url server (it empties every application's script cache)").default(false),
    new Option('--workers <n>', `workers consuming pending during the race, so duplicates run twice (${range(LIMITS.workers)})`)
      .default(LIMITS.workers.default)
      .argParser(intFlag('--workers', LIMITS.workers)),
    new Option('--cycles <n>', `stalls each job may have: a recovered job is leased again, already expired, up to n − 1 times (${range(LIMITS.cycles)})`)
      .default(LIMITS.cycles.default)
      .argParser(intFlag('--cycles', LIMITS.cycles)),
    new Option('--observe', 'sample where jobs stand during the race, counting jobs seen in no place or in two').default(false),
    new Option(
      '--lib <name>',
      `race your installed queue library's own stalled recovery and two ports of it (${LIBRARY_NAMES.join(', ')}): its modes, unless --mode names some`,
    ).argParser(parseLibraryName),
    new Option('--lib-from <dir>', 'the project whose installed library --lib races (default: the current folder)'),
    new Option(
      '--script <file>',
      'your own sweep script (Lua, same KEYS/ARGV contract as the built-in one) as the script mode; alone unless --mode (or --lib, beside its modes) is given',
    ),
    new Option('--pending <type>', 'list (RPUSH) or zset (ZADD pending 0 id, as EchoMQ)').default('list', 'list').argParser(parsePendingKind),
    new Option(
      '--max-sweeps <n>',
      `sweeps per sweeper before it stops (${range(LIMITS.maxSweeps)}; default 10 × ⌈jobs / batch⌉ + 10, at least jobs × cycles + 10 with --cycles)`,
    ).argParser(intFlag('--max-sweeps', LIMITS.maxSweeps)),
    new Option('--live <n>', `jobs seeded with still-valid leases, which no sweep may touch (${range(LIMITS.live)}; default 10% of --jobs)`).argParser(
      intFlag('--live', LIMITS.live),
    ),
    new Option('--interval <ms>', `pause between one sweeper's sweeps (${range(LIMITS.interval)})`)
      .default(LIMITS.interval.default)
      .argParser(intFlag('--interval', LIMITS.interval)),
    new Option('--jitter <ms>', `random extra pause per sweeper and per sweep, up to this (${range(LIMITS.jitter)})`)
      .default(LIMITS.jitter.default)
      .argParser(intFlag('--jitter', LIMITS.jitter)),
    new Option('--processes', 'run each sweeper in a Node process of its own').default(false),
    new Option(
      '--latency <ms>',
      `add this round-trip time to every race connection, through a delaying proxy on loopback (${range(LIMITS.latency)}, fractions allowed; seeding and audit go direct)`,
    ).argParser(msFlag('--latency', LIMITS.latency, LATENCY_CEILING)),
    new Option('--latency-jitter <ms>', `with --latency: up to this much more per chunk, at random, order kept (${range(LIMITS.latencyJitter)})`).argParser(
      msFlag('--latency-jitter', LIMITS.latencyJitter, LATENCY_CEILING),
    ),
    new Option('--csv', "print the runs as CSV, the JSON's field names as headers").default(false),
    new Option('--wide', 'every column of the table, one row per run, however wide (without it: the headline figures, fitted to the terminal)').default(false),
    new Option('--trials <n>', `repeat each mode this many times on fresh queues and summarise (${range(LIMITS.trials)}; default 1)`).argParser(
      intFlag('--trials', LIMITS.trials),
    ),
    new Option('--html <file>', 'also write the report as one self-contained HTML page').argParser(outputFileFlag('--html')),
    new Option(
      '--seed <n>',
      `one command in flight at a time, the next sweeper chosen by a generator seeded with n: the same run again (${range(LIMITS.seed)})`,
    ).argParser(intFlag('--seed', LIMITS.seed)),
    new Option('--shrink', "with --seed: shrink the loop's anomaly to the fewest jobs, sweepers and switches, and print it as an explain line"),
    new Option('--export-test <file>', 'with --seed: shrink, then write the witness as a node:test file that fails while the strategy races').argParser(
      outputFileFlag('--export-test', 'fresh'),
    ),
    new Option(
      '--expect <what>',
      'exit 1 unless the runs come out so: clean (every run clean), race (the loop races, every other mode is clean), or per mode, e.g. atomic=clean,loop=race (repeatable; terms merge)',
    ).argParser(parseExpectation),
  ];
}

/**
 * Whether --keep keeps the session's own server: a failover drill runs on a pair of its own, whose
 * promoted replica --keep keeps with the run's keys, and the session's server, holding none of
 * them, goes as usual.
 */
export function keepsSessionServer(options: Pick<RaceOptions, 'keep' | 'consequences'>): boolean {
  return options.keep && !options.consequences?.failover;
}

/** The flags as the run's options: pure, so every combination is checked before anything starts. */
export function raceOptionsFrom(flags: MainFlags): RaceOptions {
  const modeGiven = flags.given.includes('--mode');
  const options: RaceOptions = {
    modes: modesWithLibrary(modesWithScript(flags.mode, flags.script, modeGiven), flags.lib, modeGiven),
    jobs: flags.jobs,
    sweepers: flags.sweepers,
    batch: flags.batch,
    maxStalled: flags.maxStalled,
    stalledBefore: flags.stalledBefore,
    probeDelayMs: flags.probeDelay,
    queue: flags.queue,
    keep: flags.keep,
    json: flags.json,
    expect: flags.expect,
    consequences: {
      faults: flags.fault,
      workers: flags.workers,
      cycles: flags.cycles,
      observe: flags.observe,
      allowServerWide: flags.allowServerWide,
      ...failoverAsked(flags),
    },
    script: flags.script,
    pending: flags.pending,
    maxSweeps: flags.maxSweeps,
    live: flags.live,
    intervalMs: flags.interval,
    jitterMs: flags.jitter,
    processes: flags.processes,
    csv: flags.csv,
    trials: flags.trials,
    latency: latencyAsked(flags),
    library: libraryAsked({ ...flags, modeGiven }),
    ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
  };
  checkRaceOptions(options);
  checkLibraryFlagsGiven(options, flags.given);
  checkFailoverFlags(flags);
  // As the drill's flags without the drill: a flag that would do nothing is refused, not ignored.
  if (flags.allowServerWide && !flags.fault.includes('script-flush'))
    throw usageError('--allow-server-wide: only with --fault script-flush (it lets that fault empty the script cache of a --url server)');
  checkSeedFlags(flags, options.modes);
  if (flags.embeddedCluster !== undefined && flags.url !== undefined) throw usageError('--embedded-cluster starts its own cluster: leave out --url');
  return options;
}

/** `N` or `N:TIMEOUT_MS`, as --wait-replicas takes it. */
function parseWaitReplicas(raw: string): { replicas: number; timeoutMs: number } {
  // As typed, as the numeric flags read theirs: no spaces around the value.
  const match = /^(\d+)(?::(\d+))?$/.exec(raw);
  const replicas = Number(match?.[1]);
  const timeoutMs = match?.[2] === undefined ? LIMITS.waitTimeout.default : Number(match[2]);
  const within = (n: number, limit: { min: number; max: number }): boolean => Number.isSafeInteger(n) && n >= limit.min && n <= limit.max;
  if (!match || !within(replicas, LIMITS.waitReplicas) || !within(timeoutMs, LIMITS.waitTimeout)) {
    throw usageError(
      `--wait-replicas: ${shownValue(raw, /^[\s\d:+.-]{0,24}$/.test(raw))} is not N[:TIMEOUT_MS] with N ${range(LIMITS.waitReplicas)} (the drill has one replica) and TIMEOUT_MS ${range(LIMITS.waitTimeout)}`,
    );
  }
  return { replicas, timeoutMs };
}

function failoverAsked(flags: MainFlags): { failover?: NonNullable<RaceOptions['consequences']>['failover'] } {
  if (!flags.fault.includes('failover')) return {};
  return {
    failover: {
      after: flags.failoverAfter ?? LIMITS.failoverAfter.default,
      calls: flags.failoverCalls ?? LIMITS.failoverCalls.default,
      ...(flags.waitReplicas ? { waitReplicas: flags.waitReplicas } : {}),
      ...(flags.replicaLag ? { replicaLagMs: flags.replicaLag } : {}),
      ...(flags.sentinel ? { sentinel: true } : {}),
    },
  };
}

/** The failover drill's flags need the drill, and the drill its own pair of servers, one queue and the tool's own sweepers. */
function checkFailoverFlags(flags: MainFlags): void {
  const drill = flags.fault.includes('failover');
  if (!drill) {
    const stray =
      flags.failoverAfter !== undefined
        ? '--failover-after'
        : flags.failoverCalls !== undefined
          ? '--failover-calls'
          : flags.waitReplicas
            ? '--wait-replicas'
            : flags.replicaLag !== undefined
              ? '--replica-lag'
              : flags.sentinel
                ? '--sentinel'
                : undefined;
    if (stray) throw usageError(`${stray}: only with --fault failover (it schedules the failover drill)`);
    return;
  }
  if (flags.url !== undefined) throw usageError('--fault failover starts its own primary and replica: it runs on the embedded server only; leave out --url');
  if (flags.cluster || flags.embeddedCluster !== undefined)
    throw usageError('--fault failover does not run on a cluster: leave out --cluster and --embedded-cluster');
  if (flags.queues > 1) throw usageError('--fault failover drills one queue at a time: leave out --queues');
  if (flags.latency !== undefined) throw usageError('--fault failover cannot go with --latency: drop one or the other');
  if (flags.lib !== undefined) throw usageError("--fault failover races the tool's own modes: leave out --lib");
}

/**
 * --seed orders every command of the race's own sweepers; what runs beside them on timers or in
 * other processes, or through a library's own clients, it cannot order, and the run would not be
 * the same run again. --shrink and --export-test start from a seeded run, and replay the loop.
 */
function checkSeedFlags(flags: MainFlags, modes: readonly Mode[]): void {
  const shrinking = flags.shrink ? '--shrink' : flags.exportTest !== undefined ? '--export-test' : undefined;
  if (flags.seed === undefined) {
    if (shrinking) throw usageError(`${shrinking}: only with --seed (it shrinks what the seeded run found)`);
    return;
  }
  const timers = flags.fault.length > 0 ? '--fault' : flags.workers > 0 ? '--workers' : flags.cycles > 1 ? '--cycles' : flags.observe ? '--observe' : undefined;
  if (timers) throw usageError(`--seed cannot go with ${timers}: it runs beside the sweepers on its own clock, which no seed orders`);
  if (flags.processes) throw usageError('--seed orders the sweepers of this process, one command at a time: leave out --processes');
  if (flags.trials !== undefined) throw usageError('--seed makes every trial the same run: leave out --trials (or run several seeds)');
  if (flags.queues > 1 || flags.embeddedCluster !== undefined) throw usageError('--seed orders one queue per mode: leave out --queues and --embedded-cluster');
  const library = modes.find((mode) => STRATEGIES[mode].library !== undefined);
  if (library) throw usageError(`--seed orders the tool's own sweepers; ${library} runs the library's own clients: leave out --lib`);
  if (shrinking && !modes.some((mode) => replayOf(mode) === 'loop')) {
    throw usageError(`${shrinking}: the witness is replayed step by step by explain, which only the loop has: add --mode loop`);
  }
  // explain's loop pushes with RPUSH: a witness shrunk on another pending would be one the raced run never sent.
  if (shrinking && flags.pending !== 'list') {
    throw usageError(`${shrinking}: the witness is replayed by explain, whose loop pushes onto a list: leave out --pending ${flags.pending}`);
  }
}

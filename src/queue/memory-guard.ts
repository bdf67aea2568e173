/**
 * The memory guard: before a run writes to a server with a memory limit, it checks that
 * everything the run will hold there at once fits below `maxmemory`. Under an `allkeys-*` policy
 * a run that does not fit would not fail: the server would quietly evict other people's keys to
 * make room (under `volatile-*`, those with a TTL); under `noeviction` the seeding would stop
 * halfway with OOM. So a run that would not fit is refused before anything is written (exit 2).
 *
 * What one job costs is not guessed: a throwaway, claimed queue is seeded with a slice of jobs by
 * the run's own seeding script, its pending and dead sets are filled the way the sweeps fill them,
 * and MEMORY USAGE reads what each kind of key costs on this very server; then the slice is
 * deleted. Those costs are scaled to every queue that runs at once (see peakFootprint), with the
 * connections, the server's per-command bookkeeping and a margin on top.
 *
 * A queue library's run (--lib) writes the library's keys, not the model queue's: it is weighed
 * by the library's own layout (its mode's traits, measured on real runs: libraries/table.ts), and
 * a plan made only of such runs writes no slice at all.
 */
import type { Redis } from 'ioredis';
import { busyAdviceGiven, describeServerError, EmqError, ExitCode, serverError, usageError } from '../shared/errors.js';
import { NO_CONSEQUENCES, type JobsFlag, type Mode, type ModeRun, type PendingKind } from '../shared/model.js';
import { serverTimeMs } from '../server/clock.js';
import { parseMemoryInfo, roomLeft, type MemoryInfo } from '../server/memory-check.js';
import { queueKeys, type QueueKeys } from './keys.js';
import { claimQueue, releaseClaim } from './owner-claim.js';
import { newOwnerMarker } from './owner-marker.js';
import { seedJobs } from './seed.js';
import { keysLeftHint, leftBehindHint } from './cleanup.js';
import type { Interrupts } from '../shared/interrupt.js';
import { plural } from '../shared/text.js';

/** Jobs in the measuring slice: enough for the sorted sets to take their large encoding (above 128). */
const PROBE_JOBS = 1000;
/**
 * Per connection the run opens (sweepers, workers, observer, re-leaser, chaos, a queue's admin):
 * CLIENT LIST shows tot-mem 37,632 bytes for an idle sweeper connection on Redis 7.0.15 (a 16 kB
 * reply buffer and a 20 kB query buffer), rounded up.
 */
export const BYTES_PER_CONNECTION = 40 * 1024;
/**
 * Each command a server runs for the first time gets a latency histogram (latency-tracking, on by
 * default since Redis 7), kept until CONFIG RESETSTAT: 23,360 bytes a command on Redis 7.0.15 and
 * 23,906 on Valkey 8.0.1 (used_memory after a run on a fresh server, over the commands INFO
 * latencystats then lists), rounded up.
 */
export const BYTES_PER_NEW_COMMAND = 24 * 1024;
/**
 * MEMORY USAGE counts a key's own memory but not its slot in the keyspace's hash table (8 bytes,
 * up to twice that right after the table doubled, and both tables while it rehashes).
 */
export const KEYSPACE_SLOT_BYTES = 16;
/**
 * A job's member moves from `active` into `pending` or `dead`; the table of `active` does not
 * shrink while the sweeps empty it, and a growing set briefly holds two tables while it rehashes.
 * Per job, over the one table the measured slice already counts.
 */
export const SET_TABLE_BYTES = 24;
/** The run's scripts in the server's script cache and the function library: a generous bound. */
export const SCRIPT_CACHE_BYTES = 64 * 1024;
/** An upper bound of what the measuring slice costs a job while it stands: hash, active, pending, dead and a list entry. */
const PROBE_BYTES_PER_JOB = 600;
/** Over the whole estimate: what the measurement cannot see (allocator rounding, client buffers at a peak). */
export const MARGIN = 0.1;

/** What each kind of data costs on the server, in bytes, as measured on a slice of jobs. */
export interface DataCosts {
  /** One job's hash with its key, in its largest form (state `pending`, the highest stall count, `runs`). */
  readonly hash: number;
  /** A member of `active`. */
  readonly active: number;
  /** An entry of `pending`, a list or a sorted set as --pending says. */
  readonly pending: number;
  /** A member of `dead`. */
  readonly dead: number;
  /** An entry of a list: duplicates the loop pushes, and `running`. */
  readonly listEntry: number;
}

/** What the measuring slice must look like to stand for the run. */
export interface ProbeShape {
  readonly pending: PendingKind;
  /** The highest job id any queue of the run gets: the slice takes the ids just below it, so its keys and members are as long. */
  readonly lastId: number;
  readonly maxStalled: number;
}

/**
 * Seeds a slice in a throwaway queue `probeQueue` (claimed like any run's, so nobody's keys are
 * touched), fills `pending` and `dead` with its ids, reads MEMORY USAGE of each kind of key, and
 * deletes the slice, whatever happens.
 */
async function measureDataCosts(
  redis: Redis,
  probeQueue: string,
  shape: ProbeShape,
  where: string,
  interrupts?: Pick<Interrupts, 'signal' | 'owe'>,
): Promise<DataCosts> {
  const signal = interrupts?.signal;
  const keys = queueKeys(probeQueue);
  const count = Math.max(1, Math.min(PROBE_JOBS, shape.lastId));
  const firstId = shape.lastId - count + 1;
  const marker = newOwnerMarker(`probe-${probeQueue}`, shape.lastId);
  const claim = await claimQueue(redis, keys, marker, where, signal).catch((err: unknown) => {
    // A queue the user never named: the refusal says whose it is and why it has that name.
    if (err instanceof EmqError && err.exitCode === ExitCode.usage) {
      throw usageError(`the memory guard measures what a job costs in a throwaway queue named after the run's, ${probeQueue}: ${err.message}`);
    }
    throw err;
  });
  // From here the slice holds keys: a third signal names the line that removes them, as a run's does.
  const settle = interrupts?.owe(leftBehindHint(probeQueue)) ?? (() => undefined);
  let failure: unknown;
  try {
    await seedJobs(redis, keys, { jobs: count, firstId, runId: marker.run, stalledBefore: 0, serverNowMs: await serverTimeMs(redis) }, signal);
    const ids = Array.from({ length: count }, (_, i) => String(firstId + i));
    for (const chunk of chunks(ids, 1000)) {
      signal?.throwIfAborted();
      const scored = chunk.flatMap((id) => ['0', id]);
      await (shape.pending === 'zset' ? redis.zadd(keys.pending, ...scored) : redis.rpush(keys.pending, ...chunk));
      await redis.zadd(keys.dead, ...scored);
      await redis.rpush(keys.running, ...chunk);
    }
    // A few hashes in their largest form: the longest state, the highest stall count, a run count.
    const samples = [...new Set([ids[0], ids[Math.floor(count / 2)], ids[count - 1]])].filter((id): id is string => id !== undefined);
    for (const id of samples) await redis.hset(keys.job(id), 'state', 'pending', 'stalled', String(shape.maxStalled), 'runs', '99');
    const usage = async (key: string): Promise<number> => Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    const hashes = await Promise.all(samples.map((id) => usage(keys.job(id))));
    return {
      hash: Math.max(...hashes),
      active: (await usage(keys.active)) / count,
      pending: (await usage(keys.pending)) / count,
      dead: (await usage(keys.dead)) / count,
      listEntry: (await usage(keys.running)) / count,
    };
  } catch (err) {
    // In words already, so that the hint added below survives: measureSlice's own wording would make a new line.
    failure = memoryUsageRefusal(err, where) ?? describeServerError(err, where);
    throw failure;
  } finally {
    // The slice may remain: the line says how to remove it. A removal that fails after the
    // measuring failed (a signal, a lost server) must not hide why the measuring failed.
    await removeProbe(redis, keys, firstId, shape.lastId, claim.value).then(settle, (err: unknown) => {
      const hint = `; ${keysLeftHint(probeQueue, err, busyAdviceGiven(failure))}`;
      if (failure instanceof Error) failure.message += hint;
      else {
        const described = describeServerError(err, where);
        described.message += hint;
        throw described;
      }
    });
  }
}

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let at = 0; at < items.length; at += size) yield items.slice(at, at + size);
}

/** Deletes the slice by name, the owner marker last (so `clean` can finish a probe cut short). */
async function removeProbe(redis: Redis, keys: QueueKeys, firstId: number, lastId: number, owner: string): Promise<void> {
  const names = [keys.active, keys.pending, keys.dead, keys.running, keys.heartbeat];
  for (let id = firstId; id <= lastId; id++) names.push(keys.job(id));
  for (const chunk of chunks(names, 1000)) await redis.unlink(...chunk);
  await releaseClaim(redis, keys, owner);
}

/** A user without MEMORY USAGE: the guard cannot measure, and says what to grant. */
function memoryUsageRefusal(err: unknown, where: string): Error | undefined {
  const e = err as { message?: string; command?: { name?: string } };
  if (!/^NOPERM/.test(String(e?.message)) || e?.command?.name?.toLowerCase() !== 'memory') return undefined;
  // Worded as every other refusal is (describeServerError): the server, then the command.
  return serverError(
    `permission denied on ${where} (MEMORY USAGE): on a server with a maxmemory the run measures what its keys will cost before it writes them; grant it with ACL SETUSER <user> +memory|usage (see "Least privilege" in docs/shared-servers.md)`,
  );
}

/** Connections one queue's run opens besides the session's: its sweepers and everything around them (a library's clients), and its admin. */
export function connectionsOf(run: ModeRun, traits?: TraitsOf): number {
  const layout = traits?.(run.mode).layout;
  if (layout) return run.sweepers * layout.connectionsPerCaller + layout.seedConnections + 1;
  const c = run.consequences ?? NO_CONSEQUENCES;
  return run.sweepers + c.workers + (c.observe ? 1 : 0) + (c.cycles > 1 ? 1 : 0) + (c.faults.length > 0 ? 1 : 0) + 1;
}

/**
 * What a queue library's run holds on the server (src/libraries/table.ts): the library writes its
 * own keys, not the model queue's, so its costs are its own, measured on real runs of the library
 * (each figure says how), not on the measuring slice.
 */
export interface LibraryLayout {
  /** The library, for the refusal's words. */
  readonly library: string;
  /** Bytes one job holds at the run's peak, its keys, their keyspace slots and its one recovery counted. */
  readonly bytesPerJob: number;
  /** Bytes each further recovery of a job adds: a mode that races pushes a job once per caller. */
  readonly bytesPerDuplicate: number;
  /** Whether the mode may recover a job once per caller (its own recovery or port races by design). */
  readonly pushesTwice: boolean;
  /** Connections each caller opens. */
  readonly connectionsPerCaller: number;
  /** Connections the seeding opens besides the callers' (its queue, its workers). */
  readonly seedConnections: number;
  /** Bytes of the library's Lua scripts in the server's script cache, beyond the tool's own (SCRIPT_CACHE_BYTES). */
  readonly scriptBytes: number;
  /** With `--fault lapsed-lock`: the job's bytes when a live worker's jobs run again and finish. */
  readonly lapsedLock?: { readonly bytesPerJob: number; readonly bytesPerDuplicate: number };
}

/** A library run's bytes a job and a duplicate: its lapsed-lock figures when the run has that fault. */
function layoutCosts(run: ModeRun, layout: LibraryLayout): { readonly bytesPerJob: number; readonly bytesPerDuplicate: number } {
  return (run.consequences?.faults.includes('lapsed-lock') ? layout.lapsedLock : undefined) ?? layout;
}

/**
 * What the memory check needs of a mode's strategy. The strategies' table (sweepers/strategies.ts,
 * a layer above) has it for every mode and is handed in by the caller, so no mode is named here.
 */
export interface MemoryTraits {
  /** Its sweeps may push one job into a list `pending` more than once (the loop; a user's script may do anything). */
  readonly pushesTwice: boolean;
  /** Server commands it sends beyond every run's (BASE_COMMANDS). */
  readonly commands: readonly string[];
  /** A queue library's mode: its own layout, in place of the costs measured on the slice. */
  readonly layout?: LibraryLayout;
}

export type TraitsOf = (mode: Mode) => MemoryTraits;

/**
 * The bytes one queue's run holds at its peak. Every job keeps its hash all run long, and its id
 * sits in exactly one of active, pending and dead at any moment (every strategy removes before it
 * pushes), so a job costs its hash and the dearest of the three. On top: the entries a racing
 * loop pushes twice (at most one per other sweeper, per cycle), `running` (at most one job per
 * worker), and the four containers' own overhead.
 */
export function queueFootprint(run: ModeRun, costs: DataCosts, traits: TraitsOf): number {
  const layout = traits(run.mode).layout;
  if (layout) {
    const { bytesPerJob, bytesPerDuplicate } = layoutCosts(run, layout);
    return run.jobs * bytesPerJob + (layout.pushesTwice ? run.jobs * (run.sweepers - 1) * bytesPerDuplicate : 0) + 4 * 1024;
  }
  const c = run.consequences ?? NO_CONSEQUENCES;
  const tracked = run.jobs + (run.live ?? 0);
  const member = Math.max(costs.active, costs.pending, costs.dead) + SET_TABLE_BYTES;
  const duplicates = (run.pending ?? 'list') === 'list' && traits(run.mode).pushesTwice ? run.jobs * (run.sweepers - 1) * c.cycles : 0;
  return tracked * (costs.hash + KEYSPACE_SLOT_BYTES + member) + (duplicates + c.workers) * costs.listEntry + 4 * 1024;
}

/** One moment of a run on one server: every queue's run alive there at once. */
export type Moment = readonly ModeRun[];

export interface Footprint {
  /** Bytes at the dearest moment, margin included. */
  readonly bytes: number;
  /** Job data at that moment (without margin), for the message. */
  readonly data: number;
  /** The moment itself. */
  readonly moment: Moment;
  readonly connections: number;
  /** Commands the run sends that this server has not seen yet (each costs a latency histogram). */
  readonly newCommands: number;
  /** The library whose own layout the moment's dearest run has, and its bytes a job there (for the message); none for the model queue's. */
  readonly layout?: { readonly library: string; readonly bytesPerJob: number };
  /**
   * Every moment's bytes (margin included) and what sets its dearest run's jobs, in a refusal's
   * words (`--loop-jobs`, `the values of --vary jobs`): what a refusal tells the user to lower is
   * that of every moment that does not fit, since lowering --loop-jobs alone leaves a mode on
   * --jobs (a library's own, atomic) as large as it was.
   */
  readonly moments: readonly { readonly bytes: number; readonly lower: string }[];
}

/** The dearest of `moments` on one server, with connections, new commands' bookkeeping and the margin. */
export function peakFootprint(moments: readonly Moment[], costs: DataCosts, newCommands: number, traits: TraitsOf): Footprint {
  let peak: Footprint | undefined;
  const each: { bytes: number; lower: string }[] = [];
  for (const moment of moments) {
    const data = moment.reduce((sum, run) => sum + queueFootprint(run, costs, traits), 0);
    const connections = moment.reduce((sum, run) => sum + connectionsOf(run, traits), 0);
    const libraryScripts = Math.max(0, ...moment.map((run) => traits(run.mode).layout?.scriptBytes ?? 0));
    const fixed = connections * BYTES_PER_CONNECTION + newCommands * BYTES_PER_NEW_COMMAND + SCRIPT_CACHE_BYTES + libraryScripts;
    const bytes = Math.ceil((data + fixed) * (1 + MARGIN));
    const dearest = dearestRun(moment);
    const layout = dearest ? traits(dearest.mode).layout : undefined;
    const perJob = dearest && layout ? { layout: { library: layout.library, bytesPerJob: layoutCosts(dearest, layout).bytesPerJob } } : {};
    if (dearest) each.push({ bytes, lower: toLower(dearest) });
    if (!peak || bytes > peak.bytes) peak = { bytes, data, moment, connections, newCommands, ...perJob, moments: each };
  }
  // Every peak holds `each` itself, which by now has every moment.
  return peak ?? { bytes: 0, data: 0, moment: [], connections: 0, newCommands, moments: [] };
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** The run of a moment with the most jobs. */
function dearestRun(moment: Moment): ModeRun | undefined {
  return moment.reduce<ModeRun | undefined>((best, run) => (!best || run.jobs + (run.live ?? 0) > best.jobs + (best.live ?? 0) ? run : best), undefined);
}

/**
 * `--jobs 6000 (with 600 live jobs)`, or `4 queues side by side of --jobs 6000 …`: the dearest
 * moment in the user's words, its jobs named by the flag that set them (`--loop-jobs` for a
 * round-trip mode that it cut below --jobs; a grid's axis, `--vary jobs`, where one did).
 */
function describeMoment(moment: Moment, library: boolean): string {
  const dearest = dearestRun(moment);
  if (!dearest) return 'the run';
  // A library's run seeds no live jobs of the model queue's.
  const live = library ? 0 : (dearest.live ?? 0);
  const { flag, axis } = jobsFlagOf(dearest);
  // A grid's axis holds several values: the cell's is named with it.
  const jobs = axis ? `${dearest.jobs} jobs (--vary ${flag})` : `--${flag} ${dearest.jobs}`;
  const one = `${jobs}${live > 0 ? ` (with ${live} live jobs)` : ''}${dearest.pending === 'zset' ? ' with --pending zset' : ''}`;
  if (keptBeside(moment)) {
    const modes = [...new Set(moment.map((run) => run.mode))].join(', ');
    return `${moment.length} queues on the server at once with --keep, the earlier modes' and trials' kept beside the last (${modes}), the largest ${one},`;
  }
  return moment.length > 1 ? `${moment.length} queues side by side (${dearest.mode}), each ${one},` : `${dearest.mode} on ${one}`;
}

/** How many queues each step of a moment (one mode's trial) holds. */
function queuesPerStep(moment: Moment): number[] {
  const counts = new Map<string, number>();
  for (const run of moment) {
    const step = `${run.mode} ${run.trial ?? 1}`;
    counts.set(step, (counts.get(step) ?? 0) + 1);
  }
  return [...counts.values()];
}

/** Whether a moment holds queues kept (--keep) from steps before its own: runs of more than one mode or trial. */
function keptBeside(moment: Moment): boolean {
  return queuesPerStep(moment).length > 1;
}

/** What to lower: what sets the jobs of every moment that does not fit in `room` (the dearest among them). */
function remedyFlags(footprint: Footprint, room: number): string {
  return [...new Set(footprint.moments.filter((moment) => moment.bytes > room).map((moment) => moment.lower))].sort().join(' and ');
}

/** The flag that set a run's jobs. */
function jobsFlagOf(run: ModeRun): JobsFlag {
  return run.jobsFlag ?? { flag: 'jobs', axis: false };
}

/** What a refusal tells the user to lower for a run's jobs: its flag, or the values of the grid's axis. */
function toLower(run: ModeRun): string {
  const { flag, axis } = jobsFlagOf(run);
  return axis ? `the values of --vary ${flag}` : `--${flag}`;
}

/** How a refusal names what would not fit and what to do, for a command whose flags are not the race's (explain). */
export interface RefusalWords {
  /** What needs the room, in place of the dearest moment's flags. */
  readonly subject: string;
  /** What to do instead, after "Refusing, nothing written: ". */
  readonly remedy: string;
}

/** Why the run must not start on this server, or undefined when it fits (or nothing limits it). */
export function footprintProblem(memory: MemoryInfo, footprint: Footprint, costs: DataCosts, where: string, words?: RefusalWords): string | undefined {
  if (!(memory.maxMemory > 0)) return undefined;
  const room = roomLeft(memory);
  if (footprint.bytes <= room) return undefined;
  const perJob = footprint.layout
    ? `${footprint.layout.bytesPerJob} bytes a job in ${footprint.layout.library}'s own layout`
    : `${Math.round(costs.hash + KEYSPACE_SLOT_BYTES + Math.max(costs.active, costs.pending, costs.dead) + SET_TABLE_BYTES)} bytes a job as measured there`;
  const what =
    `${words?.subject ?? describeMoment(footprint.moment, footprint.layout !== undefined)} needs about ${mb(footprint.bytes)} on the server at ${where} at its peak ` +
    `(${mb(footprint.data)} of job data at ${perJob}, ${plural(footprint.connections, 'connection')}, ` +
    `${plural(footprint.newCommands, 'command')} new to the server, and a ${MARGIN * 100}% margin), ` +
    `but only ${mb(Math.max(0, room))} is left below its maxmemory of ${mb(memory.maxMemory)}`;
  let consequence: string;
  if (memory.policy.startsWith('allkeys-')) consequence = `under maxmemory-policy ${memory.policy} the server would evict other keys (yours) to make room`;
  else if (memory.policy.startsWith('volatile-'))
    consequence = `under maxmemory-policy ${memory.policy} the server would evict keys that have a TTL to make room`;
  else consequence = `under maxmemory-policy ${memory.policy} the seeding would fail halfway with OOM`;
  const queues = Math.max(...queuesPerStep(footprint.moment)) > 1 ? ' or --queues' : '';
  const fewer = keptBeside(footprint.moment) ? ', race fewer modes or --trials, or leave out --keep' : '';
  return `${what}; ${consequence}. Refusing, nothing written: ${words?.remedy ?? `lower ${remedyFlags(footprint, room)}${queues}${fewer}, or use a server with more room`}`;
}

/** Commands every run may send, whatever its flags (the README's least-privilege list, with QUIT). */
const BASE_COMMANDS = [
  'info',
  'time',
  'scan',
  'set',
  'get',
  'del',
  'unlink',
  'eval',
  'evalsha',
  'script|load',
  'hset',
  'hget',
  'hmget',
  'hincrby',
  'zadd',
  'zrem',
  'zremrangebyrank',
  'zscore',
  'zrange',
  'zrangebyscore',
  'rpush',
  'lrem',
  'lrange',
  'llen',
  'zcard',
  'quit',
  'memory|usage',
];

/** Every command `runs` may send: what a new latency histogram may be made for. */
export function commandsOf(runs: readonly ModeRun[], traits: TraitsOf): Set<string> {
  const commands = new Set(BASE_COMMANDS);
  for (const run of runs) {
    const c = run.consequences ?? NO_CONSEQUENCES;
    for (const command of traits(run.mode).commands) commands.add(command);
    if (c.workers > 0) for (const command of ['lmove', 'lrem', 'multi', 'exec', 'zpopmin']) commands.add(command);
    if (c.cycles > 1) for (const command of ['zcount', 'lindex', 'lrem', 'lmove']) commands.add(command);
    if (c.observe) commands.add('lpos');
    if (run.serverStats) commands.add('latency|histogram');
    if (c.faults.includes('script-flush')) commands.add('script|flush');
    if (c.faults.includes('client-kill')) for (const command of ['client|id', 'client|kill']) commands.add(command);
  }
  return commands;
}

/** Commands INFO latencystats lists (they have their histogram already); undefined when the server keeps none. */
export function trackedCommands(latencystats: string): Set<string> | undefined {
  const names = [...latencystats.matchAll(/^latency_percentiles_usec_([^:]+):/gm)].map((m) => m[1] ?? '');
  return names.length > 0 ? new Set(names) : undefined;
}

/** One server the run uses, and what lives on it at each moment of the plan. */
export interface ServerLoad {
  /** The redacted address, for the message. */
  readonly where: string;
  readonly redis: Redis;
  readonly moments: readonly Moment[];
  /** A queue name, free for the run to claim, whose keys land on this server (a cluster's slot). */
  readonly probeQueue: string;
}

/**
 * Refuses (exit 2, nothing written) when the run would not fit on any server it uses. Servers
 * without a maxmemory are not measured, and nothing is written to them. The slice is measured once,
 * on the first server with a limit, and its costs stand for every server of the run.
 */
export async function checkRunMemory(
  loads: readonly ServerLoad[],
  traits: TraitsOf,
  interrupts?: Pick<Interrupts, 'signal' | 'owe'>,
  words?: RefusalWords,
): Promise<void> {
  const limited: ServerLoad[] = [];
  for (const load of loads) {
    const memory = parseMemoryInfo(await load.redis.info('memory').catch((err: unknown) => Promise.reject(describeServerError(err, load.where))));
    if (memory.maxMemory > 0) limited.push(load);
  }
  const [first] = limited;
  if (!first) return;
  const firstMemory = parseMemoryInfo(await first.redis.info('memory'));
  const runs = limited.flatMap((load) => load.moments.flat());
  // Runs of queue libraries only: their own layouts say what they cost, and no slice is written.
  const costs = runs.every((run) => traits(run.mode).layout) ? NO_COSTS : await measureSlice(first, firstMemory, runs, interrupts);
  for (const load of limited) {
    // Read after the slice is gone: what the measuring itself left (its commands' histograms) is counted once, there.
    const [memoryInfo, latency] = await Promise.all([load.redis.info('memory'), load.redis.info('latencystats').catch(() => '')]).catch((err: unknown) =>
      Promise.reject(describeServerError(err, load.where)),
    );
    const seen = trackedCommands(latency);
    const newCommands = seen ? [...commandsOf(load.moments.flat(), traits)].filter((command) => !seen.has(command)).length : 0;
    const problem = footprintProblem(parseMemoryInfo(memoryInfo), peakFootprint(load.moments, costs, newCommands, traits), costs, load.where, words);
    if (problem) throw usageError(problem);
  }
}

/** The costs of a run with no job of the model queue's. */
const NO_COSTS: DataCosts = { hash: 0, active: 0, pending: 0, dead: 0, listEntry: 0 };

/** The model queue's costs, measured on a slice seeded on the first server with a limit (refused when not even the slice fits). */
async function measureSlice(
  first: ServerLoad,
  firstMemory: MemoryInfo,
  runs: readonly ModeRun[],
  interrupts?: Pick<Interrupts, 'signal' | 'owe'>,
): Promise<DataCosts> {
  const shape: ProbeShape = {
    pending: runs[0]?.pending ?? 'list',
    lastId: Math.max(1, ...runs.map((run) => run.jobs + (run.live ?? 0))),
    maxStalled: Math.max(1, ...runs.map((run) => run.maxStalled)),
  };
  // The slice must not be what evicts: it holds each id in four places, a few hundred bytes a job.
  const tracked = trackedCommands(await first.redis.info('latencystats').catch(() => ''));
  const probeBytes =
    Math.min(PROBE_JOBS, shape.lastId) * PROBE_BYTES_PER_JOB +
    (tracked ? BASE_COMMANDS.filter((c) => !tracked.has(c)).length : BASE_COMMANDS.length) * BYTES_PER_NEW_COMMAND;
  if (probeBytes > roomLeft(firstMemory)) {
    throw usageError(
      `only ${mb(Math.max(0, roomLeft(firstMemory)))} is left below the maxmemory of ${mb(firstMemory.maxMemory)} on the server at ${first.where} (maxmemory-policy ${firstMemory.policy}): ` +
        `not even the slice of ${plural(Math.min(PROBE_JOBS, shape.lastId), 'job')} that measures what a job costs fits there (about ${mb(probeBytes)}), and the run needs more. Refusing, nothing written: use a server with more room`,
    );
  }
  return await measureDataCosts(first.redis, first.probeQueue, shape, first.where, interrupts).catch((err: unknown) =>
    Promise.reject(describeServerError(err, first.where)),
  );
}

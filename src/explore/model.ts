/**
 * A small model of each strategy on one job, to predict what two sweeps leave whatever the order of
 * their round trips: each sweep is a generator that yields the name of the command it sends next
 * and, once let through, applies that command's effect to the shared job. It follows the strategy's
 * own code (sweepers/), command for command, so the exploration can set every run on the server
 * against the model's prediction for the same order. Pure.
 */
import type { Mode } from '../shared/model.js';
import { EXPLORE_SWEEPS, defaultTurn, type ExploreSweep, type TraceTurn } from './conductor.js';
import { allSchedules, boundedSchedules, search, turnsPerSweep, type Explored, type Turns } from './search.js';
import type { JobFacts } from './outcome.js';

/** The job as the model holds it: one id in active, pending and dead, its hash, and WATCH's view of it. */
interface ModelJob {
  inActive: boolean;
  pending: number;
  inDead: boolean;
  stalled: number;
  state: string;
  /** Times active and the hash were modified: a WATCH on them fails its EXEC when either moved on. */
  activeVersion: number;
  hashVersion: number;
}

export interface ModelOptions {
  readonly stalledBefore: number;
  readonly maxStalled: number;
}

/** A sweep: yields each command's name before it is sent; returns how many moves it records. */
type ModelSweep = Generator<string, number, void>;

function* loop(job: ModelJob, options: ModelOptions): ModelSweep {
  yield 'zrangebyscore';
  if (!job.inActive) return 0;
  yield 'zscore';
  if (!job.inActive) return 0;
  yield 'zrem';
  job.inActive = false;
  yield 'rpush';
  job.pending++;
  yield 'hget';
  const read = job.stalled;
  yield 'hset';
  job.stalled = read + 1;
  job.state = 'pending';
  if (read + 1 >= options.maxStalled) {
    yield 'lrem';
    if (job.pending > 0) job.pending--;
    yield 'zadd';
    job.inDead = true;
    yield 'hset';
    job.state = 'dead';
  }
  return 1;
}

function* claim(job: ModelJob, options: ModelOptions): ModelSweep {
  yield 'zrangebyscore';
  if (!job.inActive) return 0;
  yield 'zscore';
  if (!job.inActive) return 0;
  yield 'zrem';
  const removed = job.inActive;
  job.inActive = false;
  if (!removed) return 0;
  yield 'hincrby';
  job.stalled++;
  const dead = job.stalled >= options.maxStalled;
  yield dead ? 'zadd' : 'rpush';
  if (dead) job.inDead = true;
  else job.pending++;
  yield 'hset';
  job.state = dead ? 'dead' : 'pending';
  return 1;
}

function* watch(job: ModelJob, options: ModelOptions): ModelSweep {
  yield 'zrangebyscore';
  if (!job.inActive) return 0;
  for (;;) {
    yield 'watch';
    const seen = { active: job.activeVersion, hash: job.hashVersion };
    yield 'zscore';
    if (!job.inActive) {
      yield 'unwatch';
      return 0;
    }
    yield 'hget';
    const read = job.stalled;
    const dead = read + 1 >= options.maxStalled;
    // MULTI, ZREM, the push, HSET, EXEC: one round trip, refused whole when a watched key changed.
    yield 'exec';
    if (job.activeVersion !== seen.active || job.hashVersion !== seen.hash) continue;
    job.inActive = false;
    job.activeVersion++;
    if (dead) job.inDead = true;
    else job.pending++;
    job.stalled = read + 1;
    job.state = dead ? 'dead' : 'pending';
    job.hashVersion++;
    return 1;
  }
}

/** The atomic sweep, as a script or a function: the whole sweep in one call the server runs alone. */
function oneCall(label: string): (job: ModelJob, options: ModelOptions) => ModelSweep {
  return function* (job, options) {
    yield label;
    if (!job.inActive) return 0;
    job.inActive = false;
    job.stalled++;
    const dead = job.stalled >= options.maxStalled;
    if (dead) job.inDead = true;
    else job.pending++;
    job.state = dead ? 'dead' : 'pending';
    return 1;
  };
}

const MODELS: Partial<Readonly<Record<Mode, (job: ModelJob, options: ModelOptions) => ModelSweep>>> = {
  loop,
  claim,
  watch,
  atomic: oneCall('evalsha'),
  function: oneCall('fcall'),
};

/** The modes the model knows, in the strategy table's order: those explore can run. */
export function modelledModes(all: readonly Mode[]): Mode[] {
  return all.filter((mode) => MODELS[mode] !== undefined);
}

export interface ModelRun {
  readonly trace: TraceTurn[];
  readonly facts: JobFacts;
  readonly moves: number;
}

/**
 * Two sweeps A and B of `mode` (or `sweeps` of them: A, B, C) on a fresh job, the turns given to
 * `choices` first and then as the conductor gives them on the server (`defaultTurn`).
 */
export function modelRun(mode: Mode, options: ModelOptions, choices: readonly ExploreSweep[], sweeps = 2): ModelRun {
  const model = MODELS[mode];
  if (!model) throw new Error(`no model of ${mode}`);
  const job: ModelJob = { inActive: true, pending: 0, inDead: false, stalled: options.stalledBefore, state: 'active', activeVersion: 0, hashVersion: 0 };
  const names: ExploreSweep[] = EXPLORE_SWEEPS.slice(0, sweeps);
  const generators = names.map(() => model(job, options));
  const next = generators.map((sweep) => sweep.next());
  const trace: TraceTurn[] = [];
  let moves = 0;
  for (;;) {
    const live = names.filter((_, i) => !next[i]?.done);
    if (live.length === 0) break;
    const forced = choices[trace.length];
    if (forced !== undefined && !live.includes(forced)) throw new Error(`the schedule gives turn ${trace.length + 1} to ${forced}, which has stopped`);
    const sweep = forced ?? defaultTurn(live, trace.at(-1)?.sweep);
    const i = names.indexOf(sweep);
    trace.push({ sweep, label: String(next[i]?.value), runnable: live });
    const step = (generators[i] as ModelSweep).next();
    next[i] = step;
    if (step.done) moves += step.value;
  }
  return {
    trace,
    moves,
    facts: {
      pendingEntries: job.pending,
      inActive: job.inActive,
      activeExpired: job.inActive,
      inDead: job.inDead,
      stalled: job.stalled,
      state: job.state,
    },
  };
}

/**
 * What an exploration will run, known before the server is touched: the model searched as the
 * server will be (the same choices, the same bound), its executions and the schedules they make.
 * With `atMost`, the search stops as soon as the schedules are sure to be more than that
 * (`schedules` is then null): the schedules of the turns seen so far only grow as the search goes
 * on, and a large bound makes millions of executions, which would take minutes and gigabytes to list.
 */
export async function plannedExploration(
  mode: Mode,
  options: ModelOptions,
  sweeps: number,
  maxSwitches: number | undefined,
  atMost = Number.POSITIVE_INFINITY,
): Promise<{ executions: number; schedules: number | null }> {
  const names = EXPLORE_SWEEPS.slice(0, sweeps);
  const schedulesOf = (turns: Turns): number => (maxSwitches === undefined ? allSchedules(turns) : boundedSchedules(turns, maxSwitches));
  const runs: Explored<null>[] = [];
  // Each sweep's most turns in the executions so far (folded in as they come), and whether their
  // schedules already pass atMost.
  let most: Turns = turnsPerSweep([], names);
  let seen = 0;
  let over = false;
  const fold = (): boolean => {
    const before = most;
    for (; seen < runs.length; seen++) {
      const one = turnsPerSweep([(runs[seen] as Explored<null>).trace], names);
      for (const name of names) if ((one[name] ?? 0) > (most[name] ?? 0)) most = { ...most, [name]: one[name] };
    }
    return most !== before;
  };
  const enough = (): boolean => {
    if (fold() && atMost !== Number.POSITIVE_INFINITY) over = schedulesOf(most) > atMost;
    return over;
  };
  const { complete } = await search(async (prefix) => ({ trace: modelRun(mode, options, prefix, sweeps).trace, result: null }), enough, maxSwitches, runs);
  if (!complete) return { executions: runs.length, schedules: null };
  fold();
  return { executions: runs.length, schedules: schedulesOf(most) };
}

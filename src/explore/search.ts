/**
 * The exploration itself, over any runner: the server's (explore.ts) or the model's. Depth first:
 * the first run lets the first sweep go on until it stops; every run then opens, at each turn past
 * its forced prefix where more than one sweep waited, the runs where another went instead (those
 * within the preemption bound, when one is given). Each run is one execution, made once. Then the
 * counting: a schedule gives each sweep as many turns as its longest execution took (a sweep that
 * has stopped lets its turns pass), so schedules that differ only in where a stopped sweep's turns
 * pass are one execution. Pure.
 */
import { branchesOf, type ExploreSweep, type TraceTurn } from './conductor.js';

export interface Explored<R> {
  /** The choices the run was forced to make first. */
  readonly prefix: readonly ExploreSweep[];
  readonly trace: readonly TraceTurn[];
  readonly result: R;
}

/** Each sweep's turns in a schedule, for the sweeps of the exploration (A and B, or A, B and C). */
export type Turns = Readonly<Partial<Record<ExploreSweep, number>>>;

/**
 * Every execution, in depth-first order; `stopped` is asked before each run and ends the search
 * early (what was explored is returned, with `complete` false). With `maxPreemptions`, only the
 * executions with at most that many preemptions. `runs` receives each execution as it is made, so
 * that a caller whose run fails still holds what was explored before the failure.
 */
export async function search<R>(
  run: (prefix: readonly ExploreSweep[]) => Promise<{ trace: readonly TraceTurn[]; result: R }>,
  stopped: () => boolean = () => false,
  maxPreemptions = Number.POSITIVE_INFINITY,
  runs: Explored<R>[] = [],
): Promise<{ runs: Explored<R>[]; complete: boolean }> {
  const todo: ExploreSweep[][] = [[]];
  while (todo.length > 0) {
    if (stopped()) return { runs, complete: false };
    const prefix = todo.pop() as ExploreSweep[];
    let made: { trace: readonly TraceTurn[]; result: R };
    try {
      made = await run(prefix);
    } catch (err) {
      // Stopped during a run: that run is not counted, the ones before it are.
      if (stopped()) return { runs, complete: false };
      throw err;
    }
    const { trace, result } = made;
    runs.push({ prefix, trace, result });
    // Pushed last first, so the first branch is explored next: depth first, in order.
    todo.push(...branchesOf(trace, prefix.length, maxPreemptions).reverse());
  }
  return { runs, complete: true };
}

/** Each sweep's turns in its longest execution: the turns a schedule gives it. */
export function turnsPerSweep(traces: readonly (readonly TraceTurn[])[], sweeps: readonly ExploreSweep[] = ['A', 'B']): Turns {
  const most: Partial<Record<ExploreSweep, number>> = {};
  for (const sweep of sweeps) most[sweep] = 0;
  for (const trace of traces) {
    for (const sweep of sweeps) most[sweep] = Math.max(most[sweep] ?? 0, trace.filter((t) => t.sweep === sweep).length);
  }
  return most;
}

export function binomial(n: number, k: number): number {
  let result = 1;
  for (let i = 1; i <= k; i++) result = (result * (n - k + i)) / i;
  return Math.round(result);
}

/** Every schedule of the turns: the ways to interleave the sweeps' turns (a multinomial). */
export function allSchedules(turns: Turns): number {
  let placed = 0;
  let count = 1;
  for (const n of Object.values(turns)) {
    placed += n;
    count *= binomial(placed, n);
  }
  return count;
}

/**
 * A schedule's preemptions: its switches less the one change every sweep but the last makes when
 * its turns run out. So a bound of K preemptions is a bound of K + sweeps − 1 switches.
 */
function switchBound(turns: Turns, maxPreemptions: number): number {
  return maxPreemptions + Object.values(turns).filter((n) => n > 0).length - 1;
}

/**
 * The schedules of the turns with at most `maxPreemptions` preemptions, counted without listing
 * them: the ways to lay out the sweeps' turns in runs, at most K + sweeps − 1 changes of sweep.
 */
export function boundedSchedules(turns: Turns, maxPreemptions: number): number {
  // No turn taken yet: every turn of every sweep goes anywhere, within the bound.
  return schedulesOf([], turns, maxPreemptions);
}

/**
 * The schedules that make this execution: the execution's own turns in its order, with each
 * sweep's remaining turns (those its longest execution took beyond this one's) passing anywhere
 * after it stopped; with a bound, only the schedules within it. Counted by walking the turns, the
 * state being how far along the execution, the idle turns each stopped sweep has still to pass, the
 * sweep of the last turn and the switches so far.
 */
export function schedulesOf(trace: readonly TraceTurn[], turns: Turns, maxPreemptions = Number.POSITIVE_INFINITY): number {
  if (maxPreemptions === Number.POSITIVE_INFINITY) return everySchedulesOf(trace, turns);
  const sweeps = Object.keys(turns) as ExploreSweep[];
  const bound = switchBound(turns, maxPreemptions);
  const lastTurn = sweeps.map((s) => trace.map((t) => t.sweep).lastIndexOf(s));
  const order = trace.map((t) => sweeps.indexOf(t.sweep));
  const memo = new Map<string, number>();
  const count = (at: number, idle: readonly number[], last: number, switches: number): number => {
    if (switches > bound) return 0;
    if (at === order.length && idle.every((n) => n === 0)) return 1;
    const key = `${at}|${idle.join()}|${last}|${switches}`;
    const held = memo.get(key);
    if (held !== undefined) return held;
    const step = (sweep: number) => switches + (last !== -1 && last !== sweep ? 1 : 0);
    let total = at < order.length ? count(at + 1, idle, order[at] as number, step(order[at] as number)) : 0;
    idle.forEach((n, i) => {
      // A sweep's idle turns pass only once its last command has gone.
      if (n > 0 && at > (lastTurn[i] as number)) {
        total += count(
          at,
          idle.map((m, j) => (j === i ? m - 1 : m)),
          i,
          step(i),
        );
      }
    });
    memo.set(key, total);
    return total;
  };
  return count(
    0,
    sweeps.map((s, i) => (turns[s] ?? 0) - order.filter((o) => o === i).length),
    -1,
    0,
  );
}

/**
 * With no bound, the same count in closed form: each sweep's idle turns go anywhere after its last
 * command, among the turns already there. Placed from the sweep that stopped last to the one that
 * stopped first, each sweep's region holds the execution's turns after its last one and the idle
 * turns placed before it, and its own go among them in C(region + idle, idle) ways.
 */
function everySchedulesOf(trace: readonly TraceTurn[], turns: Turns): number {
  const sweeps = (Object.keys(turns) as ExploreSweep[])
    .map((sweep) => ({ last: trace.map((t) => t.sweep).lastIndexOf(sweep), idle: (turns[sweep] ?? 0) - trace.filter((t) => t.sweep === sweep).length }))
    .sort((a, b) => b.last - a.last);
  let placed = 0;
  let count = 1;
  for (const { last, idle } of sweeps) {
    const region = trace.length - 1 - last + placed;
    count *= binomial(region + idle, idle);
    placed += idle;
  }
  return count;
}

/** Context switches: turns that go to the other sweep than the turn before. */
export function switchesOf(trace: readonly TraceTurn[]): number {
  let switches = 0;
  for (let at = 1; at < trace.length; at++) if (trace[at]?.sweep !== trace[at - 1]?.sweep) switches++;
  return switches;
}

export function formatTrace(trace: readonly TraceTurn[]): string {
  return trace.map((t) => `${t.sweep}:${t.label}`).join(',');
}

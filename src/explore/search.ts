/**
 * The exploration itself, over any runner: the server's (explore.ts) or the model's. Depth first:
 * the first run lets the first sweep go whenever both wait; every run then opens, at each turn past
 * its forced prefix where both sweeps waited, the run where the other went instead. Each run is one
 * execution, made once. Then the counting: a schedule gives each sweep as many turns as its longest
 * execution took (a sweep that has stopped lets its turns pass), so schedules that differ only after
 * a sweep has stopped are one execution. Pure.
 */
import type { SweepName } from '../explain/schedule.js';
import { branchesOf, type TraceTurn } from './conductor.js';

export interface Explored<R> {
  /** The choices the run was forced to make first. */
  readonly prefix: readonly SweepName[];
  readonly trace: readonly TraceTurn[];
  readonly result: R;
}

/**
 * Every execution, in depth-first order; `stopped` is asked before each run and ends the search
 * early (what was explored is returned, with `complete` false).
 */
export async function search<R>(
  run: (prefix: readonly SweepName[]) => Promise<{ trace: readonly TraceTurn[]; result: R }>,
  stopped: () => boolean = () => false,
): Promise<{ runs: Explored<R>[]; complete: boolean }> {
  const runs: Explored<R>[] = [];
  const todo: SweepName[][] = [[]];
  while (todo.length > 0) {
    if (stopped()) return { runs, complete: false };
    const prefix = todo.pop() as SweepName[];
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
    todo.push(...branchesOf(trace, prefix.length).reverse());
  }
  return { runs, complete: true };
}

/** Each sweep's turns in its longest execution: the turns a schedule gives it. */
export function turnsPerSweep(traces: readonly (readonly TraceTurn[])[]): Record<SweepName, number> {
  const most: Record<SweepName, number> = { A: 0, B: 0 };
  for (const trace of traces) {
    for (const sweep of ['A', 'B'] as const) most[sweep] = Math.max(most[sweep], trace.filter((t) => t.sweep === sweep).length);
  }
  return most;
}

export function binomial(n: number, k: number): number {
  let result = 1;
  for (let i = 1; i <= k; i++) result = (result * (n - k + i)) / i;
  return Math.round(result);
}

/**
 * The schedules that make this execution: up to the last turn of the sweep that stopped first,
 * the execution's own turns; after it, the stopped sweep's remaining turns pass anywhere among the
 * other's.
 */
export function schedulesOf(trace: readonly TraceTurn[], turns: Record<SweepName, number>): number {
  const last = (sweep: SweepName) => trace.map((t) => t.sweep).lastIndexOf(sweep);
  const first: SweepName = last('A') < last('B') ? 'A' : 'B';
  const other: SweepName = first === 'A' ? 'B' : 'A';
  const upTo = trace.slice(0, last(first) + 1);
  const idle = turns[first] - upTo.filter((t) => t.sweep === first).length;
  const left = turns[other] - upTo.filter((t) => t.sweep === other).length;
  return binomial(idle + left, idle);
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

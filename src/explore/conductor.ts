/**
 * Lets two or three sweeps through one round trip at a time, like explain's turnstile, but chooses
 * the next turn as the run goes rather than from a list made beforehand: a sweep's turns depend on
 * what it sees (a sweep that finds nothing stops). Each sweep asks for a turn before every command
 * it sends and says when it has stopped; once every sweep still running is waiting, the conductor
 * lets one through: the one the forced prefix names at that point, else the sweep that had the last
 * turn while it can go on, else the first in name order — so a run past its prefix never preempts
 * a sweep, and the preemptions of a run are those of its prefix. The trace records, for every turn,
 * who went and who could have, which is all the exploration needs to find the runs it has not made
 * yet. Pure: no I/O.
 */

/** The sweeps of an exploration, in name order: explain's A and B, and a third, C. */
export const EXPLORE_SWEEPS = ['A', 'B', 'C'] as const;
export type ExploreSweep = (typeof EXPLORE_SWEEPS)[number];

export interface TraceTurn {
  readonly sweep: ExploreSweep;
  /** The command the turn sent, in lower case (`zrem`, `evalsha`, `exec` for a MULTI/EXEC). */
  readonly label: string;
  /** The sweeps waiting for a turn at that point: more than one where another order was possible. */
  readonly runnable: readonly ExploreSweep[];
}

/**
 * The sweep a run gives the turn to when its prefix is spent: the one that had the last turn while
 * it is still waiting (no preemption), else the first in name order. The model uses it too.
 */
export function defaultTurn(runnable: readonly ExploreSweep[], last: ExploreSweep | undefined): ExploreSweep {
  return last !== undefined && runnable.includes(last) ? last : (runnable[0] as ExploreSweep);
}

/**
 * Whether giving turn `at` to `sweep` preempts the sweep before it: a change of sweep while the one
 * that had the last turn could go on. The change when a sweep has stopped is no preemption.
 */
function preempts(trace: readonly TraceTurn[], at: number, sweep: ExploreSweep, runnable: readonly ExploreSweep[]): boolean {
  const before = trace[at - 1]?.sweep;
  return before !== undefined && before !== sweep && runnable.includes(before);
}

/** A run's preemptions: the changes of sweep it made while the sweep before could go on. */
export function preemptionsOf(trace: readonly TraceTurn[]): number {
  let count = 0;
  for (let at = 0; at < trace.length; at++) if (preempts(trace, at, (trace[at] as TraceTurn).sweep, (trace[at] as TraceTurn).runnable)) count++;
  return count;
}

interface Waiter {
  readonly label: string;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

export class Conductor {
  readonly trace: TraceTurn[] = [];
  private readonly waiting = new Map<ExploreSweep, Waiter>();
  private readonly stopped = new Set<ExploreSweep>();
  private running: ExploreSweep | undefined;
  private failure: { err: unknown } | undefined;

  /** `sweeps` in name order; `prefix`, the choices to make first (the rest go to the first waiting). */
  constructor(
    private readonly sweeps: readonly ExploreSweep[],
    private readonly prefix: readonly ExploreSweep[],
  ) {}

  /** Resolves when this sweep may send its next command, named `label`. */
  turn(sweep: ExploreSweep, label: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.err);
    return new Promise((resolve, reject) => {
      this.waiting.set(sweep, { label, resolve, reject });
      this.choose();
    });
  }

  /** The command of the current turn has its reply. */
  done(): void {
    this.running = undefined;
  }

  /** The sweep has nothing more to send. */
  stop(sweep: ExploreSweep): void {
    this.stopped.add(sweep);
    if (this.running === sweep) this.running = undefined;
    this.choose();
  }

  /** One sweep failed: the other must not wait for a turn that will never come. */
  fail(err: unknown): void {
    this.failure = { err };
    for (const waiter of this.waiting.values()) waiter.reject(err);
    this.waiting.clear();
  }

  private choose(): void {
    if (this.running !== undefined || this.failure) return;
    const live = this.sweeps.filter((sweep) => !this.stopped.has(sweep));
    // A sweep still working between two commands decides what it sends next: wait for it.
    if (live.length === 0 || live.some((sweep) => !this.waiting.has(sweep))) return;
    const forced = this.prefix[this.trace.length];
    const chosen = forced !== undefined && this.waiting.has(forced) ? forced : defaultTurn(live, this.trace.at(-1)?.sweep);
    if (forced !== undefined && forced !== chosen) {
      this.fail(new Error(`the schedule gives turn ${this.trace.length + 1} to ${forced}, which has stopped`));
      return;
    }
    const waiter = this.waiting.get(chosen) as Waiter;
    this.waiting.delete(chosen);
    this.trace.push({ sweep: chosen, label: waiter.label, runnable: live });
    this.running = chosen;
    waiter.resolve();
  }
}

/**
 * The prefixes of the runs a finished run opens: at every turn past its own forced prefix where
 * more than one sweep was waiting, the same turns up to there with each other sweep going instead —
 * those within `maxPreemptions`, when a bound is given. Each is a run not made yet; together, over
 * every run, they reach every execution (within the bound) once.
 */
export function branchesOf(trace: readonly TraceTurn[], forced: number, maxPreemptions = Number.POSITIVE_INFINITY): ExploreSweep[][] {
  const branches: ExploreSweep[][] = [];
  let preemptions = 0;
  for (let at = 0; at < trace.length; at++) {
    const turn = trace[at] as TraceTurn;
    if (at >= forced) {
      for (const other of turn.runnable) {
        if (other === turn.sweep) continue;
        if (preemptions + (preempts(trace, at, other, turn.runnable) ? 1 : 0) > maxPreemptions) continue;
        branches.push([...trace.slice(0, at).map((t) => t.sweep), other]);
      }
    }
    if (preempts(trace, at, turn.sweep, turn.runnable)) preemptions++;
  }
  return branches;
}

/**
 * Lets two sweeps through one round trip at a time, like explain's turnstile, but chooses the next
 * turn as the run goes rather than from a list made beforehand: a sweep's turns depend on what it
 * sees (a sweep that finds nothing stops). Each sweep asks for a turn before every command it
 * sends and says when it has stopped; once every sweep still running is waiting, the conductor lets
 * one through: the one the forced prefix names at that point, else the first in name order. The
 * trace records, for every turn, who went and who could have, which is all the exploration needs
 * to find the runs it has not made yet. Pure: no I/O.
 */
import type { SweepName } from '../explain/schedule.js';

export interface TraceTurn {
  readonly sweep: SweepName;
  /** The command the turn sent, in lower case (`zrem`, `evalsha`, `exec` for a MULTI/EXEC). */
  readonly label: string;
  /** The sweeps waiting for a turn at that point: two where another order was possible. */
  readonly runnable: readonly SweepName[];
}

interface Waiter {
  readonly label: string;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

export class Conductor {
  readonly trace: TraceTurn[] = [];
  private readonly waiting = new Map<SweepName, Waiter>();
  private readonly stopped = new Set<SweepName>();
  private running: SweepName | undefined;
  private failure: { err: unknown } | undefined;

  /** `sweeps` in name order; `prefix`, the choices to make first (the rest go to the first waiting). */
  constructor(
    private readonly sweeps: readonly SweepName[],
    private readonly prefix: readonly SweepName[],
  ) {}

  /** Resolves when this sweep may send its next command, named `label`. */
  turn(sweep: SweepName, label: string): Promise<void> {
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
  stop(sweep: SweepName): void {
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
    const chosen = forced !== undefined && this.waiting.has(forced) ? forced : (live[0] as SweepName);
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
 * both sweeps were waiting and the first went, the same turns up to there with the other going
 * instead. Each is a run not made yet; together, over every run, they reach every execution once.
 */
export function branchesOf(trace: readonly TraceTurn[], forced: number): SweepName[][] {
  const branches: SweepName[][] = [];
  for (let at = forced; at < trace.length; at++) {
    const turn = trace[at] as TraceTurn;
    for (const other of turn.runnable) {
      if (other === turn.sweep || turn.runnable.indexOf(other) < turn.runnable.indexOf(turn.sweep)) continue;
      branches.push([...trace.slice(0, at).map((t) => t.sweep), other]);
    }
  }
  return branches;
}

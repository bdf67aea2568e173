/**
 * `--seed S`: the race's sweepers take turns, one command in flight at a time across all of them,
 * and a generator seeded with S decides whose turn it is. The choice follows PCT (probabilistic
 * concurrency testing): each sweeper draws a priority, the highest waiting one goes, and at change
 * points drawn from the seed the sweeper that just went drops below every other. A run of turns
 * between change points lets one sweeper get far ahead; the change points cut it at places no
 * timing would favour, so that rare orders come up as often as common ones.
 *
 * A turn is given only once every sweeper still running is waiting for one: what each sends next
 * depends on the replies it had, never on how fast this machine is, so the same seed, code and
 * flags give the same order of commands, and the server the same replies.
 */

/** A small generator with a 32-bit state (mulberry32): the same seed, the same numbers in [0, 1). Pure. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Turns between two change points, on average: about one job's commands in the loop. */
export const MEAN_CHANGE_GAP = 8;

/** Priorities for `sweepers` sweepers, a shuffle of 1 … n drawn from `random` (higher goes first). Pure. */
export function drawPriorities(sweepers: number, random: () => number): number[] {
  const order = Array.from({ length: sweepers }, (_, i) => i + 1);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}

/** The turns until the next change point: 1 … 2 × mean − 1, evenly. Pure. */
export function changeGap(random: () => number, mean = MEAN_CHANGE_GAP): number {
  return 1 + Math.floor(random() * (2 * mean - 1));
}

/**
 * Among the waiting sweepers, the one with the highest priority. Pure.
 * `waiting` is never empty when called.
 */
export function highestWaiting(priorities: readonly number[], waiting: readonly number[]): number {
  let best = waiting[0] as number;
  for (const sweeper of waiting) if ((priorities[sweeper] ?? 0) > (priorities[best] ?? 0)) best = sweeper;
  return best;
}

/** One turn of a seeded run: which sweeper sent which command, in which of its sweeps. */
export interface ScheduledTurn {
  /** 0-based, as the race numbers its connections. */
  readonly sweeper: number;
  /** 1-based: the sweeper's first sweep, its second, … */
  readonly sweep: number;
  /** The command in lower case (`zrem`, `evalsha`, `exec` for a MULTI/EXEC). */
  readonly label: string;
}

interface Waiter {
  readonly label: string;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

export class SeededScheduler {
  /** Kept only when asked: a large run's turns are many, and only a one-job run needs them. */
  readonly trace: ScheduledTurn[] = [];
  private readonly random: () => number;
  private readonly priorities: number[];
  private readonly sweeps: number[];
  private readonly waiting = new Map<number, Waiter>();
  private readonly stopped = new Set<number>();
  private running: number | undefined;
  private last: number | undefined;
  private turns = 0;
  private nextChange: number;
  /** Below every priority drawn: each change point hands out the next one down. */
  private lowest = 0;
  private failure: { err: unknown } | undefined;

  /** `meanGap`: turns between change points on average; a run of a few turns each needs fewer. */
  constructor(
    private readonly sweepers: number,
    seed: number,
    private readonly keepTrace = false,
    private readonly meanGap = MEAN_CHANGE_GAP,
  ) {
    this.random = seededRandom(seed);
    this.priorities = drawPriorities(sweepers, this.random);
    this.sweeps = new Array<number>(sweepers).fill(0);
    this.nextChange = changeGap(this.random, meanGap);
  }

  /** Turns given so far. */
  get given(): number {
    return this.turns;
  }

  /** The sweeper starts a sweep (its turns are numbered by sweep in the trace). */
  beginSweep(sweeper: number): void {
    this.sweeps[sweeper] = (this.sweeps[sweeper] ?? 0) + 1;
  }

  /** Resolves when `sweeper` may send its next command, named `label`. */
  turn(sweeper: number, label: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.err);
    return new Promise((resolve, reject) => {
      this.waiting.set(sweeper, { label, resolve, reject });
      this.choose();
    });
  }

  /** The command of the current turn has its reply. */
  done(): void {
    this.running = undefined;
  }

  /** The sweeper has nothing more to send. */
  stop(sweeper: number): void {
    this.stopped.add(sweeper);
    if (this.running === sweeper) this.running = undefined;
    this.choose();
  }

  /** One sweeper failed: the others must not wait for a turn that will never come. */
  fail(err: unknown): void {
    this.failure ??= { err };
    for (const waiter of this.waiting.values()) waiter.reject(err);
    this.waiting.clear();
  }

  private choose(): void {
    if (this.running !== undefined || this.failure) return;
    // A sweeper still working between two commands decides what it sends next: wait for it.
    if (this.waiting.size === 0 || this.waiting.size + this.stopped.size < this.sweepers) return;
    if (this.turns === this.nextChange) {
      if (this.last !== undefined) this.priorities[this.last] = --this.lowest;
      this.nextChange = this.turns + changeGap(this.random, this.meanGap);
    }
    const chosen = highestWaiting(
      this.priorities,
      [...this.waiting.keys()].sort((a, b) => a - b),
    );
    const waiter = this.waiting.get(chosen) as Waiter;
    this.waiting.delete(chosen);
    if (this.keepTrace) this.trace.push({ sweeper: chosen, sweep: this.sweeps[chosen] ?? 0, label: waiter.label });
    this.turns++;
    this.running = chosen;
    this.last = chosen;
    waiter.resolve();
  }
}

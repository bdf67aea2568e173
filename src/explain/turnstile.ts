/**
 * Lets two concurrently running sweeps through one step at a time, in a schedule's order. Each
 * sweep runs its own code and asks for its turn before every step; the next step in the schedule
 * starts only after the previous one has its replies, so the interleaving is exactly the schedule.
 */
export interface Turn {
  readonly sweep: string;
  readonly step: string;
}

export class Turnstile {
  private at = 0;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (err: unknown) => void }>();
  private failure: { err: unknown } | undefined;

  constructor(private readonly order: readonly Turn[]) {}

  /** Resolves when the schedule reaches this sweep's step (which it names exactly once). */
  turn(sweep: string, step: string): Promise<void> {
    const index = this.order.findIndex((t) => t.sweep === sweep && t.step === step);
    if (index < 0) return Promise.reject(new Error(`${sweep}:${step} is not in the schedule`));
    if (this.failure) return Promise.reject(this.failure.err);
    if (index === this.at) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiting.set(index, { resolve, reject }));
  }

  /** The current step is over: hands the turn on. */
  done(): void {
    this.at++;
    const next = this.waiting.get(this.at);
    this.waiting.delete(this.at);
    next?.resolve();
  }

  /** One sweep failed: the other must not wait for a turn that will never come. */
  fail(err: unknown): void {
    this.failure = { err };
    for (const waiter of this.waiting.values()) waiter.reject(err);
    this.waiting.clear();
  }
}

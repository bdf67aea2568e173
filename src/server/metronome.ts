/**
 * Wake-ups to the microsecond for the latency proxy. Event-loop timers count whole milliseconds
 * and fire up to one late, which would turn 0.5 ms asked into 2 ms measured; so a thread of its own
 * (metronome-thread.ts) sleeps until the one deadline the main thread set and then posts a message,
 * which wakes the event loop at once. It sleeps, never spins: no CPU is spent waiting.
 *
 * A wake-up still reaches the main thread a little late (the thread's own wake and the message's
 * hop, 0.1–0.3 ms on a virtual machine), twice per round trip through the proxy. So the thread is
 * woken early by `lead`, the tenth percentile of the lateness it has shown lately: most wake-ups
 * then land just after the deadline instead of a fraction of a millisecond past it. Being early is
 * never the caller's risk: a tick may come before a deadline, and the caller delivers only what is
 * due and sets the next deadline, which then gets no lead (see set()).
 *
 * Times are in milliseconds of process.hrtime (monotonic, and the same clock in every thread).
 */
import { Worker } from 'node:worker_threads';

/** Indexes into the shared arrays, and the deadline that means none. */
export const GENERATION = 0;
export const STOP = 1;
export const DEADLINE = 0;
export const NO_DEADLINE = -1n;

/** What both threads share: a generation counter (bumped on every new deadline) with a stop flag, and the deadline in ns. */
export interface MetronomeShared {
  readonly control: Int32Array;
  readonly deadline: BigInt64Array;
}

const THREAD = new URL('./metronome-thread.js', import.meta.url);

/** Latenesses kept to estimate the lead from, and the most lead ever taken (ms). */
const LATENESS_SAMPLES = 64;
const MAX_LEAD_MS = 0.5;
/** Samples between two estimates of the lead: a tenth percentile of 64 moves little in 8. */
const LEAD_EVERY = 8;

/**
 * How early to wake (ms) for latenesses seen: their tenth percentile, within 0 and MAX_LEAD_MS;
 * 0 until there are a few to go by. Pure.
 */
function leadFor(latenesses: readonly number[]): number {
  if (latenesses.length < 8) return 0;
  const sorted = [...latenesses].sort((a, b) => a - b);
  const tenth = sorted[Math.floor(sorted.length / 10)] ?? 0;
  return Math.min(MAX_LEAD_MS, Math.max(0, tenth));
}

/** Now, in ms of the monotonic clock both threads read. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export class Metronome {
  private readonly shared: MetronomeShared = {
    control: new Int32Array(new SharedArrayBuffer(8)),
    deadline: new BigInt64Array(new SharedArrayBuffer(8)),
  };
  private worker: Worker | undefined;
  private online: Promise<void> | undefined;
  /** Settles when the thread has ended, even if that happened before stop() was called. */
  private exited: Promise<void> | undefined;
  /** The deadline set (ms), Infinity for none. */
  private due = Number.POSITIVE_INFINITY;
  /** When the thread was told to wake for it (ms): the deadline less the lead. */
  private wakeAt = Number.POSITIVE_INFINITY;
  /** The last latenesses of a wake-up past wakeAt (ms), in a ring. */
  private readonly latenesses: number[] = [];
  private nextSample = 0;
  /** leadFor(latenesses), worked out again every LEAD_EVERY samples rather than sorted on every deadline set. */
  private lead = 0;
  /** If the thread ever fails, millisecond timers stand in: late by up to a millisecond, never early. */
  private fallback: NodeJS.Timeout | undefined;
  private failed = false;
  private stopped = false;

  constructor(private readonly onTick: () => void) {
    Atomics.store(this.shared.deadline, DEADLINE, NO_DEADLINE);
  }

  /** Wakes at `at` unless an earlier wake-up is already set. */
  wakeBy(at: number): void {
    if (at < this.due) this.set(at);
  }

  /** Wakes at `at` (Infinity: not at all), replacing whatever was set. */
  set(at: number): void {
    if (this.stopped) return;
    this.due = at;
    if (this.failed) {
      clearTimeout(this.fallback);
      this.fallback = Number.isFinite(at) ? setTimeout(() => this.tick(), Math.max(1, Math.ceil(at - monotonicMs()))) : undefined;
      return;
    }
    if (!Number.isFinite(at)) {
      // No deadline needs no wake-up: a thread that has ticked already waits for the next one,
      // and one still asleep towards an older deadline finds none when it wakes and waits again.
      // Waking it only to say so was half the wake-ups of a quiet connection's round trip.
      this.wakeAt = at;
      Atomics.store(this.shared.deadline, DEADLINE, NO_DEADLINE);
      return;
    }
    void this.start();
    // A deadline whose early wake-up has already passed gets none: the lead is for the first
    // wake-up only, so one that came early is followed by one at the deadline itself.
    const early = at - this.lead;
    this.wakeAt = early > monotonicMs() ? early : at;
    Atomics.store(this.shared.deadline, DEADLINE, BigInt(Math.ceil(this.wakeAt * 1e6)));
    this.bump();
  }

  /** Starts the thread ahead of the first wake-up, which would otherwise wait for it to boot. */
  ready(): Promise<void> {
    return this.start();
  }

  /** Ends the thread; resolves once it has exited, so nothing of it outlives the proxy. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.fallback);
    if (!this.worker) return;
    Atomics.store(this.shared.control, STOP, 1);
    this.bump();
    // Waiting on a listener added only now would never settle for a thread that had already
    // failed and exited, and with nothing else pending the process would end mid-await.
    await this.exited;
  }

  private start(): Promise<void> {
    if (this.online) return this.online;
    const worker = new Worker(THREAD, { workerData: this.shared });
    this.worker = worker;
    this.exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    this.online = new Promise<void>((resolve) => {
      worker.once('online', () => resolve());
      worker.once('exit', () => resolve());
    });
    worker.on('message', () => this.tick());
    const failed = (): void => {
      if (this.stopped) return;
      this.failed = true;
      this.set(this.due);
    };
    worker.once('error', failed);
    worker.once('exit', failed);
    return this.online;
  }

  private tick(): void {
    if (Number.isFinite(this.wakeAt) && !this.failed) {
      this.latenesses[this.nextSample] = Math.max(0, monotonicMs() - this.wakeAt);
      this.nextSample = (this.nextSample + 1) % LATENESS_SAMPLES;
      if (this.nextSample % LEAD_EVERY === 0) this.lead = leadFor(this.latenesses);
    }
    this.due = Number.POSITIVE_INFINITY;
    this.wakeAt = Number.POSITIVE_INFINITY;
    this.onTick();
  }

  private bump(): void {
    Atomics.add(this.shared.control, GENERATION, 1);
    Atomics.notify(this.shared.control, GENERATION);
  }
}

/**
 * Real stalled work, made by Bee-Queue's own code: the jobs created (`Queue#createJob`, ids 1..N)
 * and saved in pipelines (`Queue#saveAll`, its addJob script), taken into `active` by a worker
 * (`Queue#process`: BRPOPLPUSH from `waiting`, each job's heartbeat started) whose handler never
 * finishes, and the worker then gone without a word (closed at once: its heartbeats stop, as a
 * crashed process's do). One stalled check of Bee-Queue's then marks every active job into
 * `stalling`, the first half of its two-step detection. The race starts once that check's gate
 * has lapsed, so each caller's first check let in is the second half: the jobs are marked, and no
 * heartbeat took them out of `stalling`.
 *
 * Bee-Queue's worker makes a stalled check of its own as it starts, which would hold the gate for
 * the worker's whole stallInterval; the producer's check, made just before, holds it for a moment
 * only and turns the worker's away, so the seeding waits for no gate of the worker's.
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { serverError } from '../../shared/errors.js';
import type { BeeKeys } from './keys.js';
import type { BeeQueue, BeeQueueClass, BeeSettings } from './module.js';

/**
 * The seeding worker's stallInterval (ms): its heartbeat (an SREM per job) every half of it. Long
 * enough that thousands of heartbeats do not slow the taking. Its first check would set the gate
 * this long, were it not turned away (HOLD_MS).
 */
const SEED_INTERVAL_MS = 3000;
/**
 * The producer's stallInterval (ms): the gate its check, made just before the worker starts,
 * holds. It need only outlive the one script call between that check and the worker's first, which
 * it turns away; it has lapsed, or soon will, once the worker has taken the jobs. Were the worker's
 * check let in all the same (a machine stalled for longer than this), it would mark nothing
 * (`active` is still empty) and set its own gate, which the seeding then waits out: the seeded
 * state is the same either way, only reached later.
 */
const HOLD_MS = 200;
/** Jobs per saveAll pipeline. */
const SAVE_CHUNK = 1000;
/** How long the seeding may go without progress (a job taken, a gate lapsed) before the run gives up (ms). */
const WAIT_LIMIT_MS = 30_000;
/** How long a queue's close may wait before its connections are ended at once (ms). */
const CLOSE_WAIT_MS = 2000;

/** Bee-Queue's queues and the errors they emitted, closed together on every way out. */
export class BeeClients {
  private readonly queues: BeeQueue[] = [];
  private firstError: Error | undefined;
  private closing = false;

  /** Keeps `queue` to close, and its errors (Bee-Queue emits them as events) to report. */
  add(queue: BeeQueue): BeeQueue {
    this.queues.push(queue);
    queue.on('error', (err: Error) => {
      // A connection's error while the tool closes it is the closing, not the race.
      if (!this.closing) this.firstError ??= err;
    });
    return queue;
  }

  /** Throws the first error a queue emitted, if any. */
  check(): void {
    if (this.firstError) throw this.firstError;
  }

  /** Closes `queue` now (its timers stopped, its connections closed) and forgets it. */
  async close(queue: BeeQueue): Promise<void> {
    this.queues.splice(this.queues.indexOf(queue), 1);
    await closeQueue(queue);
  }

  /** Closes every queue still open; never throws. */
  async closeAll(): Promise<void> {
    this.closing = true;
    const open = this.queues.splice(0);
    await Promise.allSettled(open.map(closeQueue));
    this.closing = false;
  }
}

/**
 * Bee-Queue's own close (timers stopped, the blocking connection dropped, QUIT on the others),
 * waiting for no job (1 ms: the seeded jobs never finish, so it times out, which is expected);
 * then every connection still open is ended, so that none outlives the run whatever the server did.
 */
async function closeQueue(queue: BeeQueue): Promise<void> {
  const closed = queue.close(1).catch(() => undefined);
  // The bound's timer is cleared once the close is done: it would keep a finished process alive.
  const bound = new AbortController();
  await Promise.race([closed, sleep(CLOSE_WAIT_MS, undefined, { signal: bound.signal }).catch(() => undefined)]);
  bound.abort();
  for (const client of [queue.client, queue.bclient, queue.eclient]) client?.end(true);
}

export interface SeedPlan {
  readonly Queue: BeeQueueClass;
  /** Bee-Queue's settings for the race's server, less the stallInterval and whether it works. */
  readonly settings: Omit<BeeSettings, 'stallInterval' | 'isWorker'>;
  /** The callers' stallInterval: the marking check's gate lives this long. */
  readonly raceInterval: number;
  readonly keys: BeeKeys;
  readonly jobs: number;
  readonly runId: string;
  readonly clients: BeeClients;
  readonly signal: AbortSignal;
}

/** Saves, takes, abandons and marks `jobs` jobs; resolves once the marking check's gate is gone. */
export async function seedStalledJobs(admin: Redis, plan: SeedPlan): Promise<void> {
  const { Queue, settings, keys, jobs, runId, clients, signal } = plan;
  const producer = clients.add(new Queue(keys.name, { ...settings, stallInterval: HOLD_MS, isWorker: false }));
  await producer.ready();
  for (let first = 1; first <= jobs; first += SAVE_CHUNK) {
    signal.throwIfAborted();
    const last = Math.min(jobs, first + SAVE_CHUNK - 1);
    const batch = Array.from({ length: last - first + 1 }, (_, i) => producer.createJob({ run: runId }).setId(String(first + i)));
    const errors = await producer.saveAll(batch);
    const [error] = errors.values();
    if (error) throw error;
    clients.check();
  }
  // A job the seeding worker runs never finishes: the worker holds every one until it dies.
  const worker = clients.add(new Queue(keys.name, { ...settings, stallInterval: SEED_INTERVAL_MS, isWorker: true }));
  await worker.ready();
  // The producer's check holds the gate (marking nothing: no job is active yet), so that the one the
  // worker makes as it starts is turned away.
  await producer.checkStalledJobs();
  clients.check();
  worker.process(jobs, () => new Promise<never>(() => {}));
  // Bee-Queue's worker takes one job per round trip, slower on a busy machine: the wait gives up only when it stops taking.
  let taken = -1;
  await waitFor(signal, 'its worker to take another job into active', async () => {
    const active = await admin.llen(keys.active);
    const progressed = active !== taken;
    taken = active;
    return { done: active === jobs && (await admin.llen(keys.waiting)) === 0, progressed };
  });
  clients.check();
  // The worker goes without finishing anything: its heartbeats stop.
  await clients.close(worker);
  // The first half of Bee-Queue's detection, by Bee-Queue: every active job marked into `stalling`
  // by a check let in once the gate the producer's check set has lapsed.
  const gateLapsed = (what: string): Promise<void> => waitFor(signal, what, async () => ({ done: (await admin.exists(keys.stallBlock)) === 0 }));
  await gateLapsed('the stalled-check gate to lapse');
  const marker = clients.add(new Queue(keys.name, { ...settings, stallInterval: plan.raceInterval, isWorker: false }));
  await marker.ready();
  await marker.checkStalledJobs();
  clients.check();
  await clients.close(producer);
  await clients.close(marker);
  const marked = await admin.scard(keys.stalling);
  if (marked !== jobs) throw serverError(`seeding Bee-Queue: its stalled check marked ${marked} of the ${jobs} active jobs`);
  await gateLapsed("the marking check's gate to lapse");
}

/** Polls `poll` until it is done; a server error naming `what` after WAIT_LIMIT_MS without progress. */
async function waitFor(signal: AbortSignal, what: string, poll: () => Promise<{ readonly done: boolean; readonly progressed?: boolean }>): Promise<void> {
  let since = Date.now();
  for (;;) {
    const { done, progressed } = await poll();
    if (done) return;
    signal.throwIfAborted();
    if (progressed) since = Date.now();
    else if (Date.now() - since > WAIT_LIMIT_MS) throw serverError(`seeding Bee-Queue: waited ${WAIT_LIMIT_MS / 1000} s for ${what}`);
    await sleep(10, undefined, { signal });
  }
}

/**
 * Real stalled work, made by BullMQ's own code: the jobs added with `Queue.addBulk`, taken into
 * `active` by a worker (`Worker#getNextJob`, BullMQ's moveToActive script, which sets each job's
 * lock for the worker's lockDuration), marked by one stalled check of that worker (the first
 * phase of BullMQ's two: every job in `active` goes into `stalled`), and the worker then gone
 * without a word (closed at once, as a crashed process stops renewing its locks). The race starts
 * once every lock has lapsed and the check's gate has expired, so that each caller's first check
 * is the second phase: it finds the jobs marked, their locks gone.
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { serverError } from '../../shared/errors.js';
import type { BullmqKeys } from './keys.js';
import type { Bullmq, BullmqQueue, BullmqWorker } from './module.js';

/**
 * The seeding worker's lockDuration and stalledInterval (ms): how long the race waits for the locks
 * and the marking check's gate to lapse. Nothing needs them longer: the marking check puts every
 * job of `active` into `stalled` whatever its lock (a lock that lapsed during the taking changes
 * nothing), and only the race's checks, once both have lapsed, look at the locks.
 */
const SEED_LOCK_MS = 50;
/** Jobs per addBulk call, and getNextJob calls in flight at once. */
const ADD_CHUNK = 1000;
const TAKE_CHUNK = 100;
/** How long the locks may take to lapse before the run gives up (ms). */
const LAPSE_LIMIT_MS = 30_000;

/** BullMQ's clients and the errors they emitted, closed together on every way out. */
export class BullmqClients {
  private readonly clients: (BullmqQueue | BullmqWorker)[] = [];
  private firstError: Error | undefined;

  /**
   * Keeps `client` to close, and its errors (BullMQ emits them as events) to report; `expected`
   * takes the errors that are the run's to count rather than its failure (a late completion refused).
   */
  add<T extends BullmqQueue | BullmqWorker>(client: T, expected?: (err: Error) => boolean): T {
    this.clients.push(client);
    client.on('error', (err: Error) => {
      if (expected?.(err)) return;
      this.firstError ??= err;
    });
    return client;
  }

  /** Throws the first error a client emitted, if any. */
  check(): void {
    if (this.firstError) throw this.firstError;
  }

  /** Closes `client` now (its timers stopped, its connections closed) and forgets it. */
  async close(client: BullmqQueue | BullmqWorker): Promise<void> {
    this.clients.splice(this.clients.indexOf(client), 1);
    await closeClient(client);
  }

  /** Closes a worker the way BullMQ drains one: it takes no more jobs and waits for those it runs to finish. */
  async drain(worker: BullmqWorker): Promise<void> {
    this.clients.splice(this.clients.indexOf(worker), 1);
    await worker.close();
  }

  /** Closes every client still open; never throws. */
  async closeAll(): Promise<void> {
    const open = this.clients.splice(0);
    await Promise.allSettled(open.map(closeClient));
  }
}

/** A worker closes at once (force: it waits for no job); a queue closes its connection. */
function closeClient(client: BullmqQueue | BullmqWorker): Promise<void> {
  return 'getNextJob' in client ? client.close(true) : client.close();
}

export interface SeedPlan {
  readonly bullmq: Bullmq;
  /** BullMQ's connection options: the race's server. */
  readonly connection: object;
  readonly keys: BullmqKeys;
  readonly jobs: number;
  readonly runId: string;
  readonly maxStalledCount: number;
  readonly clients: BullmqClients;
  readonly signal: AbortSignal;
}

/** Adds, takes, marks and abandons `jobs` jobs; resolves once their locks and the check's gate are gone. */
export async function seedStalledJobs(admin: Redis, plan: SeedPlan): Promise<void> {
  const { bullmq, connection, keys, jobs, runId, clients, signal } = plan;
  const options = { connection, prefix: keys.prefix };
  await addJobs(plan);
  const worker = clients.add(
    new bullmq.Worker(keys.name, null, {
      ...options,
      autorun: false,
      lockDuration: SEED_LOCK_MS,
      stalledInterval: SEED_LOCK_MS,
      maxStalledCount: plan.maxStalledCount,
    }),
  );
  let taken = 0;
  for (let next = 0; next < jobs; next += TAKE_CHUNK) {
    signal.throwIfAborted();
    const count = Math.min(TAKE_CHUNK, jobs - next);
    const got = await Promise.all(Array.from({ length: count }, (_, i) => worker.getNextJob(`${runId}-${next + i + 1}`, { block: false })));
    taken += got.filter((job) => job !== undefined).length;
    clients.check();
  }
  if (taken !== jobs) throw serverError(`seeding BullMQ: its worker took ${taken} of the ${jobs} jobs added into active`);
  // The first phase of BullMQ's check, by BullMQ: every job in active marked into `stalled`.
  await worker.moveStalledJobsToWait();
  clients.check();
  const marked = await admin.scard(keys.stalled);
  if (marked !== jobs) throw serverError(`seeding BullMQ: its stalled check marked ${marked} of the ${jobs} active jobs`);
  // The worker goes without releasing anything: its locks stop being renewed and lapse.
  await clients.close(worker);
  await waitForLapse(admin, keys, jobs, signal);
}

/** Adds `jobs` jobs through BullMQ's Queue.addBulk, in chunks; they get the ids 1..jobs of the fresh queue. */
export async function addJobs(plan: Omit<SeedPlan, 'maxStalledCount'>): Promise<void> {
  const { bullmq, connection, keys, jobs, runId, clients, signal } = plan;
  const queue = clients.add(new bullmq.Queue(keys.name, { connection, prefix: keys.prefix }));
  for (let added = 0; added < jobs; added += ADD_CHUNK) {
    signal.throwIfAborted();
    const count = Math.min(ADD_CHUNK, jobs - added);
    await queue.addBulk(Array.from({ length: count }, () => ({ name: 'emq-race', data: { run: runId } })));
    clients.check();
  }
  await clients.close(queue);
}

/** BullMQ's first phase, by a worker of BullMQ's: every job in active marked into `stalled`; the worker then closed. */
export async function markActiveJobs(admin: Redis, plan: SeedPlan): Promise<void> {
  const { bullmq, connection, keys, jobs, clients } = plan;
  const checker = clients.add(
    new bullmq.Worker(keys.name, null, {
      connection,
      prefix: keys.prefix,
      autorun: false,
      lockDuration: SEED_LOCK_MS,
      stalledInterval: SEED_LOCK_MS,
      maxStalledCount: plan.maxStalledCount,
    }),
  );
  await checker.moveStalledJobsToWait();
  clients.check();
  const marked = await admin.scard(keys.stalled);
  if (marked !== jobs) throw serverError(`seeding BullMQ: its stalled check marked ${marked} of the ${jobs} active jobs`);
  await clients.close(checker);
}

/** Waits until no job's lock and no gate of the stalled check are left on the server. */
export async function waitForLapse(admin: Redis, keys: BullmqKeys, jobs: number, signal: AbortSignal): Promise<void> {
  const started = Date.now();
  for (;;) {
    signal.throwIfAborted();
    let locks = 0;
    for (let first = 1; first <= jobs; first += ADD_CHUNK) {
      const names = Array.from({ length: Math.min(ADD_CHUNK, jobs - first + 1) }, (_, i) => keys.lock(first + i));
      locks += await admin.exists(...names);
    }
    const gate = await admin.pttl(keys.stalledCheck);
    if (locks === 0 && gate === -2) return;
    if (Date.now() - started > LAPSE_LIMIT_MS) {
      throw serverError(`seeding BullMQ: ${locks} job locks still there ${LAPSE_LIMIT_MS / 1000} s after the worker that held them closed`);
    }
    await sleep(Math.min(Math.max(gate, 20), SEED_LOCK_MS), undefined, { signal });
  }
}

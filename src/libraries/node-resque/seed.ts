/**
 * Real dead workers holding jobs, made by node-resque's own code: the jobs enqueued with
 * `Queue#enqueue`, then one `Worker` per job (looping off) started, which registers itself (the
 * `workers` set, its `started` and `ping` keys), takes one job with node-resque's own
 * popAndStoreJob script (the job popped from the queue and stored under the worker's key with its
 * `run_at`) and keeps it. Each worker then goes without a word: its ping timer stopped, as when
 * its process dies, its job never finished. What is left is what node-resque's cleanOldWorkers is
 * there to recover.
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { serverError } from '../../shared/errors.js';
import { RESQUE_CLASS, RESQUE_QUEUE, type ResqueKeys } from './keys.js';
import type { NodeResque, ResqueConnection, ResqueQueue, ResqueWorker } from './module.js';

/** Workers started at once. */
const START_CHUNK = 50;
/** How long the workers may take to take their jobs before the run gives up (ms). */
const TAKE_LIMIT_MS = 30_000;

/** The message node-resque emits (a string, not an Error) when a worker it was cleaning is already gone. */
const ALREADY_GONE = /^force-cleaning worker .* but cannot find queues$/;

/** node-resque's queues and workers and the errors they emitted, ended together on every way out. */
export class ResqueClients {
  private readonly queues: ResqueQueue[] = [];
  private readonly workers: ResqueWorker[] = [];
  private firstError: unknown;
  /** The times node-resque said a worker it meant to clean was already gone (another caller's). */
  alreadyGone = 0;

  private listen(client: ResqueQueue | ResqueWorker): void {
    client.on('error', (err: unknown) => {
      if (typeof err === 'string' && ALREADY_GONE.test(err)) this.alreadyGone++;
      else this.firstError ??= err instanceof Error ? err : new Error(String(err));
    });
  }

  addQueue(queue: ResqueQueue): ResqueQueue {
    this.queues.push(queue);
    this.listen(queue);
    return queue;
  }

  /** A seeding worker: its ping timer is stopped on every way out. */
  addWorker(worker: ResqueWorker): ResqueWorker {
    this.workers.push(worker);
    this.listen(worker);
    return worker;
  }

  /** Throws the first error a client emitted, if any. */
  check(): void {
    if (this.firstError) throw this.firstError;
  }

  /** Stops every worker's ping timer (the worker dies: nothing of it is released on the server). */
  abandonWorkers(): void {
    for (const worker of this.workers.splice(0)) {
      if (worker.pingTimer) clearInterval(worker.pingTimer);
      worker.pingTimer = null;
    }
  }

  /** Ends every queue still open (its connection closed) and abandons the workers; never throws. */
  async closeAll(): Promise<void> {
    this.abandonWorkers();
    const open = this.queues.splice(0);
    await Promise.allSettled(open.map((queue) => queue.end()));
    // Queue#end closes only a connection that passed node-resque's own test: one the server
    // refused (at its maxclients, say) would go on reconnecting, each time answered and so each
    // time counted as a first attempt, and hold the process open for ever.
    for (const queue of open) queue.connection?.redis?.disconnect?.();
  }
}

export interface SeedPlan {
  readonly resque: NodeResque;
  /** The tool's connection to the race's server, lent to node-resque's seeding clients (which leave it open). */
  readonly redis: Redis;
  readonly keys: ResqueKeys;
  readonly jobs: number;
  readonly clients: ResqueClients;
  readonly signal: AbortSignal;
}

/** The name of the seeded worker `i`: no `:` in it, which node-resque's `workers()` would read as host:pid. */
function deadWorkerName(i: number): string {
  return `dead-${i}`;
}

/** Enqueues `jobs` jobs and leaves each held by a dead worker; resolves once every worker holds one. */
export async function seedDeadWorkers(admin: Redis, plan: SeedPlan): Promise<void> {
  const { resque, redis, keys, jobs, clients, signal } = plan;
  // Each node-resque client listens on the lent connection ('error', 'end'), and a dead worker never removes its listeners.
  redis.setMaxListeners(redis.getMaxListeners() + 2 * (jobs + 1));
  const connection = (): ResqueConnection => ({ redis, namespace: keys.namespace });
  const queue = clients.addQueue(new resque.Queue({ connection: connection() }));
  await queue.connect();
  for (let id = 1; id <= jobs; id++) {
    signal.throwIfAborted();
    await queue.enqueue(RESQUE_QUEUE, RESQUE_CLASS, [id]);
  }
  clients.check();
  // A job the seeding worker would run never finishes: the worker holds it until it dies.
  const never = { perform: () => new Promise<never>(() => {}) };
  for (let first = 1; first <= jobs; first += START_CHUNK) {
    signal.throwIfAborted();
    const last = Math.min(jobs, first + START_CHUNK - 1);
    const started = [];
    for (let i = first; i <= last; i++) {
      const worker = clients.addWorker(
        new resque.Worker(
          { connection: connection(), name: deadWorkerName(i), queues: [RESQUE_QUEUE], looping: false, timeout: 60_000 },
          { [RESQUE_CLASS]: never },
        ),
      );
      started.push(worker.connect().then(() => worker.start()));
    }
    await Promise.all(started);
    clients.check();
  }
  await waitUntilTaken(admin, keys, jobs, signal);
  clients.abandonWorkers();
  clients.check();
}

/** Waits until each worker's key holds its job and the queue is empty. */
async function waitUntilTaken(admin: Redis, keys: ResqueKeys, jobs: number, signal: AbortSignal): Promise<void> {
  const started = Date.now();
  for (;;) {
    signal.throwIfAborted();
    const names = Array.from({ length: jobs }, (_, i) => keys.workingOn(deadWorkerName(i + 1)));
    let held = 0;
    for (let from = 0; from < names.length; from += 1000) held += await admin.exists(...names.slice(from, from + 1000));
    const waiting = await admin.llen(keys.queue);
    if (held === jobs && waiting === 0) return;
    if (Date.now() - started > TAKE_LIMIT_MS) {
      throw serverError(`seeding node-resque: ${held} of ${jobs} workers took a job (${waiting} left in the queue) after ${TAKE_LIMIT_MS / 1000} s`);
    }
    await sleep(10, undefined, { signal });
  }
}

/**
 * node-resque's recovery of dead workers (Queue#cleanOldWorkers, with forceCleanWorker for each
 * worker it finds too old) ported to the application: the same commands in the same order, each
 * a round trip of its own, the closing MULTI one round trip. Two ports:
 *
 *   naive    node-resque's steps as they are: every caller that read a worker's job before the
 *            first one's MULTI removed it pushes that job onto `failed`;
 *   guarded  acts on the removal's reply: `SREM workers name:queues` first, and only the caller
 *            whose SREM removed the entry (1) reads the job and runs the MULTI that pushes it.
 *
 * cleanOldWorkers' steps: SMEMBERS `workers`; GET each worker's `worker:NAME:QUEUES` (what it is
 * working on); for each one whose `run_at` is older than `age`, forceCleanWorker: SMEMBERS
 * `workers` again (its queues), GET its job again, and a MULTI of INCR `stat:failed`, DEL of its
 * stats, ping, started and job keys, SREM of its entry, and RPUSH of the failure onto `failed`
 * when it held a job.
 */
import { hostname } from 'node:os';
import type { ResqueKeys } from './keys.js';

/** Sends one command and resolves to its reply: each call is one round trip. */
export type Exec = (command: string, ...args: (string | number)[]) => Promise<unknown>;
/** Sends commands as one MULTI … EXEC: one round trip. */
export type Transaction = (commands: readonly (readonly [string, ...(string | number)[]])[]) => Promise<unknown>;

/** node-resque's `workers()`: each entry `name:queues` split as it splits it. */
function parseWorkers(entries: readonly string[]): Map<string, string | null> {
  const workers = new Map<string, string | null>();
  for (const entry of entries) {
    const parts = entry.split(':');
    if (parts.length === 1) workers.set(entry, null);
    else if (parts.length === 2) workers.set(parts[0] ?? '', parts[1] ?? null);
    else workers.set(`${parts[0]}:${parts[1]}`, parts.slice(2).join(':'));
  }
  return workers;
}

interface WorkingOn {
  readonly run_at?: string;
  readonly queue?: string;
  readonly payload?: unknown;
  readonly worker?: string;
}

/** The key of what `worker` on `queues` works on, as node-resque names it. */
function workingOnKey(keys: ResqueKeys, worker: string, queues: string | null): string {
  return [keys.namespace, 'worker', worker, queues ?? ''].filter((part) => part.trim() !== '').join(':');
}

/** node-resque's failure payload for a worker cleaned while it held a job. */
function failure(worker: string, working: WorkingOn): string {
  const message = 'Worker Timeout (killed manually)';
  return JSON.stringify({
    worker,
    queue: working.queue,
    payload: working.payload ?? {},
    exception: message,
    error: message,
    backtrace: [`killed by ${hostname()} at ${new Date()}`, 'queue#forceCleanWorker', 'node-resque'],
    failed_at: new Date().toString(),
  });
}

/** One call of the ported cleanOldWorkers(age): resolves to the payloads this caller pushed onto `failed`. */
export async function portedCleanOldWorkers(exec: Exec, multi: Transaction, keys: ResqueKeys, age: number, guarded: boolean): Promise<unknown[]> {
  const workers = parseWorkers((await exec('SMEMBERS', keys.workers)) as string[]);
  const working = new Map<string, WorkingOn>();
  for (const [worker, queues] of workers) {
    const data = (await exec('GET', workingOnKey(keys, worker, queues))) as string | null;
    if (data !== null) {
      const parsed = JSON.parse(data) as WorkingOn;
      working.set(parsed.worker ?? worker, parsed);
    }
  }
  const pushed: unknown[] = [];
  for (const [worker, payload] of working) {
    if (!payload.run_at || !(Date.now() - Date.parse(payload.run_at) > age)) continue;
    const moved = await forceCleanWorker(exec, multi, keys, worker, guarded);
    if (moved) pushed.push(moved.payload);
  }
  return pushed;
}

/** forceCleanWorker(worker): the worker's entry and keys removed, its job pushed onto `failed`. */
async function forceCleanWorker(exec: Exec, multi: Transaction, keys: ResqueKeys, worker: string, guarded: boolean): Promise<WorkingOn | undefined> {
  const queues = parseWorkers((await exec('SMEMBERS', keys.workers)) as string[]).get(worker) ?? null;
  if (guarded) {
    // The removal decides: only the caller whose SREM took the entry away cleans the worker.
    if (queues === null || Number(await exec('SREM', keys.workers, `${worker}:${queues}`)) !== 1) return undefined;
  }
  let working: WorkingOn | undefined;
  if (queues !== null) {
    const data = (await exec('GET', workingOnKey(keys, worker, queues))) as string | null;
    if (data !== null) working = JSON.parse(data) as WorkingOn;
  }
  const started = [keys.namespace, 'worker', worker, queues ?? 'undefined', 'started'].join(':');
  const commands: [string, ...(string | number)[]][] = [
    ['INCR', keys.statFailed],
    ['DEL', keys.statFailedOf(worker)],
    ['DEL', keys.statProcessedOf(worker)],
    ['DEL', keys.pingOf(worker)],
    ['DEL', started],
    ['DEL', [keys.namespace, 'worker', worker].join(':')],
    ['SREM', keys.workers, `${worker}:${queues ?? 'undefined'}`],
  ];
  if (working) commands.push(['RPUSH', keys.failed, failure(worker, working)]);
  await multi(commands);
  return working;
}

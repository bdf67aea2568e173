/**
 * node-resque's keys in a race's queue. node-resque is given the namespace `emq:{Q}:node-resque`
 * (its `namespace` connection option), so every key it writes is `emq:{Q}:node-resque:…`: the
 * library's namespace in the queue (libraryPrefix, queue/keys.ts), which the claim, the heartbeat
 * and `clean` cover. The names below are node-resque 9's own (`connection.key(…)` joins with `:`).
 */
import { libraryPrefix, queueKeys } from '../../queue/keys.js';

/** The folder of the library in the queue. */
export const NODE_RESQUE = 'node-resque';
/** The node-resque queue the seeded jobs are enqueued on, and the class they name. */
export const RESQUE_QUEUE = 'emq-race';
export const RESQUE_CLASS = 'emq-race';

export interface ResqueKeys {
  /** What node-resque's `namespace` option is given: `emq:{Q}:node-resque`. */
  readonly namespace: string;
  /** The set of worker entries, `name:queues`. */
  readonly workers: string;
  /** The list of failed jobs' payloads (JSON). */
  readonly failed: string;
  /** The global failure counter. */
  readonly statFailed: string;
  /** The queue's list of jobs waiting. */
  readonly queue: string;
  /** What a worker is working on (JSON, with `run_at`). */
  workingOn(worker: string): string;
  pingOf(worker: string): string;
  startedOf(worker: string): string;
  statFailedOf(worker: string): string;
  statProcessedOf(worker: string): string;
}

export function resqueKeys(queue: string): ResqueKeys {
  const namespace = libraryPrefix(queueKeys(queue), NODE_RESQUE).slice(0, -1);
  const key = (...parts: string[]): string => [namespace, ...parts].join(':');
  return {
    namespace,
    workers: key('workers'),
    failed: key('failed'),
    statFailed: key('stat', 'failed'),
    queue: key('queue', RESQUE_QUEUE),
    workingOn: (worker) => key('worker', worker, RESQUE_QUEUE),
    pingOf: (worker) => key('worker', 'ping', worker),
    startedOf: (worker) => key('worker', worker, RESQUE_QUEUE, 'started'),
    statFailedOf: (worker) => key('stat', 'failed', worker),
    statProcessedOf: (worker) => key('stat', 'processed', worker),
  };
}

/** The job id a node-resque payload carries (its first argument), or undefined for none of the run's. */
export function jobIdOf(payload: unknown, jobs: number): number | undefined {
  const args = (payload as { args?: unknown } | null | undefined)?.args;
  const id = Array.isArray(args) ? Number(args[0]) : Number.NaN;
  return Number.isInteger(id) && id >= 1 && id <= jobs ? id : undefined;
}

/**
 * BullMQ's keys in a race's queue. BullMQ is given the queue's hash-tagged prefix `emq:{Q}` and
 * the queue name `bullmq`, so every key it writes is `emq:{Q}:bullmq:…`: the library's namespace
 * in the queue (libraryPrefix, queue/keys.ts), which the claim, the heartbeat and `clean` cover.
 */
import { libraryPrefix, queueKeys } from '../../queue/keys.js';

/** The folder of the library in the queue, and BullMQ's queue name there. */
export const BULLMQ = 'bullmq';

/**
 * The field of a job's hash where the tool's own handlers (--fault lapsed-lock's two workers) count
 * each time they run the job: a take BullMQ fails before the handler runs (a job it marked to fail)
 * is no execution, so BullMQ's own `ats`, which counts takes, cannot say it. A name BullMQ never writes.
 */
export const HANDLER_RUNS_FIELD = 'emq-race:runs';

export interface BullmqKeys {
  /** What BullMQ's `prefix` option is given: `emq:{Q}` (it adds `:bullmq:` itself). */
  readonly prefix: string;
  /** BullMQ's queue name. */
  readonly name: string;
  /** `emq:{Q}:bullmq:`: BullMQ's key prefix for the queue, its `queue.toKey('')`. */
  readonly base: string;
  readonly wait: string;
  readonly active: string;
  readonly paused: string;
  readonly stalled: string;
  readonly stalledCheck: string;
  readonly meta: string;
  readonly marker: string;
  readonly events: string;
  readonly repeat: string;
  readonly failed: string;
  readonly completed: string;
  readonly delayed: string;
  readonly prioritized: string;
  job(id: string | number): string;
  lock(id: string | number): string;
}

export function bullmqKeys(queue: string): BullmqKeys {
  const keys = queueKeys(queue);
  const base = libraryPrefix(keys, BULLMQ);
  const key = (name: string): string => `${base}${name}`;
  return {
    prefix: keys.prefix.slice(0, -1),
    name: BULLMQ,
    base,
    wait: key('wait'),
    active: key('active'),
    paused: key('paused'),
    stalled: key('stalled'),
    stalledCheck: key('stalled-check'),
    meta: key('meta'),
    marker: key('marker'),
    events: key('events'),
    repeat: key('repeat'),
    failed: key('failed'),
    completed: key('completed'),
    delayed: key('delayed'),
    prioritized: key('prioritized'),
    job: (id) => key(String(id)),
    lock: (id) => key(`${id}:lock`),
  };
}

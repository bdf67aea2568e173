/**
 * Bee-Queue's keys in a race's queue. Bee-Queue is given the queue's hash-tagged prefix `emq:{Q}`
 * and the queue name `bee-queue`, and joins them itself (`PREFIX:NAME:key`), so every key it
 * writes is `emq:{Q}:bee-queue:…`: the library's namespace in the queue (libraryPrefix,
 * queue/keys.ts), which the claim, the heartbeat and `clean` cover. The names below are Bee-Queue
 * 2's own (`Queue#toKey`).
 */
import { libraryPrefix, queueKeys } from '../../queue/keys.js';

/** The folder of the library in the queue, and Bee-Queue's queue name there. */
export const BEE_QUEUE = 'bee-queue';

export interface BeeKeys {
  /** What Bee-Queue's `prefix` setting is given: `emq:{Q}` (it adds `:bee-queue:` itself). */
  readonly prefix: string;
  /** Bee-Queue's queue name. */
  readonly name: string;
  /** `emq:{Q}:bee-queue:`: every key of the queue starts so. */
  readonly base: string;
  /** The hash of every job's data, field = job id. */
  readonly jobs: string;
  /** The gate of the stalled check: set for stallInterval by the check that passes it. */
  readonly stallBlock: string;
  /** The set of active jobs the last check marked: those still in it at the next check stalled. */
  readonly stalling: string;
  /** The list workers take jobs from (BRPOPLPUSH into `active`). */
  readonly waiting: string;
  readonly active: string;
  readonly succeeded: string;
  readonly failed: string;
  readonly delayed: string;
}

export function beeKeys(queue: string): BeeKeys {
  const keys = queueKeys(queue);
  const base = libraryPrefix(keys, BEE_QUEUE);
  const key = (name: string): string => `${base}${name}`;
  return {
    prefix: keys.prefix.slice(0, -1),
    name: BEE_QUEUE,
    base,
    jobs: key('jobs'),
    stallBlock: key('stallBlock'),
    stalling: key('stalling'),
    waiting: key('waiting'),
    active: key('active'),
    succeeded: key('succeeded'),
    failed: key('failed'),
    delayed: key('delayed'),
  };
}

/**
 * The observer: one more connection that, all through a race, checks where a job stands with one
 * small script per sample (src/lua/observe-job.lua), so each sample is a single instant of the
 * server. It follows the job at the head of `active` (the next the sweepers take) until the job
 * has settled somewhere else, then takes the next head. A sample that finds the job nowhere, or in
 * two places at once, has caught a sweep between its writes.
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { sampleVerdict, type WindowCounts } from '../audit/consequence-rules.js';
import { callObserveJob } from '../lua/consequence-scripts.js';
import { connect, type ServerTarget } from '../server/connection.js';
import type { QueueKeys } from '../queue/keys.js';
import type { PendingKind } from '../shared/model.js';

/** Entries looked at from the tail of each list per sample: the bound on a sample's cost. */
const LIST_TAIL_BOUND = 1000;
/** A bound on samples per race, so an observer stops by itself even if never told to. */
const MAX_SAMPLES = 1_000_000;
const IDLE_MS = 1;

export interface Observer {
  /** Stops sampling; resolves to what the samples found. */
  stop(): Promise<WindowCounts>;
}

export async function startObserver(target: ServerTarget, keys: QueueKeys, pending: PendingKind): Promise<Observer> {
  const redis: Redis = await connect(target);
  let stopped = false;
  const counts = { samples: 0, windowInNeither: 0, windowInBoth: 0 };

  const observing = (async () => {
    let tracked = '';
    while (!stopped && counts.samples < MAX_SAMPLES) {
      const reply = await callObserveJob(redis, keys, tracked, LIST_TAIL_BOUND, pending);
      if (reply === null) {
        await sleep(IDLE_MS);
        continue;
      }
      const [id, inActive, inPending, inDead, inRunning, done, conclusive] = reply;
      if (conclusive === 0) {
        tracked = '';
        continue;
      }
      counts.samples++;
      const verdict = sampleVerdict({ inActive, inPending, inDead, inRunning, done });
      if (verdict === 'neither') counts.windowInNeither++;
      if (verdict === 'both') counts.windowInBoth++;
      // Keep following a job still in active or caught between places; take the next once it settled.
      tracked = inActive === 1 || verdict === 'neither' ? id : '';
    }
  })();
  let failure: unknown;
  const settled = observing.catch((err: unknown) => {
    failure = err;
  });

  return {
    async stop() {
      stopped = true;
      try {
        await settled;
      } finally {
        redis.disconnect();
      }
      if (failure !== undefined) throw failure;
      return { ...counts };
    },
  };
}

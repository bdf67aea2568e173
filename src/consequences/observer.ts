/**
 * The observer: one more connection that, all through a race, checks where a job stands with one
 * small script per sample (src/lua/observe-job.lua), so each sample is a single instant of the
 * server. It follows the job at the head of `active` (the next the sweepers take) until the job
 * has settled somewhere else, then takes the next head. A sample that finds the job nowhere, or in
 * two places at once, has caught a sweep between its writes.
 */
import type { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { sampleVerdict, type WindowCounts } from '../audit/consequence-rules.js';
import type { FallbackCount } from '../lua/cached-script.js';
import { callObserveJob } from '../lua/consequence-scripts.js';
import { connect, type ServerTarget } from '../server/connection.js';
import type { QueueKeys } from '../queue/keys.js';
import type { PendingKind } from '../shared/model.js';

/** Entries looked at from the tail of each list per sample: the bound on a sample's cost. */
const LIST_TAIL_BOUND = 1000;
/** A bound on samples per race, so an observer stops by itself even if never told to. */
const MAX_SAMPLES = 1_000_000;
const IDLE_MS = 1;
/**
 * How long a job may stand in no place before the observer takes it for lost: a sweep's window
 * between its writes lasts about one round trip of the race's connections, which the observer's
 * own samples cross too (the latency proxy's included), so ten of its slowest sample so far, and
 * never under LOST_FLOOR_MS for a busy client's pauses. Without a bound, a job lost for good (a
 * crashed claim sweeper's) held the observer, every sample of it counted as a window, for the rest
 * of the race: 4,477 of 4,480 samples in one run of 900 jobs.
 */
const LOST_AFTER_ROUND_TRIPS = 10;
const LOST_FLOOR_MS = 100;

export interface Observer {
  /** Stops sampling; resolves to what the samples found. */
  stop(): Promise<WindowCounts>;
  /** NOSCRIPT replies to the observer's samples, each re-sent as EVAL, so far. */
  readonly noscriptFallbacks: number;
}

export async function startObserver(target: ServerTarget, keys: QueueKeys, pending: PendingKind): Promise<Observer> {
  const redis: Redis = await connect(target);
  let stopped = false;
  const counts = { samples: 0, windowInNeither: 0, windowInBoth: 0 };
  const fallbacks: FallbackCount = { noscriptFallbacks: 0 };

  const observing = (async () => {
    let tracked = '';
    // The samples that found the tracked job in no place, counted as windows once it lands
    // somewhere: a job that never does was lost (the audit counts it), not caught mid-sweep.
    let neither = 0;
    let neitherSince = 0;
    let slowestMs = 0;
    while (!stopped && counts.samples < MAX_SAMPLES) {
      const sent = performance.now();
      const reply = await callObserveJob(redis, keys, tracked, LIST_TAIL_BOUND, pending, fallbacks);
      slowestMs = Math.max(slowestMs, performance.now() - sent);
      if (reply === null) {
        await sleep(IDLE_MS);
        continue;
      }
      const [id, inActive, inPending, inDead, inRunning, done, conclusive] = reply;
      if (conclusive === 0) {
        tracked = '';
        neither = 0;
        continue;
      }
      counts.samples++;
      const verdict = sampleVerdict({ inActive, inPending, inDead, inRunning, done });
      if (verdict === 'neither') {
        if (neither === 0) neitherSince = performance.now();
        neither++;
        // Followed while it is between places; given up, uncounted, once it is plainly lost.
        tracked = performance.now() - neitherSince < Math.max(LOST_FLOOR_MS, LOST_AFTER_ROUND_TRIPS * slowestMs) ? id : '';
        if (tracked === '') neither = 0;
        continue;
      }
      counts.windowInNeither += neither;
      neither = 0;
      if (verdict === 'both') counts.windowInBoth++;
      // Keep following a job still in active; take the next once it settled.
      tracked = inActive === 1 ? id : '';
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
    get noscriptFallbacks() {
      return fallbacks.noscriptFallbacks;
    },
  };
}

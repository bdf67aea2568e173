/**
 * `--cycles C`: the poison job. While the sweepers run, a re-leaser stands for the workers that
 * keep taking a recovered job and dying with it: it takes each job from pending (all its entries)
 * and leases it again, already expired, up to C − 1 times per job (src/lua/release-stalled.lua).
 * So a job may stall again while a slow sweep of its previous stall is still in flight, which is
 * how a real queue loses the increments that should have dead-lettered it. The same script serves
 * a sorted-set pending, where a set holds a job once.
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CycleTally } from '../audit/consequence-rules.js';
import { orStopped } from '../shared/interrupt.js';
import type { FallbackCount } from '../lua/cached-script.js';
import { callReleaseStalled } from '../lua/consequence-scripts.js';
import { connect, type ServerTarget } from '../server/connection.js';
import type { QueueKeys } from '../queue/keys.js';
import { EXPIRED_BY_MS } from '../queue/seed.js';
import { serverTimeMs } from '../server/clock.js';
import type { PendingKind } from '../shared/model.js';

/** Head entries (score-0 members of a sorted set) one call looks at: the bound on its cost when used-up jobs gather in pending. */
const HEAD_BOUND = 100;
const IDLE_MS = 1;

export interface Releaser {
  /**
   * The sweepers are done: lease again what may be, then stop. Resolves to the leases made so;
   * rejects with the signal's reason as soon as the run is stopped.
   */
  finish(): Promise<number>;
  close(): void;
  /** NOSCRIPT replies to the re-leaser's calls, each re-sent as EVAL, so far. */
  readonly noscriptFallbacks: number;
}

/**
 * `signal` stops it: a stopped run's sweepers are done at once, and what is left
 * to lease again (every job of a large run, up to C − 1 times) would otherwise hold its clean-up.
 */
export async function startReleaser(
  target: ServerTarget,
  keys: QueueKeys,
  cycles: number,
  tally: CycleTally,
  pending: PendingKind,
  signal: AbortSignal,
): Promise<Releaser> {
  const redis: Redis = await connect(target);
  let sweepersDone = false;
  let afterDone = 0;
  let failure: unknown;
  const fallbacks: FallbackCount = { noscriptFallbacks: 0 };

  const releasing = (async () => {
    for (;;) {
      signal.throwIfAborted();
      const lastLook = sweepersDone;
      const reply = await callReleaseStalled(
        redis,
        {
          active: keys.active,
          pending: keys.pending,
          prefix: keys.prefix,
          releases: cycles - 1,
          headBound: HEAD_BOUND,
          expiredByMs: EXPIRED_BY_MS,
          kind: pending,
        },
        fallbacks,
      );
      if (reply.length === 0) {
        if (lastLook) return;
        await sleep(IDLE_MS);
        continue;
      }
      tally.addRelease(Number(reply[0]), Number(reply[1]));
      if (lastLook) afterDone++;
    }
  })().catch((err: unknown) => {
    failure = err;
  });

  return {
    async finish() {
      sweepersDone = true;
      // A stopped run does not wait for the call in flight either (on a long pending list one call
      // takes a while): close() cuts its connection, after which the server runs nothing more of it.
      await orStopped(signal, releasing);
      if (failure !== undefined) throw failure;
      return afterDone;
    },
    close() {
      sweepersDone = true;
      redis.disconnect();
    },
    get noscriptFallbacks() {
      return fallbacks.noscriptFallbacks;
    },
  };
}

/** Leases in active whose deadline has passed on the server's clock: work for another round. */
export async function expiredLeases(redis: Redis, keys: QueueKeys): Promise<number> {
  return redis.zcount(keys.active, '-inf', await serverTimeMs(redis));
}

/**
 * Claims a queue before anything is written, so a run never writes over someone's keys, in two
 * phases that no failure can leave half done in a way `clean` would trust:
 *
 *   1. SET the owner marker NX with an expiry (CLAIM_TTL_MS), phase `claiming`: two runs on the
 *      same name cannot both win, and a marker whose run dies here expires by itself;
 *   2. SCAN the queue for any other key (renewing the claim on a long SCAN);
 *   3. only on an empty queue, turn the marker into `owned` (no expiry) and write the run's
 *      heartbeat, in one script that first checks the marker is still this run's.
 *
 * A refused or failed claim deletes only its own marker (by value); when even that fails (a
 * connection lost, an ACL without EVAL, GET or DEL) the marker stays `claiming` and expires.
 * A run that owns its queue then keeps a heartbeat key alive (HEARTBEAT_TTL_MS, refreshed every
 * HEARTBEAT_EVERY_MS), so `clean` from any host refuses a queue whose run is still going.
 */
import type { Redis } from 'ioredis';
import { describeServerError, EmqError, serverError, usageError } from '../errors.js';
import { callKeepClaim, callReleaseMarker } from '../lua/bulk-scripts.js';
import { queuePattern, type QueueKeys } from './keys.js';
import { ownerValue, type OwnerMarker } from './owner-marker.js';

/** How long an unconfirmed (`claiming`) marker lives unless renewed. */
export const CLAIM_TTL_MS = 30_000;
/** A SCAN that takes longer than this renews the unconfirmed claim. */
const CLAIM_RENEW_MS = 10_000;
/** How long a heartbeat lives: `clean` refuses the queue while it does. */
export const HEARTBEAT_TTL_MS = 15_000;
/** How often a live run refreshes its heartbeat. */
export const HEARTBEAT_EVERY_MS = 5_000;

/** A queue this run owns: its marker on the server reads `value`. */
export interface Claim {
  readonly keys: QueueKeys;
  readonly marker: OwnerMarker;
  readonly value: string;
}

/**
 * Claims `keys`' queue for the run `marker` describes (phase `claiming`), and resolves once the
 * queue was found empty and the marker reads `owned`, with the run's heartbeat written. `where`
 * is the server's redacted address, for messages.
 */
export async function claimQueue(redis: Redis, keys: QueueKeys, marker: OwnerMarker, where: string, signal?: AbortSignal): Promise<Claim> {
  const claiming = ownerValue({ ...marker, phase: 'claiming' });
  const won = await redis.set(keys.owner, claiming, 'PX', CLAIM_TTL_MS, 'NX');
  if (won !== 'OK') {
    throw usageError(`queue ${keys.queue} is already in use (${keys.owner} exists): pick another --queue, or remove a kept run's keys`);
  }
  try {
    let renewed = Date.now();
    const existing = await findQueueKeys(redis, keys, 1, keys.owner, async () => {
      signal?.throwIfAborted();
      if (Date.now() - renewed < CLAIM_RENEW_MS) return;
      renewed = Date.now();
      if (!(await callKeepClaim(redis, keys.owner, keys.heartbeat, { from: claiming, to: claiming, markerTtlMs: CLAIM_TTL_MS }))) throw lostClaim(keys);
    });
    if (existing.length > 0) {
      throw usageError(`queue ${keys.queue} already has keys (${existing[0]}): refusing to write over them; pick another --queue`);
    }
    const owned = ownerValue({ ...marker, phase: 'owned' });
    const heartbeat = { ttlMs: HEARTBEAT_TTL_MS, value: marker.run };
    if (!(await callKeepClaim(redis, keys.owner, keys.heartbeat, { from: claiming, to: owned, markerTtlMs: 0, heartbeat }))) throw lostClaim(keys);
    return { keys, marker: { ...marker, phase: 'owned' }, value: owned };
  } catch (err) {
    throw await withClaimReleased(redis, keys, claiming, describeServerError(err, where), where);
  }
}

function lostClaim(keys: QueueKeys): EmqError {
  return serverError(`lost the claim on queue ${keys.queue} while checking it was empty: its marker ${keys.owner} expired or was removed; nothing written`);
}

/**
 * Releases an unconfirmed claim after `failure`. If the release fails too, the line says so, and
 * that the marker is left to expire with nothing else touched; its exit code is the release's
 * (a permission or a lost server is what there is to fix).
 */
async function withClaimReleased(redis: Redis, keys: QueueKeys, claiming: string, failure: EmqError, where: string): Promise<EmqError> {
  try {
    await callReleaseMarker(redis, keys.owner, claiming);
    return failure;
  } catch (err) {
    const release = describeServerError(err, where);
    const left = `its unconfirmed marker ${keys.owner} expires by itself within ${CLAIM_TTL_MS / 1000} s, and clean removes nothing else under such a marker`;
    return new EmqError(`${failure.message}; releasing the claim then failed: ${release.message}; ${left}`, release.exitCode);
  }
}

/** Resolves to 1 if the marker was deleted, 0 if it held something else (or nothing). */
export async function releaseClaim(redis: Redis, keys: QueueKeys, value: string): Promise<number> {
  return callReleaseMarker(redis, keys.owner, value);
}

/** The heartbeat of a run that owns its queue. */
export interface Heartbeat {
  /**
   * Aborted when the run must stop: the marker no longer holds this run's claim (`claimLost`), or
   * the heartbeat could not be refreshed (the reason is the error).
   */
  readonly lost: AbortSignal;
  /** True once a refresh found the marker changed: the queue's keys may no longer be this run's. */
  readonly claimLost: boolean;
  /** Stops refreshing; then removes the heartbeat key unless the claim was lost (best effort: it expires anyway). */
  stop(): Promise<void>;
}

/** Refreshes the claim's heartbeat every HEARTBEAT_EVERY_MS until stopped (claimQueue wrote the first). */
export function keepHeartbeat(redis: Redis, claim: Claim, where: string): Heartbeat {
  const { keys, value } = claim;
  const lost = new AbortController();
  let claimLost = false;
  let inFlight: Promise<void> = Promise.resolve();
  const beat = async (): Promise<void> => {
    try {
      const ours = await callKeepClaim(redis, keys.owner, keys.heartbeat, { from: value, to: value, markerTtlMs: 0, heartbeat: { ttlMs: HEARTBEAT_TTL_MS, value: claim.marker.run } });
      if (!ours) {
        claimLost = true;
        lost.abort(serverError(`queue ${keys.queue} was taken from this run while it ran: its owner marker ${keys.owner} no longer holds this run's claim (removed by hand, or by the clean of an emq-race from before heartbeats); stopped, and none of the queue's keys deleted, since they may no longer be this run's`));
      }
    } catch (err) {
      lost.abort(describeServerError(err, where));
    }
  };
  const timer = setInterval(() => {
    if (!lost.signal.aborted) inFlight = beat();
  }, HEARTBEAT_EVERY_MS);
  // The timer must not keep a finished process alive.
  timer.unref();
  return {
    lost: lost.signal,
    get claimLost() {
      return claimLost;
    },
    async stop() {
      clearInterval(timer);
      await inFlight;
      if (!claimLost) await redis.unlink(keys.heartbeat).catch(() => {});
    },
  };
}

/**
 * Up to `limit` keys of the queue, leaving out `except`. `between` runs before each SCAN page
 * after the first (the claim renews itself there).
 */
export async function findQueueKeys(redis: Redis, keys: QueueKeys, limit: number, except?: string, between?: () => Promise<void>): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    if (cursor !== '0') await between?.();
    const [next, batch] = await redis.scan(cursor, 'MATCH', queuePattern(keys), 'COUNT', 1000);
    cursor = next;
    for (const key of batch) {
      if (key !== except) found.push(key);
      if (found.length >= limit) return found;
    }
  } while (cursor !== '0');
  return found;
}

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
 * HEARTBEAT_EVERY_MS), so `clean` from any host refuses a queue whose run is still going. A run
 * whose process stands still for longer than that (Ctrl-Z, SIGSTOP, a laptop asleep) may lose its
 * queue to `clean` from another host meanwhile: resumed, it finds so, and says that it was paused.
 */
import type { Redis } from 'ioredis';
import { scanPages } from '../server/scan.js';
import { describeServerError, EmqError, serverError, UnlikeRedisReply, usageError } from '../shared/errors.js';
import { callKeepClaim, callReleaseMarker } from '../lua/bulk-scripts.js';
import { FROZEN_MS } from '../server/frozen.js';
import { queueKeys, queuePattern, type QueueKeys } from './keys.js';
import { ownerValue, parseOwnerValue, printableHost, printableRun, stillRunning, type OwnerMarker } from './owner-marker.js';
import { fewNamed, groupThousands } from '../shared/text.js';

/** How long an unconfirmed (`claiming`) marker lives unless renewed. */
const CLAIM_TTL_MS = 30_000;
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

/** The `clean` a line names for what is left: `args` as given, the server as the user gave it (never the URL, which may hold a password), or `how` it must be run otherwise. */
export function cleanCommand(args: string, how = 'and the same --url'): string {
  return `emq-race clean ${args} (${how})`;
}

/** A queue's marker as the claim found it when refusing the queue, with whether its run's heartbeat stands. */
interface FoundMarker {
  readonly value: string | null;
  readonly heartbeat: string | null;
}

/**
 * The claim's refusal of a queue whose marker exists, saying whose it is when the marker is the
 * tool's own: a run still going (its heartbeat stands, it is still claiming, or its process lives
 * on this machine, paused past its heartbeat: `clean`'s own rule), which the user waits for or
 * steps around; or a run that ended and left its keys (--keep, or stopped before its clean-up),
 * which `clean` removes. The marker's run id and host are shown only as the plain words a run
 * writes: a marker is a key anyone may have written.
 */
function inUse(keys: QueueKeys, found?: FoundMarker): EmqError {
  const stem = `queue ${keys.queue} is already in use`;
  const marker = parseOwnerValue(found?.value ?? null);
  if (!found) return usageError(`${stem} (${keys.owner} exists): pick another --queue, or remove a kept run's keys`);
  // Somebody else's key where the tool's marker would be: no run's, and not clean's to remove.
  if (!marker) return usageError(`${stem}: ${keys.owner} exists and was not written by emq-race; pick another --queue`);
  const run = printableRun(marker);
  const host = printableHost(marker);
  const who = [
    run !== undefined ? `run ${run}` : '',
    marker.started > 0 ? `started ${new Date(marker.started).toISOString()}` : '',
    host !== undefined ? `by pid ${marker.pid} on ${host}` : '',
  ].filter(Boolean);
  const named = who.length > 0 ? ` (${who.join(', ')})` : '';
  if (found.heartbeat !== null || marker.phase === 'claiming' || stillRunning(marker))
    return usageError(`${stem} by a run still going${named}: pick another --queue, or let that run end first`);
  return usageError(
    `${stem}: a run that ended${named} left its keys there (kept with --keep, or stopped before it removed them); pick another --queue, or remove them with ${cleanCommand(`--queue ${keys.queue}`)}`,
  );
}

/** The marker and heartbeat of a queue the claim refuses; undefined when they cannot be read (the refusal then names the marker alone). */
async function readMarker(redis: Redis, keys: QueueKeys): Promise<FoundMarker | undefined> {
  try {
    const [value, heartbeat] = await Promise.all([redis.get(keys.owner), redis.get(keys.heartbeat)]);
    return { value, heartbeat };
  } catch {
    return undefined;
  }
}

/** The other queues of a command that are in use too: a few by name, `clean --all` for the rest. Pure. */
function alsoInUse(queues: readonly string[]): string {
  return `this command's ${queues.length === 1 ? 'queue' : 'queues'} ${fewNamed(queues)} ${queues.length === 1 ? 'is' : 'are'} in use too: ${cleanCommand('--all')} lists every queue a run left`;
}

/** The claim's refusal of a queue that holds keys of somebody else's. */
function hasKeys(keys: QueueKeys, key: string): EmqError {
  return usageError(`queue ${keys.queue} already has keys (${key}): refusing to write over them; pick another --queue`);
}

/**
 * Refuses, before anything is written, a command any of whose `queues` already has keys on this
 * server, or any of whose `claimedFirst` (the queues whose claim comes first, and checks them
 * itself) has a marker. Each claim checks its own queue again, but only when its turn comes: without this a
 * command of several modes would race and clean up its first queues before finding the last one
 * taken. One SCAN serves them all: of the queue names' common start, each key found then matched
 * to its queue exactly.
 */
export async function refuseUsedQueues(
  redis: Redis,
  queues: readonly string[],
  where: string,
  signal?: AbortSignal,
  claimedFirst: readonly string[] = [],
): Promise<void> {
  try {
    await findUsedQueue(redis, queues, claimedFirst, signal);
  } catch (err) {
    throw describeServerError(err, where);
  }
}

async function findUsedQueue(redis: Redis, queues: readonly string[], claimedFirst: readonly string[], signal?: AbortSignal): Promise<void> {
  const byPrefix = new Map(queues.map((queue) => [queueKeys(queue).prefix, queueKeys(queue)]));
  if (byPrefix.size + claimedFirst.length === 0) return;
  // A marker first, as the claim finds it first: in use (or kept) says more than a key it holds.
  // Every queue's at once, pipelined: one round trip however many trials and queues the plan has.
  // The first claim's own queues too, so that a refusal names every queue of the command in use,
  // in the words that claim would use; their other keys are left to it.
  const planned = [...claimedFirst.map((queue) => queueKeys(queue)), ...byPrefix.values()];
  const pipeline = redis.pipeline();
  for (const keys of planned) pipeline.get(keys.owner);
  const markers = (await pipeline.exec()) ?? [];
  const taken: QueueKeys[] = [];
  for (const [i, [err, marker]] of markers.entries()) {
    // A first claim's own marker that cannot be read (a key pattern of an ACL) is left to that
    // claim, which says why in its own words.
    if (err && i < claimedFirst.length) continue;
    if (err) throw err;
    const keys = planned[i];
    if (keys && marker !== null) taken.push(keys);
  }
  const [first, ...others] = taken;
  if (first) {
    // Whose marker it is, read again with its heartbeat, only for the queue refused; the others
    // named, so that clearing the one does not just lead to the next refusal.
    const refusal = inUse(first, await readMarker(redis, first));
    if (others.length > 0) refusal.message += `; ${alsoInUse(others.map((keys) => keys.queue))}`;
    throw refusal;
  }
  if (byPrefix.size === 0) return;
  const prefixes = [...byPrefix.keys()];
  let common = prefixes[0] ?? '';
  for (const prefix of prefixes) while (!prefix.startsWith(common)) common = common.slice(0, -1);
  const pattern = `${common.replace(/[*?[\]\\]/g, '\\$&')}*`;
  for await (const batch of scanPages('SCAN', (cursor) => redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000), { signal })) {
    for (const key of batch) {
      const keys = byPrefix.get(key.slice(0, key.indexOf('}:') + 2));
      if (keys) throw key === keys.owner ? inUse(keys, await readMarker(redis, keys)) : hasKeys(keys, key);
    }
  }
}

/**
 * Claims `keys`' queue for the run `marker` describes (phase `claiming`), and resolves once the
 * queue was found empty and the marker reads `owned`, with the run's heartbeat written. `where`
 * is the server's redacted address, for messages.
 */
export async function claimQueue(redis: Redis, keys: QueueKeys, marker: OwnerMarker, where: string, signal?: AbortSignal): Promise<Claim> {
  const claiming = ownerValue({ ...marker, phase: 'claiming' });
  const won: unknown = await redis.set(keys.owner, claiming, 'PX', CLAIM_TTL_MS, 'NX');
  // SET NX answers OK or nil: anything else is a peer that only looks like Redis, not a queue in use.
  if (won !== 'OK' && won !== null) throw new UnlikeRedisReply('SET', 'is neither OK nor nil');
  if (won !== 'OK') throw inUse(keys, await readMarker(redis, keys));
  try {
    let renewed = Date.now();
    const existing = await findQueueKeys(redis, keys, 1, keys.owner, async () => {
      signal?.throwIfAborted();
      if (Date.now() - renewed < CLAIM_RENEW_MS) return;
      renewed = Date.now();
      if (!(await callKeepClaim(redis, keys.owner, keys.heartbeat, { from: claiming, to: claiming, markerTtlMs: CLAIM_TTL_MS }))) throw lostClaim(keys);
    });
    if (existing[0] !== undefined) throw hasKeys(keys, existing[0]);
    // The clean-up deletes with UNLINK: a server that renamed it away, or a user whose ACL leaves
    // it out, is refused here, before anything is written, rather than after the race, when the
    // run's keys could not go. The key unlinked is the heartbeat: the queue was just found empty,
    // and the next call writes it.
    await redis.unlink(keys.heartbeat);
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
    // The same refusal twice (a user without EVALSHA) is said once.
    const why = release.message === failure.message ? ' for the same reason' : `: ${release.message}`;
    return new EmqError(`${failure.message}; releasing the claim then failed${why}; ${left}`, release.exitCode);
  }
}

/** Resolves to 1 if the marker was deleted, 0 if it held something else (or nothing). */
export async function releaseClaim(redis: Redis, keys: QueueKeys, value: string): Promise<number> {
  return callReleaseMarker(redis, keys.owner, value);
}

/** How often a live run checks that its marker and heartbeat are still on the server. */
const PRESENCE_EVERY_MS = 200;

/** The heartbeat of a run that owns its queue. */
export interface Heartbeat {
  /**
   * Aborted when the run must stop: the marker holds another run's claim or a value no run
   * writes (`claimLost`), the
   * run's own keys vanished (`vanished`), or the heartbeat could not be refreshed (the reason is
   * the error).
   */
  readonly lost: AbortSignal;
  /** True once a check found the marker holding another run's claim, or a value no run writes: the queue's keys may no longer be this run's. */
  readonly claimLost: boolean;
  /**
   * True once a check found the marker, the heartbeat or a job hash the run relies on gone from
   * the server (a FLUSHALL, a FLUSHDB or a DEL by another client, or an eviction; or `clean` from
   * another host, once the run's process stood still for longer than its heartbeat lives). What is
   * left is still the run's to delete, once it holds the marker again (see reclaimVanished). A
   * heartbeat that merely expired, the marker still this run's, is written again instead.
   */
  readonly vanished: boolean;
  /**
   * Checks at once that the marker holds this run's claim, that the heartbeat is there, and that
   * each job hash of `jobs` carries the run's id; resolves to the error the run must stop with
   * (and aborts `lost`), or undefined when all is there. `alsoGone`: more job hashes the caller
   * found gone beyond `jobs`, counted in the line once any key is found gone.
   */
  check(jobs?: readonly string[], alsoGone?: number): Promise<EmqError | undefined>;
  /**
   * Stops refreshing; then removes the heartbeat key unless the claim was lost (best effort: it
   * expires anyway). `abandon`: the server goes with the command (the tool's own, after a signal),
   * so neither the refresh in flight nor the removal is waited for.
   */
  stop(abandon?: boolean): Promise<void>;
}

/** The first three keys found gone, and how many more: those found beyond them and `alsoGone`. */
const namedKeys = (gone: readonly string[], alsoGone = 0): string => {
  const more = Math.max(0, gone.length - 3) + alsoGone;
  return more > 0 ? `${gone.slice(0, 3).join(', ')} and ${groupThousands(more)} more` : gone.join(', ');
};

/**
 * Why a run whose keys vanished stopped, naming what it found gone. `userScript`: the run raced the
 * user's own --script, which may call FLUSHALL, FLUSHDB or DEL itself; what the tool sees (the keys
 * gone at a check between calls) does not tell its call from another client's, so both are named,
 * and the built-in strategies, which delete nothing, are not blamed.
 */
function vanishedError(keys: QueueKeys, where: string, gone: readonly string[], alsoGone = 0, userScript = false): EmqError {
  const found = `the keys of queue ${keys.queue} vanished from the server at ${where} while the run was live (${namedKeys(gone, alsoGone)} gone): `;
  return serverError(
    userScript
      ? `${found}the sweep script (--script) removed them (a FLUSHALL, FLUSHDB or DEL of the queue's keys in it), or another client did, or the server evicted them; the run stopped and reports no figures, since the server no longer holds what they would be read from`
      : `${found}another client removed them (FLUSHALL, FLUSHDB or DEL) or the server evicted them; the run stopped and reports no figures, since what the server lost is no strategy's doing`,
  );
}

/** How long the run's own process stood still: what explains the keys the heartbeat found gone after it. */
interface Pause {
  /** How long the process stood still since the claim was last found whole. */
  readonly stoodMs: number;
  /** How long before the check that found the keys gone the heartbeat was last written. */
  readonly sinceBeatMs: number;
}

const seconds = (ms: number): string => `${Math.max(1, Math.round(ms / 1000))} s`;

/**
 * Why a run stopped whose keys vanished while its own process stood still longer than its
 * heartbeat lives: then `clean` from another host may take the queue by design, and the line says
 * so, and which `clean` that is.
 */
function pausedError(keys: QueueKeys, where: string, gone: readonly string[], pause: Pause, alsoGone = 0): EmqError {
  return serverError(
    `this run was paused for ${seconds(pause.stoodMs)} (its process stopped: Ctrl-Z, SIGSTOP or the machine asleep), so its heartbeat ${keys.heartbeat}, ` +
      `last written ${seconds(pause.sinceBeatMs)} before, expired meanwhile (it lives ${HEARTBEAT_TTL_MS / 1000} s), and queue ${keys.queue} was removed from the server at ${where} (${namedKeys(gone, alsoGone)} gone): ` +
      `most likely by emq-race clean --queue ${keys.queue} from another host, which takes a queue whose heartbeat has expired (or by a FLUSHALL, FLUSHDB or DEL); ` +
      "the run stops here, deletes what is left of its keys by name (what it wrote after it resumed included) and reports no figures, since what the server lost is no strategy's doing",
  );
}

/**
 * Why a run stopped whose marker now holds a value no emq-race run writes: another client
 * overwrote it, or the peer at `where` stopped answering as Redis does (a relay that turned to
 * +OK). Either way the keys may not be the run's to delete, and `clean` will not take them.
 */
function overwrittenError(keys: QueueKeys, where: string): EmqError {
  return serverError(
    `the owner marker ${keys.owner} of queue ${keys.queue} now holds a value that no emq-race run writes: another client overwrote it, or the server at ${where} stopped answering as Redis does; ` +
      `stopped, and none of the queue's keys deleted (emq-race clean leaves a queue whose marker is not emq-race's alone: look at ${keys.owner}, and remove the queue's keys by hand if nobody needs them)`,
  );
}

function takenError(keys: QueueKeys): EmqError {
  return serverError(
    `queue ${keys.queue} was taken from this run while it ran: its owner marker ${keys.owner} now holds another run's claim; stopped, and none of the queue's keys deleted, since they may no longer be this run's`,
  );
}

/**
 * Refreshes the claim's heartbeat every HEARTBEAT_EVERY_MS until stopped (claimQueue wrote the
 * first), and checks every PRESENCE_EVERY_MS that the marker and the heartbeat are still there.
 * A tick that comes FROZEN_MS or more late finds that the process stood still (Ctrl-Z, SIGSTOP, a
 * laptop asleep): nothing is concluded from the wait itself, the tick checks (or beats) at once,
 * and when it finds the queue gone the line says that the run was paused, and for how long. A
 * check notices such a pause too, and whether the heartbeat could have expired is judged when its
 * answer is read, so the line does not depend on which came first after the pause.
 * `clock` is the wall clock (a test moves it to stand for a pause). `userScript`: the run races the
 * user's own --script, a suspect of its own when keys vanish (vanishedError).
 */
export function keepHeartbeat(redis: Redis, claim: Claim, where: string, clock: () => number = Date.now, userScript = false): Heartbeat {
  const { keys, value } = claim;
  const runId = claim.marker.run;
  const lost = new AbortController();
  let claimLost = false;
  let vanished = false;
  let inFlight: Promise<void> | undefined;
  // When the heartbeat was last written (asked for); how long the process stood still since a
  // check last found the claim whole, and when that was last noticed.
  let written = clock();
  let stoodMs = 0;
  let stoodSeen = Number.NEGATIVE_INFINITY;
  const stopWith = (err: EmqError): EmqError => {
    if (!lost.signal.aborted) lost.abort(err);
    return lost.signal.reason as EmqError;
  };
  /** Writes the heartbeat while the marker holds this run's claim; false (nothing written) otherwise. */
  const write = async (): Promise<boolean> => {
    const asked = clock();
    const ours = await callKeepClaim(redis, keys.owner, keys.heartbeat, {
      from: value,
      to: value,
      markerTtlMs: 0,
      heartbeat: { ttlMs: HEARTBEAT_TTL_MS, value: runId },
    });
    if (ours) written = asked;
    return ours;
  };
  // The tick (below) notices that the process stood still; so does a check, at its ask and at its
  // answer, since after a pause a check may decide before the first tick comes round.
  let ticked = clock();
  const noticeStood = (now: number): void => {
    // Far later than a tick was due: the process stood still for about that long.
    if (now - ticked - PRESENCE_EVERY_MS >= FROZEN_MS) {
      stoodMs += now - ticked;
      stoodSeen = now;
    }
    ticked = Math.max(ticked, now);
  };
  const check = async (jobs: readonly string[] = [], alsoGone = 0): Promise<EmqError | undefined> => {
    if (lost.signal.aborted) return lost.signal.reason as EmqError;
    const asked = clock();
    noticeStood(asked);
    const pipeline = redis.pipeline().get(keys.owner).get(keys.heartbeat);
    for (const id of jobs) pipeline.hget(keys.job(id), 'run');
    const replies = (await pipeline.exec()) ?? [];
    const values = replies.map(([err, reply]) => {
      if (err) throw err;
      return reply as string | null;
    });
    const [owner, heartbeat, ...hashes] = values;
    // Judged when the answer is read, not when it was asked: a check asked just before the process
    // stood still may reach the server only after it resumed (the bytes not yet sent), and then
    // answers for the time after the pause.
    const answered = clock();
    noticeStood(answered);
    if (owner !== null && owner !== value) {
      claimLost = true;
      return stopWith(parseOwnerValue(owner ?? null) ? takenError(keys) : overwrittenError(keys, where));
    }
    // A heartbeat not written for as long as it lives expired (the process stood still, or the
    // connection waited behind a long call): while the marker holds this run's claim, it is written
    // again rather than mourned. Gone any sooner, someone removed it.
    const lapsed = answered - written >= HEARTBEAT_TTL_MS;
    const rewritten = heartbeat === null && owner === value && lapsed && (await write());
    const gone = [
      ...(owner === null ? [keys.owner] : []),
      ...(heartbeat === null && !rewritten ? [keys.heartbeat] : []),
      ...jobs.filter((_, i) => hashes[i] !== runId).map((id) => keys.job(id)),
    ];
    if (gone.length === 0) {
      // Only a check asked after the pause was seen clears it: one asked before the process stood
      // still, and answered after, says nothing of what happened meanwhile.
      if (asked >= stoodSeen) stoodMs = 0;
      return undefined;
    }
    vanished = true;
    return stopWith(
      stoodMs > 0 && lapsed
        ? pausedError(keys, where, gone, { stoodMs, sinceBeatMs: answered - written }, alsoGone)
        : vanishedError(keys, where, gone, alsoGone, userScript),
    );
  };
  const beat = async (): Promise<void> => {
    try {
      // Not ours: the check says whether the marker is gone or another run's.
      if (!(await write())) await check();
    } catch (err) {
      stopWith(describeServerError(err, where));
    }
  };
  const look = async (): Promise<void> => {
    // A check that fails (a lost server) is the run's own error, found by its next command.
    await check().catch(() => undefined);
  };
  let last = clock();
  const timer = setInterval(() => {
    const now = clock();
    noticeStood(now);
    // One at a time: behind a long script on the same connection, checks wait rather than pile up.
    if (lost.signal.aborted || inFlight) return;
    const due = now - last >= HEARTBEAT_EVERY_MS;
    if (due) last = now;
    inFlight = (due ? beat() : look()).finally(() => (inFlight = undefined));
  }, PRESENCE_EVERY_MS);
  // The timer must not keep a finished process alive.
  timer.unref();
  return {
    lost: lost.signal,
    get claimLost() {
      return claimLost;
    },
    get vanished() {
      return vanished;
    },
    check,
    async stop(abandon = false) {
      clearInterval(timer);
      if (abandon) return;
      await inFlight;
      if (!claimLost) await redis.unlink(keys.heartbeat).catch(() => {});
    },
  };
}

/**
 * Takes the marker back for a run whose keys vanished, so that what is left of them can be
 * deleted by name, with no other run able to claim the queue meanwhile: resolves to true when the
 * marker is this run's again (still there, or written anew as it was), false when another run's
 * claim stands there now (its keys are not this run's to delete). Written anew as `owned`, with
 * no expiry, so that a clean-up cut short leaves a marker `clean` finishes by name.
 */
export async function reclaimVanished(redis: Redis, claim: Claim): Promise<boolean> {
  const { keys, value } = claim;
  const held = await redis.get(keys.owner);
  if (held === value) return true;
  if (held !== null) return false;
  return (await redis.set(keys.owner, value, 'NX')) === 'OK';
}

/**
 * Up to `limit` keys of the queue, leaving out `except`. `between` runs before each SCAN page
 * after the first (the claim renews itself there).
 */
export async function findQueueKeys(redis: Redis, keys: QueueKeys, limit: number, except?: string, between?: () => Promise<void>): Promise<string[]> {
  const found: string[] = [];
  for await (const batch of scanPages('SCAN', (cursor) => redis.scan(cursor, 'MATCH', queuePattern(keys), 'COUNT', 1000), { between })) {
    for (const key of batch) {
      if (key !== except) found.push(key);
      if (found.length >= limit) return found;
    }
  }
  return found;
}

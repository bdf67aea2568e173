/**
 * Deletes exactly the keys a run created, by name, with UNLINK. Never by pattern and never a
 * FLUSH: whatever else lives on the server is not the tool's to touch. The one exception is a
 * library run's namespace, `emq:{Q}:LIBRARY:`, whose keys the library names itself: inside a
 * queue the run claimed empty, they are found there by SCAN (see libraryPrefix in keys.ts).
 */
import type { Redis } from 'ioredis';
import type { ServerTarget } from '../server/connection.js';
import { busyAdviceGiven, describeServerError, isBusyReply, ServerGoneError, stoppedAnswering, unknownCommandIn, type EmqError } from '../shared/errors.js';
import { scanPages } from '../server/scan.js';
import { libraryPattern, type QueueKeys } from './keys.js';
import { cleanCommand, HEARTBEAT_TTL_MS } from './owner-claim.js';
import { unlinkRunKeys } from './seed.js';
import { ClaimedElsewhere, deleteFollowingSlot, slotMoved } from './slot-follow.js';

const CHUNK = 1000;

/**
 * Unlinks the run's keys (createdKeys in keys.ts: its lists and sets, then its job hashes, then its
 * marker) and resolves to how many existed. The job hashes go in chunks, several in flight at
 * once, in the order seeding created them, which is the order they lie in the server's memory. The
 * owner marker goes last, once every other key is gone, so a queue cut short (a lost server, a
 * third signal) still carries the marker that `emq-race clean` needs to finish the job.
 */
export async function deleteRunKeys(redis: Redis, keys: QueueKeys, jobCount: number, library?: string): Promise<number> {
  const deleted = library ? await unlinkLibraryKeys(redis, keys, library) : 0;
  return deleted + (await unlinkRunKeys(keys, jobCount, (names) => redis.unlink(...names)));
}

/** Unlinks every key under a library run's namespace `emq:{Q}:LIBRARY:`, found by SCAN; resolves to how many went. */
export async function unlinkLibraryKeys(
  redis: Redis,
  keys: QueueKeys,
  library: string,
  signal?: AbortSignal,
  unlink: (batch: readonly string[]) => Promise<number> = (batch) => redis.unlink(...batch),
): Promise<number> {
  let deleted = 0;
  // `clean` stops between calls on a signal, and deletes only while the marker it read stands; a
  // run's own clean-up passes neither and goes on.
  for await (const batch of scanPages('SCAN', (cursor) => redis.scan(cursor, 'MATCH', libraryPattern(keys, library), 'COUNT', CHUNK), { signal })) {
    if (batch.length > 0) deleted += await unlink(batch);
  }
  return deleted;
}

/**
 * The end of a run that owned its queue: deletes its keys, however many signals came (only a
 * third leaves without them, and that leaves the process too), unless the server has stopped
 * answering (one wait for it is enough). What cannot be deleted is said once: appended to the
 * run's `failure` when there is one, so a failed run still ends in one line. A run that went well
 * but could not delete its keys (an ACL without UNLINK, a lost connection) resolves to the error
 * it must end with. `reconnected`: `admin` is a fresh connection, the run's own having closed
 * under it; a failure's line then says that the keys went all the same. `again`: one fresh
 * connection on which the marker is still the run's, for a deletion whose connection closed under
 * it (a CLIENT KILL) on a server that still answers; `claimed` when another run's claim stands
 * there now, undefined when none can be had. `follow`: the session's server and the run's marker,
 * with which a deletion that meets MOVED, ASK or TRYAGAIN (the queue's slot moved under the run)
 * goes on where the slot now lies (slot-follow.ts).
 */
export async function cleanUpRun(
  admin: Redis,
  keys: QueueKeys,
  jobCount: number,
  failure: EmqError | undefined,
  where: string,
  {
    library,
    reconnected = false,
    serverGoes = false,
    closedBy = new Error('Connection is closed.'),
    again,
    follow,
  }: {
    readonly library?: string | undefined;
    readonly reconnected?: boolean;
    readonly serverGoes?: boolean;
    readonly closedBy?: unknown;
    readonly again?: () => Promise<Redis | 'claimed' | undefined>;
    readonly follow?: { readonly target: ServerTarget; readonly ownerValue: string };
  } = {},
): Promise<EmqError | undefined> {
  // Nothing to delete, and nothing to tell: the server went with every key on it.
  if (failure instanceof ServerGoneError) return undefined;
  let cause: unknown = closedBy;
  let claimedSince = false;
  // A server that held the run up with a script answers (BUSY, at once) though a call of the run's
  // went unanswered while the script ran: its keys are worth one try, the script may have ended.
  if (admin.status === 'ready' && (!stoppedAnswering(where) || isBusyReply(failure))) {
    try {
      await deleteRunKeys(admin, keys, jobCount, library);
      if (reconnected && failure) failure.message += '; its keys were removed over a new connection';
      return undefined;
    } catch (err) {
      cause = err;
    }
    // The queue's slot moved under the run (a resharding): its keys are deleted where they now are.
    // (A library run, whose keys the library names, is refused on a cluster and never gets here.)
    if (follow && !library && slotMoved(cause)) {
      try {
        const elsewhere = await deleteFollowingSlot(admin, follow.target, keys, jobCount, follow.ownerValue);
        const said = elsewhere.length > 0 ? `; its keys were removed, following the slot to ${elsewhere.join(' and ')}` : '; its keys were removed';
        if (failure) failure.message += said;
        return undefined;
      } catch (err) {
        if (err instanceof ClaimedElsewhere) claimedSince = true;
        else cause = err;
      }
    }
    // The connection closed under the deletion itself, the server still answering: once more, from
    // the start (the marker goes last, so it still stands), over one fresh connection.
    const closed = admin.status !== 'ready' && !isBusyReply(cause) && !stoppedAnswering(where);
    const fresh = closed && again ? await again().catch(() => undefined) : undefined;
    if (fresh === 'claimed') claimedSince = true;
    else if (fresh) {
      try {
        await deleteRunKeys(fresh, keys, jobCount, library);
        if (failure) failure.message += '; its keys were removed over a new connection';
        return undefined;
      } catch (err) {
        cause = err;
      } finally {
        fresh.disconnect();
      }
    }
  }
  // The tool's own server, stopped as the command ends, takes what could not be deleted with it:
  // no line sends the user to a server that will be gone.
  if (serverGoes) return undefined;
  // Whatever is left under the queue is no longer this run's to delete, nor to send `clean` after.
  const hint = claimedSince
    ? `another run has claimed queue ${keys.queue} since, so no more of its keys were deleted`
    : keysLeftHint(keys.queue, cause, busyAdviceGiven(failure));
  if (failure) {
    failure.message += `; ${hint}`;
    return undefined;
  }
  const error = describeServerError(cause, where);
  error.message += `; ${hint}`;
  return error;
}

/**
 * Said when the clean-up itself was refused with BUSY: a script still holds the server, and it
 * goes on after the run has ended (a client that leaves does not stop its script). The tool stops
 * no script itself: SCRIPT KILL stops whichever one runs, and by then it may not be the run's.
 */
const STILL_BUSY =
  "the server still refuses every call with BUSY, as a script is still running on it: if it is the run's (--script, or a library's), stop it with redis-cli SCRIPT KILL, or SHUTDOWN NOSAVE once it has written";

/**
 * What a run says of keys it could not delete, by `cause`, what kept them: the `clean` that
 * removes them, after the words that free the server first when a script holds it (BUSY).
 */
export function keysLeftHint(queue: string, cause: unknown, advised = false): string {
  // The same user would be refused the same way: `clean` needs one the ACL lets delete them.
  if (/^NOPERM/.test(String((cause as Error)?.message))) return leftBehindHint(queue, 'the same server, as a user its ACL lets delete them: this one may not');
  // A server that renamed UNLINK away: `clean` deletes with it too, so it would fail the same way.
  if (unknownCommandIn(String((cause as Error)?.message))?.toUpperCase() === 'UNLINK')
    return `the keys of queue ${queue} (emq:{${queue}}:*) may remain on the server, and emq-race clean deletes with UNLINK too: remove them with the command this server renamed UNLINK to, or with DEL`;
  if (!isBusyReply(cause)) return leftBehindHint(queue);
  // The line it is added to may already say how to free the server: then only what follows.
  return advised ? `once it answers again, ${leftBehindHint(queue)}` : `${STILL_BUSY}; once it answers again, ${leftBehindHint(queue)}`;
}

/**
 * What a --keep run that failed says of its keys: left, on purpose, and how to remove them; on the
 * tool's own server, kept with them, `clean` needs that server's URL, which the user never gave.
 */
export function keptHint(queue: string, target: Pick<ServerTarget, 'display' | 'own'>): string {
  const clean = target.own ? `emq-race clean --queue ${queue} --url ${target.display}` : cleanCommand(`--queue ${queue}`);
  return `the keys of queue ${queue} (emq:{${queue}}:*) are kept (--keep): remove them with ${clean}`;
}

/**
 * The line that tells a person how to remove what a run could not. `clean` refuses a queue while
 * its run's heartbeat lives, up to HEARTBEAT_TTL_MS after the run stopped: the line says so, so
 * that the first try does not read as a live run. `where`: how `clean` must be run, when not simply
 * against the same --url.
 */
export function leftBehindHint(queue: string, where?: string): string {
  return `the keys of queue ${queue} (emq:{${queue}}:*) may remain on the server: remove them with ${cleanCommand(`--queue ${queue}`, where)}; if it finds the run's heartbeat still there, it lets the queue go within ${HEARTBEAT_TTL_MS / 1000} s`;
}

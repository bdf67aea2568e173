/**
 * The life of anything that writes a queue (a race's mode, an explain replay): claim the queue,
 * keep the run's heartbeat while the work runs, then delete the run's keys on every path (however
 * many signals came) unless --keep says otherwise, or the claim was taken from the run while it
 * ran (its keys may be another run's by then). Only a third signal leaves without them, and it
 * prints the `clean` line this run owes. A run whose keys vanished (a FLUSHALL, another client's
 * DEL, an eviction) stops and ends with exit 3 whatever it was doing; what is left of its keys is
 * deleted all the same, once it holds the marker again, so that nothing stays that `clean` would
 * refuse. A run whose admin connection closed under it (a CLIENT KILL on a healthy server) tidies
 * up on one fresh connection, once it finds the marker still its own there.
 */
import type { Redis } from 'ioredis';
import { busyAdviceGiven, describeServerError, isBusyReply, ServerGoneError, serverError, stoppedAnswering, type EmqError } from '../shared/errors.js';
import { stopCause, type Interrupts } from '../shared/interrupt.js';
import { connect, serverGoesWithSignal, type ServerTarget } from '../server/connection.js';
import { cleanUpRun, keptHint, keysLeftHint, leftBehindHint } from './cleanup.js';
import type { QueueKeys } from './keys.js';
import { claimQueue, keepHeartbeat, reclaimVanished, type Claim } from './owner-claim.js';
import { newOwnerMarker, newRunId } from './owner-marker.js';

export interface ClaimedRun {
  /** The id the owner marker and every job hash carry. */
  readonly runId: string;
  /** Aborted by a signal, or by a heartbeat that found the claim gone or could not beat. */
  readonly signal: AbortSignal;
  /**
   * Throws when the run's marker, its heartbeat, or the hash of any of `jobs` is no longer there
   * as the run wrote it: what reads the queue back checks this before it trusts what it reads.
   * `alsoGone`: more job hashes the caller found gone beyond `jobs`, counted in the line.
   */
  confirmKeys(jobs?: readonly string[], alsoGone?: number): Promise<void>;
}

export interface ClaimPlan {
  readonly admin: Redis;
  /** The server `admin` is connected to: the clean-up connects there again if `admin` closed. */
  readonly target: ServerTarget;
  readonly keys: QueueKeys;
  /** Every job the run will seed (expired and live): the marker records it for `clean`. */
  readonly jobs: number;
  readonly keep: boolean;
  /** A library run's library: its keys are the namespace `emq:{Q}:LIBRARY:` (see libraryPrefix in keys.ts). */
  readonly library?: string;
  /** The run races the user's own --script: keys that vanish may be its doing, and the line says so. */
  readonly userScript?: boolean;
}

export async function onClaimedQueue<T>(plan: ClaimPlan, interrupts: Interrupts, work: (run: ClaimedRun) => Promise<T>): Promise<T> {
  const { admin, keys } = plan;
  const where = plan.target.display;
  const runId = newRunId();
  interrupts.signal.throwIfAborted();
  let claim: Claim;
  try {
    claim = await claimQueue(admin, keys, newOwnerMarker(runId, plan.jobs, plan.library), where, interrupts.signal);
  } catch (err) {
    throw stopCause(interrupts.signal) ?? describeServerError(err, where);
  }
  // From here the queue holds keys of the run's: a third signal names the line that removes them
  // (--keep or not: a run a signal stops deletes its keys, below). Leaving at once may leave the
  // heartbeat too (a server too slow to take its removal), and `clean` refuses the queue until it
  // expires. Not on the tool's own server, which goes with the process, every key on it.
  const serverGoes = plan.target.own !== undefined;
  const settle = serverGoes ? () => undefined : interrupts.owe(leftBehindHint(keys.queue));
  // The tool's own server goes with a command a signal stopped: the calls in flight on the run's
  // connection (seeding's, the audit's) are dropped at once rather than waited for (a paused
  // server would hold them for the whole bounded wait), and nothing is sent on it after (below).
  const dropAdmin = (): void => {
    if (serverGoesWithSignal(plan.target, interrupts.signal)) admin.disconnect();
  };
  if (serverGoes) interrupts.signal.addEventListener('abort', dropAdmin, { once: true });
  const heartbeat = keepHeartbeat(admin, claim, where, Date.now, plan.userScript === true);
  const signal = AbortSignal.any([interrupts.signal, heartbeat.lost]);
  const confirmKeys = async (jobs?: readonly string[], alsoGone = 0): Promise<void> => {
    const gone = await heartbeat.check(jobs, alsoGone);
    if (gone) throw gone;
  };
  let failure: EmqError | undefined;
  try {
    const result = await work({ runId, signal, confirmKeys });
    // A signal (or a lost claim) during the last step, whose reply still came, stops the run here:
    // nothing of it is reported; nor is a result read from a queue whose keys vanished meanwhile.
    signal.throwIfAborted();
    await confirmKeys();
    return result;
  } catch (err) {
    // Whatever the work stumbled on, keys that vanished under it are the cause to report.
    // (Not on a server that stopped answering: one wait for it is enough.)
    if (!heartbeat.lost.aborted && !interrupts.signal.aborted && admin.status === 'ready' && !stoppedAnswering(where))
      await heartbeat.check().catch(() => undefined);
    // A heartbeat refused with BUSY while the work's own call was too: the work knows whose script
    // held the server (a library's race says so), the heartbeat only that one did.
    const lost = heartbeat.lost.aborted && !(isBusyReply(heartbeat.lost.reason) && isBusyReply(err)) ? heartbeat.lost : undefined;
    failure = stopCause(interrupts.signal) ?? describeServerError(lost ? lost.reason : err, where);
    throw failure;
  } finally {
    try {
      // The tool's own server, after a signal, is stopped with everything on it as the command ends:
      // the heartbeat's removal and the keys' would only wait on it (a paused server, the whole
      // bounded wait each).
      const goesNow = serverGoesWithSignal(plan.target, interrupts.signal);
      await heartbeat.stop(goesNow);
      // --keep keeps what a run wrote for the user to read, but a run a signal stopped leaves
      // nothing behind, as its embedded server goes with it: the first signal's line says so.
      const keep = plan.keep && !interrupts.signal.aborted;
      // A failover drill's pair goes with a failed run, --keep or not: nothing is kept to tell of.
      if (keep && failure && plan.target.own !== 'run') failure.message += `; ${keptHint(keys.queue, plan.target)}`;
      if (!keep && !heartbeat.claimLost && !goesNow) {
        const { redis: tidy, refusal } = await cleanUpConnection(admin, plan.target, failure);
        try {
          // A fresh connection finds the marker as the run left it, or not: while the old one was
          // gone, the heartbeat went unwritten, and the queue may have been cleaned or claimed since.
          // Undefined: the marker could not be taken back (a lost server), so nothing is deleted.
          const { ours, cause = refusal }: { ours: boolean | undefined; cause?: unknown } =
            heartbeat.vanished || tidy !== admin
              ? await reclaimVanished(tidy, claim).then(
                  (ours) => ({ ours }),
                  (cause: unknown) => ({ ours: undefined, cause }),
                )
              : { ours: true };
          if (ours) {
            const error = await cleanUpRun(tidy, keys, plan.jobs, failure, where, {
              library: plan.library,
              reconnected: tidy !== admin,
              serverGoes,
              closedBy: refusal,
              follow: { target: plan.target, ownerValue: claim.value },
              // Only on the run's own connection: a fresh one that closed too is not tried again.
              ...(tidy === admin ? { again: () => reconnectedOwner(plan.target, claim) } : {}),
            });
            // A run that went well but could not remove its keys (no +unlink) ends with that error.
            // biome-ignore lint/correctness/noUnsafeFinally: a clean-up that failed is the run's outcome when the work itself went well
            if (error) throw error;
          } else {
            // Keys left on the tool's own server go with it: nothing to tell of them.
            const left =
              ours === false
                ? `; another run has claimed queue ${keys.queue} since, so none of its keys were deleted`
                : serverGoes
                  ? ''
                  : `; ${keysLeftHint(keys.queue, cause, busyAdviceGiven(failure))}`;
            if (failure) failure.message += left;
            // A run whose connection closed after its last step, and whose keys could not be reached again.
            // biome-ignore lint/correctness/noUnsafeFinally: keys left behind are the run's outcome when the work itself went well
            else throw serverError(`lost the connection to the server at ${where}${left}`);
          }
        } finally {
          if (tidy !== admin) tidy.disconnect();
        }
      }
    } finally {
      interrupts.signal.removeEventListener('abort', dropAdmin);
      settle();
    }
  }
}

/**
 * The connection a run's clean-up goes over: `admin` while it stands; else one fresh connection to
 * the same server (connect's own options and bounded wait), so that a connection closed under a
 * run on a healthy server (a CLIENT KILL) does not leave its keys behind. Not on a server that
 * stopped answering (one wait for it is enough) nor on one gone with its keys; and `admin`, closed
 * as it is, when none can be opened, with the error that refused it (a server still held up by a
 * script refuses one with BUSY): the clean-up then says what remains, and why.
 */
async function cleanUpConnection(
  admin: Redis,
  target: ServerTarget,
  failure: EmqError | undefined,
): Promise<{ readonly redis: Redis; readonly refusal?: unknown }> {
  // A server a script held up answers again (BUSY at once, while the script runs) though a call
  // went unanswered meanwhile, and the connection that waited for it was closed: worth one try.
  const silent = stoppedAnswering(target.display) && !isBusyReply(failure);
  const standing = admin.status === 'ready' && admin.stream?.writable !== false;
  if (standing || failure instanceof ServerGoneError || silent) return { redis: admin };
  return connect(target).then(
    (redis) => ({ redis }),
    (refusal: unknown) => ({ redis: admin, refusal }),
  );
}

/**
 * One fresh connection to `target` on which the run's marker is its own (still there, or written
 * back): what its clean-up goes on over when its connection closed midway. `claimed` when another
 * run's claim stands there now, whose keys are not this run's to delete; undefined when the marker
 * could not be read or taken back (the clean-up then says what remains, from its first cause).
 */
async function reconnectedOwner(target: ServerTarget, claim: Claim): Promise<Redis | 'claimed' | undefined> {
  const fresh = await connect(target);
  let ours: boolean | undefined;
  try {
    ours = await reclaimVanished(fresh, claim);
  } catch {
    ours = undefined;
  }
  if (ours) return fresh;
  fresh.disconnect();
  return ours === false ? 'claimed' : undefined;
}

/**
 * `step` over `admin`, or over one fresh connection to the same server when `admin` closed under
 * the run (cleanUpConnection's rule): what the run made on the server that is not a key of its
 * queue (the function mode's library) is removed however the admin connection ended.
 */
export async function overLiveConnection<T>(admin: Redis, target: ServerTarget, step: (redis: Redis) => Promise<T>): Promise<T> {
  const { redis } = await cleanUpConnection(admin, target, undefined);
  try {
    return await step(redis);
  } finally {
    if (redis !== admin) redis.disconnect();
  }
}

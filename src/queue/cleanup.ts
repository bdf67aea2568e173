/**
 * Deletes exactly the keys a run created, by name, with UNLINK. Never by pattern and never a
 * FLUSH: whatever else lives on the server is not the tool's to touch.
 */
import type { Redis } from 'ioredis';
import { describeServerError, stoppedAnswering, type EmqError } from '../errors.js';
import type { Interrupts } from '../interrupt.js';
import { createdKeys, type QueueKeys } from './keys.js';

const CHUNK = 1000;

/**
 * Unlinks the run's keys in chunks and resolves to how many existed. `stop` (a second Ctrl-C)
 * ends it between chunks; the owner marker goes last, so a queue cut short still carries the
 * marker that `emq-race clean` needs to finish the job.
 */
export async function deleteRunKeys(redis: Redis, keys: QueueKeys, jobCount: number, stop?: AbortSignal): Promise<number> {
  let deleted = 0;
  let names: string[] = [];
  for (const key of createdKeys(keys, jobCount)) {
    names.push(key);
    if (names.length === CHUNK) {
      stop?.throwIfAborted();
      deleted += await redis.unlink(...names);
      names = [];
    }
  }
  stop?.throwIfAborted();
  if (names.length > 0) deleted += await redis.unlink(...names);
  return deleted;
}

/**
 * The end of a run that owned its queue: deletes its keys unless a second signal says not to, or
 * the server has stopped answering (one wait for it is enough). What cannot be deleted is said
 * once: appended to the run's `failure` when there is one, so a failed run still ends in one
 * line. A run that went well but could not delete its keys (an ACL without UNLINK) resolves to
 * the error it must end with; `warn` takes the line for a hurried exit.
 */
export async function cleanUpRun(
  admin: Redis,
  keys: QueueKeys,
  jobCount: number,
  interrupts: Interrupts,
  failure: EmqError | undefined,
  where: string,
  warn: ((line: string) => void) | undefined,
): Promise<EmqError | undefined> {
  const hint = leftBehindHint(keys.queue);
  let cause: unknown;
  if (!interrupts.hurried && admin.status === 'ready' && !stoppedAnswering(where)) {
    try {
      await deleteRunKeys(admin, keys, jobCount, interrupts.hurry);
      return undefined;
    } catch (err) {
      cause = err;
    }
  }
  if (!interrupts.hurried) {
    if (failure) {
      failure.message += `; ${hint}`;
      return undefined;
    }
    if (cause !== undefined) {
      const error = describeServerError(cause, where);
      error.message += `; ${hint}`;
      return error;
    }
  }
  warn?.(hint);
  return undefined;
}

/** The line that tells a person how to remove what a run could not. */
export function leftBehindHint(queue: string): string {
  return `the keys of queue ${queue} (emq:{${queue}}:*) may remain on the server: remove them with emq-race clean --queue ${queue} (and the same --url)`;
}

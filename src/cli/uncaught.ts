/**
 * An exception that reaches no caller of the tool's: the Redis client's, thrown inside a socket's
 * data handler when a peer sends a reply no command asked for, or a bug of the tool's in a callback
 * no promise carries. Node would print its stack and exit 1 (which the tool's exit codes read as
 * "an --expect failed"), leaving the run's keys on the server. Instead the command that runs is
 * stopped as a first signal stops it: it cleans up, then ends with the exception as its error.
 */
import { CodeBugError, raisedReadingReplies, unaskedReply, type EmqError } from '../shared/errors.js';
import { stopEveryWatch } from '../shared/interrupt.js';
import { untrustedConnection } from '../server/connection.js';

/** What the exception means: a peer that does not speak Redis when the client raised it reading replies, else a bug. */
export function meaning(err: unknown): EmqError {
  if (raisedReadingReplies(err)) return unaskedReply(untrustedConnection());
  return new CodeBugError(err instanceof Error ? err : new Error(String(err)));
}

/** The commands under way (run() calls nest in-process) and how each hears of an exception no run watched. */
const commands = new Set<(err: EmqError) => void>();

function onUncaught(err: unknown): void {
  const error = meaning(err);
  // A run that watches signals cleans up and ends with the error; a command with no run under
  // way (nothing written yet, or all of it removed) ends with it at once.
  if (stopEveryWatch(error)) return;
  for (const fail of commands) fail(error);
}

/**
 * Catches, while a command runs, every exception that reaches the top: `failed` rejects with it
 * when no run watched (stopEveryWatch), and `release()` gives the process back its default. The
 * capture callback, not an `uncaughtException` listener: with one, an exception goes to it alone,
 * so a command run in-process (the tests' runCli) ends with its exit code while the test runner,
 * which listens for uncaught exceptions itself, hears nothing. A rejection nobody handles reaches
 * it too where nothing listens for unhandled rejections (the tool's own process); a test runner's
 * listener takes those as the bugs they are.
 */
export function catchUncaught(): { readonly failed: Promise<never>; release(): void } {
  let fail!: (err: EmqError) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});
  // Another owner of the callback (the domain module) is left alone: the process's default then stands.
  const own = commands.size > 0 || !process.hasUncaughtExceptionCaptureCallback();
  if (own && commands.size === 0) process.setUncaughtExceptionCaptureCallback(onUncaught);
  if (own) commands.add(fail);
  return {
    failed,
    release() {
      if (!commands.delete(fail)) return;
      if (commands.size === 0) process.setUncaughtExceptionCaptureCallback(null);
    },
  };
}

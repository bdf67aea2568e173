/**
 * The user's own sweep script as the sweeper, under the built-in script's KEYS/ARGV contract. What
 * it moved is what it returns; the audit cross-checks those returns against the server.
 */
import { CachedScript } from '../lua/cached-script.js';
import { heldServerError, isBusyReply, serverError } from '../shared/errors.js';
import { oneCallSweeper } from './one-call.js';
import { scriptErrorParts } from './user-script.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

/** A server's error reply (as opposed to a lost connection), with its message. */
function replyErrorMessage(err: unknown): string | undefined {
  return err instanceof Error && err.name === 'ReplyError' ? err.message : undefined;
}

/** A failing script's reply as its writer reads it (see scriptErrorParts): what, then at which line; the reply's first line as it is where no line is named. */
export function scriptFailureWords(message: string): string {
  const { words, line } = scriptErrorParts(message);
  return line === undefined ? (message.split('\n')[0] ?? '') : `${words}, at line ${line} of the script`;
}

export function scriptSweeper(context: SweeperContext): Sweeper {
  const source = context.userScript;
  if (source === undefined) throw new Error('the script mode needs the script source');
  // The script was loaded before seeding; only a flushed script cache sends it again in full.
  const script = new CachedScript(source);
  return oneCallSweeper(context, {
    send: async (keys, argv) => {
      try {
        return await script.call(context.redis, keys, argv, context.faults?.afterSend);
      } catch (err) {
        // Another sweeper's call of the same script held the server past its busy-reply-threshold:
        // not this call failing, but the script's length, which is a finding about the script.
        if (isBusyReply(err)) {
          throw heldServerError(
            'the sweep script (--script)',
            ': one call of it blocks every client of the server longer than the server lets a script run; check that it ends (a loop whose end never comes holds the server for good), or make a call do less (a smaller --batch), and race again',
          );
        }
        // The user's script failing is a fact about the script, said as such.
        const message = replyErrorMessage(err);
        if (message !== undefined) throw serverError(`the sweep script failed while running: ${scriptFailureWords(message)}`);
        throw err;
      }
    },
    fallbacks: () => script.fallbacks,
  });
}

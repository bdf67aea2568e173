/**
 * The user's own sweep script as the sweeper, under the built-in script's KEYS/ARGV contract. What
 * it moved is what it returns; the audit cross-checks those returns against the server.
 */
import { CachedScript } from '../cached-script.js';
import { serverError } from '../errors.js';
import { MoveLog } from '../move-log.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

/** A server's error reply (as opposed to a lost connection), with its message. */
function replyErrorMessage(err: unknown): string | undefined {
  return err instanceof Error && err.name === 'ReplyError' ? err.message : undefined;
}

/** The script's return value as ids: nil (nothing moved) is an empty list, anything not a list is refused. */
export function returnedIds(reply: unknown): { ids: number[]; stray: number } {
  if (reply === null || reply === undefined) return { ids: [], stray: 0 };
  if (!Array.isArray(reply)) {
    throw serverError(`the sweep script returned ${JSON.stringify(reply)}, not an array of the job ids it moved`);
  }
  const ids: number[] = [];
  let stray = 0;
  for (const item of reply) {
    const id = typeof item === 'string' && /^\d+$/.test(item) ? Number(item) : typeof item === 'number' ? item : Number.NaN;
    if (Number.isSafeInteger(id) && id > 0 && id <= 0x7fffffff) ids.push(id);
    else stray++;
  }
  return { ids, stray };
}

export function scriptSweeper(context: SweeperContext): Sweeper {
  const { redis, keys, batch, maxStalled, clock } = context;
  const source = context.userScript;
  if (source === undefined) throw new Error('the script mode needs the script source');
  const script = new CachedScript(source);
  const record = new MoveLog();
  let calls = 0;
  let stray = 0;

  // The script was loaded before seeding; only a flushed script cache sends it again in full.
  const call = (args: readonly (string | number)[]): Promise<unknown> => {
    calls++;
    return script.call(redis, [keys.active, keys.pending, keys.dead], args, context.faults?.afterSend);
  };

  return {
    record,
    get commands() {
      // Each NOSCRIPT fallback is one more round trip (the EVAL).
      return calls + script.fallbacks;
    },
    get noscriptFallbacks() {
      return script.fallbacks;
    },
    get strayIds() {
      return stray;
    },
    async sweep() {
      let reply: unknown;
      try {
        reply = await call([clock.now(), batch, maxStalled, keys.prefix, context.pending ?? 'list']);
      } catch (err) {
        const message = replyErrorMessage(err);
        if (message !== undefined) throw serverError(`the sweep script failed while running: ${message.split('\n')[0]}`);
        throw err;
      }
      const returned = returnedIds(reply);
      stray += returned.stray;
      for (const id of returned.ids) record.add(id, 'unknown');
      return returned.ids.length + returned.stray;
    },
  };
}

/**
 * The user's own sweep script as the sweeper, under the built-in script's KEYS/ARGV contract. What
 * it moved is what it returns; the audit cross-checks those returns against the server.
 */
import { createHash } from 'node:crypto';
import { serverError } from '../errors.js';
import { MoveLog } from '../move-log.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

/** The script's return value as ids: nil (nothing moved) is an empty list, anything not a list is refused. */
/** A server's error reply (as opposed to a lost connection), with its message. */
function replyErrorMessage(err: unknown): string | undefined {
  return err instanceof Error && err.name === 'ReplyError' ? err.message : undefined;
}

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
  const sha = createHash('sha1').update(source).digest('hex');
  const record = new MoveLog();
  let commands = 0;
  let stray = 0;

  const call = async (...args: (string | number)[]): Promise<unknown> => {
    commands++;
    try {
      return await redis.call('EVALSHA', sha, 3, ...args);
    } catch (err) {
      // The script was loaded before seeding; only a flushed script cache sends it again in full.
      if (!replyErrorMessage(err)?.startsWith('NOSCRIPT')) throw err;
      commands++;
      return redis.call('EVAL', source, 3, ...args);
    }
  };

  return {
    record,
    get commands() {
      return commands;
    },
    get strayIds() {
      return stray;
    },
    async sweep() {
      let reply: unknown;
      try {
        reply = await call(keys.active, keys.pending, keys.dead, clock.now(), batch, maxStalled, keys.prefix, context.pending ?? 'list');
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

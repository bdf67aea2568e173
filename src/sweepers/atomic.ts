/**
 * The atomic form: the whole sweep is one Lua script call. The server runs one script at a time,
 * so two sweepers never interleave inside detect, move and count.
 */
import { MoveLog } from '../move-log.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

export function atomicSweeper(context: SweeperContext): Sweeper {
  const { redis, keys, batch, maxStalled, clock } = context;
  const record = new MoveLog();
  let commands = 0;

  return {
    record,
    get commands() {
      return commands;
    },
    async sweep() {
      commands++;
      const moved = await redis.sweepStalled(keys.active, keys.pending, keys.dead, clock.now(), batch, maxStalled, keys.prefix, context.pending ?? 'list');
      // The script moves every id it detects, so detected and moved are the same list.
      for (const id of moved) record.add(Number(id), 'unknown');
      return moved.length;
    },
  };
}

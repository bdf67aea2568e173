/**
 * The atomic form: the whole sweep is one Lua script call. The server runs one script at a time,
 * so two sweepers never interleave inside detect, move and count.
 */
import { performance } from 'node:perf_hooks';
import { LatencyLog } from '../call-latency.js';
import { MoveLog } from '../move-log.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

export function atomicSweeper(context: SweeperContext): Sweeper {
  const { redis, keys, batch, maxStalled, clock } = context;
  const record = new MoveLog();
  const latency = new LatencyLog();
  let commands = 0;

  return {
    record,
    latency,
    get commands() {
      return commands;
    },
    async sweep() {
      commands++;
      const sent = performance.now();
      const moved = await redis.sweepStalled(keys.active, keys.pending, keys.dead, clock.now(), batch, maxStalled, keys.prefix);
      latency.add(performance.now() - sent);
      // The script moves every id it detects, so detected and moved are the same list.
      for (const id of moved) record.add(Number(id), 'unknown');
      return moved.length;
    },
  };
}

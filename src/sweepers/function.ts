/**
 * The atomic sweep as a Redis Function: one FCALL per sweep, run by the server from start to
 * finish like a script. The library is loaded for the run (see function-library.ts).
 */
import { performance } from 'node:perf_hooks';
import { LatencyLog } from '../call-latency.js';
import { MoveLog } from '../move-log.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

export function functionSweeper(context: SweeperContext): Sweeper {
  const { redis, keys, batch, maxStalled, clock } = context;
  const name = context.functionName;
  if (name === undefined) throw new Error('the function mode needs its library loaded first');
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
      const reply = redis.call('FCALL', name, 3, keys.active, keys.pending, keys.dead, clock.now(), batch, maxStalled, keys.prefix, context.pending ?? 'list');
      context.faults?.afterSend();
      const moved = (await reply) as string[];
      latency.add(performance.now() - sent);
      for (const id of moved) record.add(Number(id), 'unknown');
      return moved.length;
    },
  };
}

/**
 * The atomic form: the whole sweep is one Lua script call. The server runs one script at a time,
 * so two sweepers never interleave inside detect, move and count.
 */
import { CachedScript } from '../cached-script.js';
import { performance } from 'node:perf_hooks';
import { LatencyLog } from '../call-latency.js';
import { MoveLog } from '../move-log.js';
import { SWEEP_STALLED_LUA } from '../scripts.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

export function atomicSweeper(context: SweeperContext): Sweeper {
  const { redis, keys, batch, maxStalled, clock, faults } = context;
  const record = new MoveLog();
  const script = new CachedScript(SWEEP_STALLED_LUA);
  const latency = new LatencyLog();
  let commands = 0;

  return {
    record,
    latency,
    get commands() {
      // Each NOSCRIPT fallback is one more round trip (the EVAL).
      return commands + script.fallbacks;
    },
    get noscriptFallbacks() {
      return script.fallbacks;
    },
    async sweep() {
      commands++;
      const sent = performance.now();
      const moved = (await script.call(
        redis,
        [keys.active, keys.pending, keys.dead],
        [clock.now(), batch, maxStalled, keys.prefix, context.pending ?? 'list'],
        faults?.afterSend,
      )) as string[];
      latency.add(performance.now() - sent);
      // The script moves every id it detects, so detected and moved are the same list.
      for (const id of moved) record.add(Number(id), 'unknown');
      return moved.length;
    },
  };
}

/**
 * The atomic form: the whole sweep is one Lua script call. The server runs one script at a time,
 * so two sweepers never interleave inside detect, move and count.
 */
import { CachedScript } from '../cached-script.js';
import { SWEEP_STALLED_LUA } from '../scripts.js';
import { oneCallSweeper } from './one-call.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

export function atomicSweeper(context: SweeperContext): Sweeper {
  const { redis, keys } = context;
  const script = new CachedScript(SWEEP_STALLED_LUA);
  return oneCallSweeper(context, {
    send: (argv) => script.call(redis, [keys.active, keys.pending, keys.dead], argv, context.faults?.afterSend),
    fallbacks: () => script.fallbacks,
  });
}

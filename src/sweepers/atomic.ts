/**
 * The atomic form: the whole sweep is one Lua script call. The server runs one script at a time,
 * so two sweepers never interleave inside detect, move and count.
 */
import { CachedScript } from '../cached-script.js';
import { SWEEP_STALLED_LUA } from '../scripts.js';
import { oneCallSweeper } from './one-call.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

export function atomicSweeper(context: SweeperContext): Sweeper {
  const script = new CachedScript(SWEEP_STALLED_LUA);
  return oneCallSweeper(context, {
    send: (keys, argv) => script.call(context.redis, keys, argv, context.faults?.afterSend),
    fallbacks: () => script.fallbacks,
  });
}

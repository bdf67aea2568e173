/**
 * The atomic form: the whole sweep is one Lua script call. The server runs one script at a time,
 * so two sweepers never interleave inside detect, move and count.
 */
import { SWEEP_STALLED_LUA } from '../lua/registry.js';
import { scriptCallSweeper } from './one-call.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

export function atomicSweeper(context: SweeperContext): Sweeper {
  return scriptCallSweeper(context, SWEEP_STALLED_LUA);
}

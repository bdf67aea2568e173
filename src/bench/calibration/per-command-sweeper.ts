/**
 * Calibration only: the atomic sweep in its plain shape, one server command per job and step
 * (src/lua/calibration/sweep-stalled-per-command.lua). Same effect as the shipped script; the
 * benchmark races it beside the shipped one to measure what batching the calls inside the script
 * gains. No mode uses it.
 */
import { luaSource } from '../../lua/registry.js';
import { scriptCallSweeper } from '../../sweepers/one-call.js';
import type { Sweeper, SweeperContext } from '../../sweepers/sweeper.js';

export const SWEEP_PER_COMMAND_LUA = luaSource('sweep-stalled-per-command');

/** Sent exactly as the shipped atomic sweeper sends its script, so only the script differs. */
export function perCommandSweeper(context: SweeperContext): Sweeper {
  return scriptCallSweeper(context, SWEEP_PER_COMMAND_LUA);
}

/**
 * Calibration only: the shipped sweep script with its pushes to pending and dead taken out, every
 * other line as shipped. It is not a sweep (the jobs it takes out of `active` go nowhere); the
 * benchmark races it beside the other two to measure the ceiling of the sweep ratio. A sweep of
 * this shape keeps HINCRBY and HSET per job, and with them the detect, the removal, each job's key
 * and the ids handed back: that is all this script does, so no such sweep can beat the
 * one-call-per-command script by more than this one does. No mode uses it.
 */
import { SWEEP_STALLED_LUA } from '../../lua/registry.js';
import { scriptCallSweeper } from '../../sweepers/one-call.js';
import type { Sweeper, SweeperContext } from '../../sweepers/sweeper.js';

// rcall('RPUSH', KEYS[2], unpack(toPending)), and the two ZADDs to a sorted-set pending and to dead.
const PUSH = /rcall\('(?:RPUSH|ZADD)', KEYS\[[23]\], unpack\((\w+)\)\)/g;
const PUSHES_IN_SHIPPED_SCRIPT = 3;

/**
 * `source` with each batched push replaced by a local that keeps the Lua syntax and does not call
 * the server. Throws unless it finds exactly the shipped script's three pushes, so that a change
 * to the shipped script cannot leave a floor that quietly measures something else.
 */
export function withoutPushes(source: string): string {
  const found = source.match(PUSH)?.length ?? 0;
  if (found !== PUSHES_IN_SHIPPED_SCRIPT) {
    throw new Error(`expected ${PUSHES_IN_SHIPPED_SCRIPT} batched pushes in the sweep script, found ${found}`);
  }
  return source.replace(PUSH, 'local _ = $1');
}

export const SWEEP_FLOOR_LUA = withoutPushes(SWEEP_STALLED_LUA);

/** Sent exactly as the shipped atomic sweeper sends its script, so only the script differs. */
export function floorSweeper(context: SweeperContext): Sweeper {
  return scriptCallSweeper(context, SWEEP_FLOOR_LUA);
}

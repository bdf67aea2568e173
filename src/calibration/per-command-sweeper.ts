/**
 * Calibration only: the atomic sweep in its plain shape, one server command per job and step
 * (src/lua/calibration/sweep-stalled-per-command.lua). Same effect as the shipped script; the
 * benchmark races it beside the shipped one to measure what batching the calls inside the script
 * gains. No mode uses it.
 */
import { readFileSync } from 'node:fs';
import type { Redis, Result } from 'ioredis';
import { MoveLog } from '../move-log.js';
import type { Sweeper, SweeperContext } from '../sweepers/sweeper.js';

export const SWEEP_PER_COMMAND_LUA = readFileSync(new URL('../lua/calibration/sweep-stalled-per-command.lua', import.meta.url), 'utf8');

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** Same contract as sweepStalled. */
    sweepStalledPerCommand(active: string, pending: string, dead: string, nowMs: number, batch: number, maxStalled: number, prefix: string): Result<string[], Context>;
  }
}

export function definePerCommandScript(redis: Redis): void {
  redis.defineCommand('sweepStalledPerCommand', { numberOfKeys: 3, lua: SWEEP_PER_COMMAND_LUA });
}

export function perCommandSweeper(context: SweeperContext): Sweeper {
  const { redis, keys, batch, maxStalled, clock } = context;
  definePerCommandScript(redis);
  const record = new MoveLog();
  let commands = 0;
  return {
    record,
    get commands() {
      return commands;
    },
    async sweep() {
      commands++;
      const moved = await redis.sweepStalledPerCommand(keys.active, keys.pending, keys.dead, clock.now(), batch, maxStalled, keys.prefix);
      for (const id of moved) record.add(Number(id), 'unknown');
      return moved.length;
    },
  };
}

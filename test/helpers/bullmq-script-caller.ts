/**
 * A caller that runs a moveStalledJobsToWait script given as text, with the keys and arguments
 * BullMQ's own worker passes it (redis-queue-backend's moveStalledJobsToWaitArgs, in order): BullMQ's
 * script itself, or a copy of it changed by hand, raced under the same load and read back by the
 * same audit. The script's reply, the ids it moved, is the caller's record of its moves.
 */
import type { Redis } from 'ioredis';
import type { Caller } from '../../src/libraries/race.js';
import type { BullmqKeys } from '../../src/libraries/bullmq/keys.js';

export interface ScriptArgs {
  /** BullMQ's maxStalledCount (ARGV[1]). */
  readonly maxStalledCount: number;
  /** The gate's lifetime, BullMQ's stalledInterval (ARGV[4], ms). */
  readonly maxCheckTime: number;
}

/** KEYS and ARGV of one call, as BullMQ's worker builds them; `now` is its Date.now(). Pure. */
function moveStalledJobsArgs(keys: BullmqKeys, args: ScriptArgs, now: number): { keys: string[]; argv: string[] } {
  return {
    keys: [keys.stalled, keys.wait, keys.active, keys.stalledCheck, keys.meta, keys.paused, keys.marker, keys.events, keys.repeat],
    argv: [String(args.maxStalledCount), keys.base, String(now), String(args.maxCheckTime)],
  };
}

/** Loads `lua` on the server and returns a caller running it on `redis`, one EVALSHA per check. */
export async function scriptCaller(redis: Redis, keys: BullmqKeys, lua: string, args: ScriptArgs): Promise<Caller> {
  const sha = (await redis.script('LOAD', lua)) as string;
  let commands = 0;
  return {
    async check() {
      const call = moveStalledJobsArgs(keys, args, Date.now());
      commands++;
      const moved = (await redis.evalsha(sha, call.keys.length, ...call.keys, ...call.argv)) as unknown[];
      return moved.map(String);
    },
    get commands() {
      return commands;
    },
  };
}

/**
 * The server's clock, read through the client's. Every lease deadline and every "now" in a run is
 * the server's: the offset is measured once with TIME, so a client clock that is off by hours
 * changes nothing.
 */
import type { Redis } from 'ioredis';

export interface ServerClock {
  /** The server's time in whole milliseconds since the epoch. */
  now(): number;
}

/** TIME's reply (seconds, microseconds) as whole milliseconds. */
function timeReplyToMs(reply: readonly [string | number, string | number]): number {
  return Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
}

export async function serverTimeMs(redis: Redis): Promise<number> {
  const reply = (await redis.time()) as unknown as [string, string];
  return timeReplyToMs(reply);
}

/**
 * Measures the offset between the server's clock and `clientNow` (Date.now unless a test skews it),
 * taking the midpoint of the round trip.
 */
export async function measureServerClock(redis: Redis, clientNow: () => number = Date.now): Promise<ServerClock> {
  const before = clientNow();
  const server = await serverTimeMs(redis);
  const after = clientNow();
  const offset = server - Math.round((before + after) / 2);
  return { now: () => clientNow() + offset };
}

/**
 * The chaos connection: while the sweepers run it empties the script cache (script-flush) and
 * kills the run's own sweeper connections by id (client-kill). It never names a connection it was
 * not given by the run's FaultPlan, and it stops when told to or after a fixed number of blows.
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type ServerTarget } from '../../server/connection.js';
import type { FaultPlan } from './sweeper-faults.js';
import type { FaultName, ChaosCounts } from '../../shared/model.js';

/** Pause between two blows: short enough to land inside a run of a few hundred milliseconds. */
const FLUSH_EVERY_MS = 2;
const KILL_EVERY_MS = 25;
/** A bound on each kind of blow, so a chaos loop stops by itself even if never told to. */
const MAX_BLOWS = 10_000;

export interface Chaos {
  /** Stops the blows and closes the chaos connection; resolves to what was done. */
  stop(): Promise<ChaosCounts>;
}

export async function startChaos(target: ServerTarget, faults: readonly FaultName[], plan: FaultPlan): Promise<Chaos> {
  const flush = faults.includes('script-flush');
  const kill = faults.includes('client-kill');
  if (!flush && !kill) return { stop: async () => ({ scriptFlushes: 0, clientKills: 0 }) };

  const redis: Redis = await connect(target);
  let stopped = false;
  let scriptFlushes = 0;
  let clientKills = 0;
  let victim = 0;
  let stopNow = (): void => {};
  const stopping = new Promise<void>((resolve) => (stopNow = resolve));
  const failures: unknown[] = [];
  // A failed blow stops the chaos; the error surfaces from stop(), never as an unhandled rejection.
  const guarded = (loop: Promise<void>): Promise<void> =>
    loop.catch((err: unknown) => {
      failures.push(err);
      stopped = true;
    });

  const flushing = guarded(
    (async () => {
      while (flush && !stopped && scriptFlushes < MAX_BLOWS) {
        await redis.script('FLUSH');
        scriptFlushes++;
        await sleep(FLUSH_EVERY_MS);
      }
    })(),
  );
  const killing = guarded(
    (async () => {
      // The first blow lands as the race starts, so that even a short run is hit; beside
      // sweeper-crash, as soon as the crash has happened (see FaultPlan.crashDone).
      if (kill) await Promise.race([plan.crashDone, stopping]);
      while (kill && !stopped && clientKills < MAX_BLOWS) {
        const ids = plan.liveClientIds();
        const id = ids[victim++ % Math.max(ids.length, 1)];
        // CLIENT KILL ID answers how many it closed: 0 when that connection is already gone.
        if (id !== undefined) clientKills += Number(await redis.client('KILL', 'ID', String(id)));
        await sleep(KILL_EVERY_MS);
      }
    })(),
  );

  return {
    async stop() {
      stopped = true;
      stopNow();
      try {
        await Promise.all([flushing, killing]);
      } finally {
        redis.disconnect();
      }
      if (failures.length > 0) throw failures[0];
      return { scriptFlushes, clientKills };
    },
  };
}

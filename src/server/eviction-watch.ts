/**
 * The last line of the memory guard: while a run is live on a server that evicts (any
 * maxmemory-policy but noeviction), a connection of its own reads INFO stats every
 * EVICTION_POLL_MS. The first eviction stops the run at once; the run deletes its keys as on any
 * failure, and the command ends with exit 3 naming how many keys the server evicted. Evicted keys
 * are gone, whoever's they were: the estimate is there so that this never happens.
 */
import type { Redis } from 'ioredis';
import { connect, type ServerTarget } from './connection.js';
import { serverError, type EmqError } from '../errors.js';
import { parseMemoryInfo } from './memory-check.js';

export const EVICTION_POLL_MS = 100;

export interface EvictionWatch {
  /**
   * Stops watching after one last reading, and closes its connections. Resolves to the eviction
   * error when the server evicted anything since the watch began (reported or not), else undefined.
   */
  stop(): Promise<EmqError | undefined>;
}

export function evictedKeys(stats: string): number {
  return Number(/^evicted_keys:(\d+)/m.exec(stats)?.[1] ?? 0);
}

export function evictionError(where: string, policy: string, evicted: number): EmqError {
  return serverError(
    `the server at ${where} evicted ${evicted} key${evicted === 1 ? '' : 's'} while the run was live (maxmemory-policy ${policy}): ` +
      'the run stopped at once and removed its own keys, but evicted keys are gone, whoever\'s they were; run on a server with more room, or with fewer --jobs or --queues',
  );
}

interface Watched {
  readonly redis: Redis;
  readonly where: string;
  readonly policy: string;
  readonly before: number;
}

/**
 * Starts watching every target whose policy evicts. `onEviction` is called once, with the error,
 * at the first reading that shows an eviction.
 */
export async function watchEvictions(targets: readonly ServerTarget[], onEviction: (err: EmqError) => void): Promise<EvictionWatch> {
  const watched: Watched[] = [];
  const close = async (): Promise<void> => {
    for (const { redis } of watched) await redis.quit().catch(() => redis.disconnect());
  };
  try {
    for (const target of targets) {
      const redis = await connect(target);
      const policy = parseMemoryInfo(await redis.info('memory')).policy;
      if (policy === 'noeviction') {
        await redis.quit().catch(() => redis.disconnect());
        continue;
      }
      watched.push({ redis, where: target.display, policy, before: evictedKeys(await redis.info('stats')) });
    }
  } catch (err) {
    await close();
    throw err;
  }
  let found: EmqError | undefined;
  const read = async (): Promise<void> => {
    for (const w of watched) {
      const evicted = evictedKeys(await w.redis.info('stats')) - w.before;
      if (evicted <= 0) continue;
      // The latest count: the one the command ends with, however many came after the first.
      const first = found === undefined;
      found = evictionError(w.where, w.policy, evicted);
      if (first) onEviction(found);
    }
  };
  let busy = false;
  const timer = watched.length > 0
    ? setInterval(() => {
        if (busy) return;
        busy = true;
        // A reading that fails (a lost server) is the run's own error to report, not the watch's.
        read().catch(() => {}).finally(() => (busy = false));
      }, EVICTION_POLL_MS)
    : undefined;
  return {
    async stop() {
      clearInterval(timer);
      await read().catch(() => {});
      await close();
      return found;
    },
  };
}

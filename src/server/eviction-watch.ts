/**
 * The last line of the memory guard: while a run writes, a connection of its own reads INFO stats
 * every EVICTION_POLL_MS on every server the run uses, whatever the server's policy when the run
 * began (an operator may switch to an evicting policy and lower maxmemory mid-run). The first
 * eviction stops the run at once; the run deletes its keys as on any failure, and the command ends
 * with exit 3 naming how many keys the server evicted. Evicted keys are gone, whoever's they were:
 * the estimate is there so that this never happens.
 *
 * `evicted_keys` is a counter that CONFIG RESETSTAT sets back to 0, so the watch never compares a
 * reading with the one it started from: it adds up what each reading grew by, and a reading where
 * the server's counters went down (a reset) adds everything counted since the reset.
 *
 * A watch that cannot read must not pass a run as free of evictions. Its connection closed under
 * it (a CLIENT KILL, a proxy that dropped it) is opened again, once per failed reading, with
 * connect's own bounded wait, and the counter read there is compared with the last reading before
 * the gap: an eviction during the gap is counted like any other. A watch that cannot read again
 * within ANSWER_TIMEOUT_MS (awake) stops the run with its own line; by then a server that died has
 * failed the run's own connections, and their line, which says more, is the one the run ends
 * with. A watch that cannot read at the end fails a run that went well. A server that stopped
 * answering is the run's own error: every connection to it has been dropped, and one wait for it
 * is enough. A BUSY reply (a script holding the server) is no gap while the run is live: the
 * reading after the script ends counts what the wait hid, however long it was.
 */
import type { Redis } from 'ioredis';
import { ANSWER_TIMEOUT_MS, closeConnection, connect, type ServerTarget } from './connection.js';
import { awakeTimeout } from './frozen.js';
import { describeServerError, type EmqError, InterruptedError, isBusyReply, serverError, stoppedAnswering } from '../shared/errors.js';
import { withLeftBehind, withStop, type Interrupts } from '../shared/interrupt.js';
import { parseMemoryInfo } from './memory-check.js';

const EVICTION_POLL_MS = 100;

export interface EvictionWatch {
  /**
   * Stops watching after one last reading, and closes its connections. Resolves to the eviction
   * error when the server evicted anything since the watch began (reported or not), and to the
   * error of a watch that went blind (could not read again) when it did not count one.
   */
  stop(): Promise<WatchOutcome>;
  /** Ends the watch with no last reading and its connections dropped: for a run a signal stopped, whose outcome is the signal's. */
  abandon(): void;
}

interface WatchOutcome {
  readonly evicted?: EmqError;
  readonly blind?: EmqError;
}

const statField = (stats: string, name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(stats)?.[1] ?? 0);

export function evictedKeys(stats: string): number {
  return statField(stats, 'evicted_keys');
}

/** What the watch takes from one INFO stats: evictions, and counters that only CONFIG RESETSTAT sets back. */
export interface StatsReading {
  readonly evicted: number;
  readonly commands: number;
  readonly connections: number;
}

export function statsReading(stats: string): StatsReading {
  return { evicted: evictedKeys(stats), commands: statField(stats, 'total_commands_processed'), connections: statField(stats, 'total_connections_received') };
}

/** Evictions counted since the watch began, and the reading they were last counted against. */
export interface EvictionCount {
  readonly evicted: number;
  readonly last: StatsReading;
  /** The server's statistics were reset (CONFIG RESETSTAT) at least once while watched. */
  readonly reset: boolean;
}

export function startCount(first: StatsReading): EvictionCount {
  return { evicted: 0, last: first, reset: false };
}

/**
 * The count after one more reading. Pure. The watch's own INFO makes `total_commands_processed`
 * grow between any two readings, so a counter that went down means the statistics were reset:
 * every eviction in the new reading came after the reset.
 */
export function advanceCount(count: EvictionCount, reading: StatsReading): EvictionCount {
  const { last } = count;
  const reset = reading.commands < last.commands || reading.connections < last.connections || reading.evicted < last.evicted;
  const grew = reset ? reading.evicted : reading.evicted - last.evicted;
  return { evicted: count.evicted + grew, last: reading, reset: count.reset || reset };
}

export function evictionError(where: string, policy: string, evicted: number, reset = false): EmqError {
  return serverError(
    `the server at ${where} evicted ${evicted} key${evicted === 1 ? '' : 's'} while the run was live (maxmemory-policy ${policy}${reset ? ', counted across a CONFIG RESETSTAT' : ''}): ` +
      "the run stopped at once and removed its own keys, but evicted keys are gone, whoever's they were; run on a server with more room, or with fewer --jobs or --queues",
  );
}

/**
 * Why a run stopped whose eviction watch lost its connection and could not read again (`cause`,
 * in words): evictions from then on would go unseen.
 */
function blindWatchError(where: string, cause: EmqError): EmqError {
  return serverError(
    `the eviction watch lost its connection to the server at ${where} and could not read it again (${cause.message}): ` +
      'evictions while the run wrote could no longer be seen, so the run stopped and removed its own keys',
  );
}

interface Watched {
  readonly target: ServerTarget;
  redis: Redis;
  count: EvictionCount;
  /** Since a reading failed and none has succeeded: its error, and the timer that gives up on it. */
  gap?: { error: EmqError; timer?: NodeJS.Timeout };
}

/**
 * Starts watching every target, whatever its policy now. `onStop` is called once, with the error,
 * at the first reading that shows an eviction, or when the watch went blind.
 */
async function watchEvictions(targets: readonly ServerTarget[], onStop: (err: EmqError) => void, answerTimeoutMs: number): Promise<EvictionWatch> {
  const watched: Watched[] = [];
  const close = async (): Promise<void> => {
    for (const { redis } of watched.splice(0)) await closeConnection(redis);
  };
  try {
    for (const target of targets) {
      const redis = await connect(target);
      watched.push({ target, redis, count: startCount(statsReading(await redis.info('stats'))) });
    }
  } catch (err) {
    await close();
    throw err;
  }
  let evicted: EmqError | undefined;
  let blind: EmqError | undefined;
  // The tool's connections do not reconnect by themselves (connection.ts): one that closed under
  // the watch is replaced by a fresh one, once per reading; the cumulative counter bridges the gap.
  const dropped = new WeakSet<Redis>();
  // Set by abandon(): a reading still in flight then opens no connection and starts no timer.
  let abandoned = false;
  const stats = async (w: Watched): Promise<string> => {
    if (w.redis.status === 'ready') {
      try {
        return await w.redis.info('stats');
      } catch (err) {
        if (stoppedAnswering(w.target.display)) throw err;
      }
    }
    if (stoppedAnswering(w.target.display) || abandoned) throw new Error('Connection is closed.');
    // Once each: a connection whose replacement failed is still `w.redis` at the next reading, and
    // ioredis adds a listener to its socket on every disconnect (Node then warns on stderr).
    if (!dropped.has(w.redis)) {
      dropped.add(w.redis);
      w.redis.disconnect();
    }
    w.redis = await connect(w.target);
    if (abandoned) {
      w.redis.disconnect();
      throw new Error('Connection is closed.');
    }
    return w.redis.info('stats');
  };
  const goBlind = (w: Watched): void => {
    if (evicted || blind || !w.gap) return;
    blind = blindWatchError(w.target.display, w.gap.error);
    onStop(blind);
  };
  /** One reading of every server; `last`, the one at the end: a server it cannot read then is not waited for. */
  const read = async (last = false): Promise<void> => {
    for (const w of watched) {
      const where = w.target.display;
      try {
        w.count = advanceCount(w.count, statsReading(await stats(w)));
        clearTimeout(w.gap?.timer);
        delete w.gap;
        if (w.count.evicted <= 0) continue;
        // The policy now, which is the one that evicted (it may have changed since the run began).
        const policy = parseMemoryInfo(await w.redis.info('memory')).policy;
        // The latest count: the one the command ends with, however many came after the first.
        const first = evicted === undefined && blind === undefined;
        evicted = evictionError(where, policy, w.count.evicted, w.count.reset);
        if (first) onStop(evicted);
      } catch (err) {
        // A server that stopped answering is the run's own error to report (see above); an
        // abandoned watch reports nothing.
        if (stoppedAnswering(where) || abandoned) continue;
        // BUSY is a server that answers but is held by a script (a library's own recovery on many
        // jobs, a --script): the counter it gives once the script ends covers the wait, so the wait
        // is no blindness, and the run's own calls, refused alike, are the ones that know whose
        // script it was. Only at the end, when no later reading will come, does it count as one.
        if (!last && isBusyReply(err)) continue;
        const error = describeServerError(err, where);
        if (w.gap) w.gap.error = error;
        else w.gap = { error };
        if (last) goBlind(w);
        else if (w.gap.timer === undefined) {
          const gap = w.gap;
          awakeTimeout(
            answerTimeoutMs,
            () => goBlind(w),
            (timer) => (gap.timer = timer),
          );
        }
      }
    }
  };
  let busy: Promise<void> | undefined;
  const timer = setInterval(() => {
    busy ??= read().finally(() => (busy = undefined));
  }, EVICTION_POLL_MS);
  let stopped: Promise<WatchOutcome> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        clearInterval(timer);
        await busy;
        for (const { gap } of watched) clearTimeout(gap?.timer);
        await read(true);
        await close();
        return { ...(evicted ? { evicted } : {}), ...(blind && !evicted ? { blind } : {}) };
      })();
      return stopped;
    },
    abandon() {
      abandoned = true;
      clearInterval(timer);
      for (const { gap } of watched) clearTimeout(gap?.timer);
      for (const { redis } of watched.splice(0)) redis.disconnect();
    },
  };
}

/**
 * `work` under an eviction watch on `targets`: an eviction stops it as a Ctrl-C would (the
 * interrupts handed to `work` abort), and the command ends with the eviction's error, counted at
 * the end, rather than whatever the stopped work threw; a signal keeps its own exit code. An
 * eviction seen only by the last reading still fails the work: its figures may miss keys. So does
 * a watch that went blind, unless the work failed first of its own accord (most likely for the
 * same reason: the server is gone), when the work's own error says more. `answerTimeoutMs`: how
 * long a watch that cannot read waits before it goes blind (shorter only in tests).
 */
export async function underEvictionWatch<T>(
  targets: readonly ServerTarget[],
  interrupts: Interrupts,
  work: (interrupts: Interrupts) => Promise<T>,
  answerTimeoutMs = ANSWER_TIMEOUT_MS,
): Promise<T> {
  const stop = new AbortController();
  const watch = await watchEvictions(targets, (err) => stop.abort(err), answerTimeoutMs);
  const watched = withStop(interrupts, stop.signal);
  let result: T;
  try {
    result = await work(watched);
  } catch (err) {
    // A signal's stop is the outcome whatever the last reading would say: none is waited for (a
    // paused server would hold it for the whole bounded wait).
    if (err instanceof InterruptedError) {
      watch.abandon();
      throw err;
    }
    // A blind watch that stopped the work is why it failed; one that went blind only after is not.
    const stoppedIt = stop.signal.aborted;
    const { evicted, blind } = await watch.stop();
    const instead = evicted ?? (stoppedIt ? blind : undefined);
    if (!instead) throw err;
    // What the work left behind (--keep's earlier queues) is said after the eviction too.
    throw withLeftBehind(instead, err);
  } finally {
    watched.release();
  }
  const { evicted, blind } = await watch.stop();
  if (evicted ?? blind) throw evicted ?? blind;
  return result;
}

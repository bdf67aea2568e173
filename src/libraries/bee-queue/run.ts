/**
 * One Bee-Queue mode end to end on a queue of its own: claim (the library's namespace in the
 * queue, see keys.ts), seed real stalled work through Bee-Queue (seed.ts), race N callers from one
 * barrier, each on its own connection, close every Bee-Queue client, read Bee-Queue's keys back
 * (snapshot.ts) and audit them (audit.ts). The claim's clean-up removes the namespace on every way
 * out.
 *
 *   bee-queue          each caller a Bee-Queue Queue of the user's installed package, calling its
 *                      own Queue#checkStalledJobs (the checkStalledJobs script);
 *   bee-queue-naive    each caller the round-trip port of that script, deaf to LREM's reply (port.ts);
 *   bee-queue-guarded  the same port, acting on LREM's reply.
 *
 * Bee-Queue's gate (`stallBlock`, SET NX) lets one check in per stallInterval and turns the others
 * away with nothing, so a caller here is what a worker's timer is: it checks again every half
 * interval (Bee-Queue's advice for checkStalledJobs' interval) while some seeded job is still to
 * be moved by any caller, and stops at a check that moves nothing once none is.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { onClaimedQueue } from '../../queue/claimed-run.js';
import { queueKeys } from '../../queue/keys.js';
import { connect, libraryClientOptions, type ServerTarget } from '../../server/connection.js';
import { measureRoundTrip } from '../../server/latency-proxy.js';
import { CallTimes, libraryResult, raceCallers, type Caller } from '../race.js';
import type { LibraryRunner } from '../runner.js';
import { auditBee } from './audit.js';
import { BEE_QUEUE, beeKeys, type BeeKeys } from './keys.js';
import { loadBeeQueue, type BeeQueueClass, type BeeRedisOptions, type BeeSettings } from './module.js';
import { portedCheckStalledJobs, type Exec } from './port.js';
import { readBeeSnapshot } from './snapshot.js';
import { BeeClients, seedStalledJobs } from './seed.js';

/**
 * The callers' stallInterval (ms), the gate's lifetime, is set for each run so that the gate lapses
 * while a port's check is still in its round trips, as Bee-Queue's default 5 s lapses when a check
 * outlasts it (a large backlog, a slow link): a quarter of how long the check's LREMs take at the
 * round trip measured on the race's server before the seeding, at most 20 ms. A fixed 20 ms did
 * that only where a check took longer: a few hundred jobs' round trips on a fast machine took 10 ms,
 * and no second caller was ever let in. The same interval for all three modes.
 */
const MAX_INTERVAL_MS = 20;
/** How many of the gate's lifetimes a port's check is to last. */
const CHECK_OVER_INTERVAL = 4;
/** PINGs timed on the race's server for its round trip: enough that the median is not one hiccup. */
const PINGS = 20;

/** The callers' stallInterval (ms) for a port check of `jobs` LREMs of `roundTripMs` each: a quarter of that check, from 1 to 20 ms. Pure. */
export function raceInterval(jobs: number, roundTripMs: number): number {
  return Math.min(MAX_INTERVAL_MS, Math.max(1, Math.floor((jobs * roundTripMs) / CHECK_OVER_INTERVAL)));
}

/** Calls one caller may make: a bound, so a recovery that never moves some job cannot spin. */
const MAX_CALLS = 3000;

export const runBeeQueueMode: LibraryRunner = async (session, run, interrupts) => {
  const found = run.library;
  if (!found) throw new Error(`mode ${run.mode} ran without its library`);
  const Queue = await loadBeeQueue(found);
  const keys = queueKeys(run.queue);
  const claim = { admin: session.admin, target: session.target, keys, jobs: run.jobs, keep: run.keep, library: BEE_QUEUE };
  return onClaimedQueue(claim, interrupts, async (claimed) => {
    const clients = new BeeClients();
    const connections: Redis[] = [];
    try {
      const bee = beeKeys(run.queue);
      const raceTarget = session.raceTarget ?? session.target;
      const interval = raceInterval(run.jobs, await roundTripOf(raceTarget));
      await seedStalledJobs(session.admin, {
        Queue,
        settings: beeSettings(session.target, bee),
        raceInterval: interval,
        keys: bee,
        jobs: run.jobs,
        runId: claimed.runId,
        clients,
        signal: claimed.signal,
      });
      const recovered = new Recovered(run.jobs);
      const callers: Caller[] = [];
      for (let i = 0; i < run.sweepers; i++) {
        claimed.signal.throwIfAborted();
        if (run.mode === 'bee-queue') callers.push(await queueCaller(Queue, raceTarget, bee, interval, clients, recovered));
        else {
          const redis = await connect(raceTarget);
          connections.push(redis);
          callers.push(portCaller(redis, bee, interval, run.mode === 'bee-queue-guarded', recovered, claimed.signal));
        }
      }
      const ownScript = run.mode === 'bee-queue' ? "Bee-Queue's own checkStalledJobs script" : undefined;
      const raced = await raceCallers(callers, run.jobs, claimed.signal, MAX_CALLS, ownScript);
      clients.check();
      // Bee-Queue's connections close before the server is read back.
      await clients.closeAll();
      await claimed.confirmKeys();
      const snapshot = await readBeeSnapshot(session.admin, bee, run.jobs, claimed.signal);
      return libraryResult(run, raced, auditBee(snapshot, raced.moves), MAX_CALLS);
    } finally {
      await clients.closeAll();
      for (const redis of connections) redis.disconnect();
    }
  });
};

/**
 * Bee-Queue's settings for the race's server: the options of the `redis` client it makes for each
 * connection, from the same address, credentials and TLS as the tool's own; no reconnection (a
 * dropped connection fails its commands), no events, no delayed jobs.
 */
function beeSettings(target: ServerTarget, keys: BeeKeys): Omit<BeeSettings, 'stallInterval' | 'isWorker'> {
  const { host, port, path, username, password, db, tls } = libraryClientOptions(target);
  const redis: BeeRedisOptions = {
    ...(path ? { path } : { host, port }),
    ...(username ? { user: username } : {}),
    ...(password ? { password } : {}),
    ...(db !== undefined ? { db } : {}),
    ...(tls ? { tls } : {}),
    connect_timeout: 5000,
    retry_strategy: () => new Error('the connection to the server was lost'),
  };
  return { prefix: keys.prefix, redis, getEvents: false, sendEvents: false, activateDelayedJobs: false };
}

/** The median round trip (ms) of PINGs on a connection of the tool's to the race's server (through the latency proxy with --latency). */
async function roundTripOf(target: ServerTarget): Promise<number> {
  const redis = await connect(target);
  try {
    return (await measureRoundTrip(redis, PINGS)).median;
  } finally {
    redis.disconnect();
  }
}

/** The callers' shared record of which seeded jobs any of them has moved. */
class Recovered {
  private readonly seen: Uint8Array;
  private left: number;

  constructor(jobs: number) {
    this.seen = new Uint8Array(jobs + 1);
    this.left = jobs;
  }

  add(ids: readonly string[]): void {
    for (const raw of ids) {
      const id = Number(raw);
      if (Number.isInteger(id) && id >= 1 && id < this.seen.length && this.seen[id] === 0) {
        this.seen[id] = 1;
        this.left--;
      }
    }
  }

  get all(): boolean {
    return this.left === 0;
  }
}

/**
 * A caller's check, as a worker's timer makes it: a call turned away (or moving nothing) while
 * some job is still to be moved is made again half an interval later; the check returns what the
 * first call that moved something moved, or nothing once every job has been moved by someone. The
 * wait between two calls ends when the race stops (the signal raceCallers hands each check, shared
 * by every caller and sized for them, so that 16 or 32 callers waiting at once are no leak).
 */
function timerCaller(call: () => Promise<readonly string[]>, intervalMs: number, recovered: Recovered, count: () => number, callTimes?: CallTimes): Caller {
  let calls = 0;
  let cutShort = false;
  return {
    ...(callTimes ? { callTimes } : {}),
    async check(stopped) {
      for (;;) {
        if (calls === MAX_CALLS) {
          cutShort = true;
          return [];
        }
        calls++;
        const moved = await call();
        if (moved.length > 0) {
          recovered.add(moved);
          return [...moved];
        }
        if (recovered.all) return [];
        await sleep(intervalMs / 2, undefined, { signal: stopped });
      }
    },
    get commands() {
      return count();
    },
    get cutShort() {
      return cutShort;
    },
  };
}

/** A Bee-Queue Queue of the user's package, on a connection of its own, its stalled check called as its timer calls it. */
async function queueCaller(
  Queue: BeeQueueClass,
  target: ServerTarget,
  keys: BeeKeys,
  intervalMs: number,
  clients: BeeClients,
  recovered: Recovered,
): Promise<Caller> {
  const queue = clients.add(new Queue(keys.name, { ...beeSettings(target, keys), stallInterval: intervalMs, isWorker: false }));
  const moved: string[] = [];
  queue.on('stalled', (jobId: string) => moved.push(jobId));
  await queue.ready();
  let calls = 0;
  const callTimes = new CallTimes();
  return timerCaller(
    async () => {
      const before = moved.length;
      calls++;
      await callTimes.time(() => queue.checkStalledJobs());
      clients.check();
      return moved.slice(before);
    },
    intervalMs,
    recovered,
    () => calls,
    callTimes,
  );
}

/** The round-trip port on one connection of the tool's, every command a round trip, stopped by `signal` between two. */
function portCaller(redis: Redis, keys: BeeKeys, intervalMs: number, guarded: boolean, recovered: Recovered, signal: AbortSignal): Caller {
  let commands = 0;
  const exec: Exec = (command, ...args) => {
    signal.throwIfAborted();
    commands++;
    return redis.call(command, ...args);
  };
  return timerCaller(
    async () => (await portedCheckStalledJobs(exec, keys, intervalMs, guarded)).moved,
    intervalMs,
    recovered,
    () => commands,
  );
}

/**
 * One node-resque mode end to end on a queue of its own: claim (the library's namespace in the
 * queue, see keys.ts), seed dead workers holding jobs through node-resque (seed.ts), race N
 * callers from one barrier, each on its own connection, each cleaning until a call moves nothing,
 * end every node-resque client, read node-resque's keys back (snapshot.ts) and audit them
 * (audit.ts). The claim's clean-up removes the namespace on every way out.
 *
 *   node-resque          each caller a node-resque Queue of the user's installed package, on its
 *                        own connection, calling its own Queue#cleanOldWorkers;
 *   node-resque-naive    each caller the round-trip port of it, in its order (port.ts);
 *   node-resque-guarded  the same port, acting on SREM's reply.
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { orStopped } from '../../shared/interrupt.js';
import { onClaimedQueue } from '../../queue/claimed-run.js';
import { queueKeys } from '../../queue/keys.js';
import { connect, libraryClientOptions, type ServerTarget } from '../../server/connection.js';
import type { FoundLibrary } from '../../shared/model.js';
import { missingApi } from '../missing-api.js';
import { libraryResult, raceCallers, type Caller } from '../race.js';
import type { LibraryRunner } from '../runner.js';
import { auditResque } from './audit.js';
import { NODE_RESQUE, jobIdOf, resqueKeys, type ResqueKeys } from './keys.js';
import { loadNodeResque, type CommandSender, type NodeResque, type ResqueConnection } from './module.js';
import { portedCleanOldWorkers, type Exec, type Transaction } from './port.js';
import { ResqueClients, seedDeadWorkers } from './seed.js';
import { readResqueSnapshot } from './snapshot.js';

/** cleanOldWorkers' age (ms): every seeded worker is dead, so any worker on a job counts as old. */
const AGE_MS = 0;
/** Calls one caller may make: a bound, so a broken recovery cannot spin. */
const MAX_CHECKS = 100;

export const runNodeResqueMode: LibraryRunner = async (session, run, interrupts) => {
  const found = run.library;
  if (!found) throw new Error(`mode ${run.mode} ran without its library`);
  const resque = await loadNodeResque(found);
  const keys = queueKeys(run.queue);
  const claim = { admin: session.admin, target: session.target, keys, jobs: run.jobs, keep: run.keep, library: NODE_RESQUE };
  return onClaimedQueue(claim, interrupts, async (claimed) => {
    const clients = new ResqueClients();
    const connections: Redis[] = [];
    try {
      const rk = resqueKeys(run.queue);
      const seedRedis = await connect(session.target);
      connections.push(seedRedis);
      await seedDeadWorkers(session.admin, { resque, redis: seedRedis, keys: rk, jobs: run.jobs, clients, signal: claimed.signal });
      // run_at has whole seconds: a millisecond on, every seeded job is older than AGE_MS.
      await sleep(2, undefined, { signal: claimed.signal });
      const raceTarget = session.raceTarget ?? session.target;
      const callers: Caller[] = [];
      for (let i = 0; i < run.sweepers; i++) {
        claimed.signal.throwIfAborted();
        if (run.mode === 'node-resque') callers.push(await queueCaller(resque, found, raceTarget, rk, run.jobs, clients));
        else {
          const redis = await connect(raceTarget);
          connections.push(redis);
          callers.push(portCaller(redis, rk, run.jobs, run.mode === 'node-resque-guarded', claimed.signal));
        }
      }
      const raced = await raceCallers(callers, run.jobs, claimed.signal, MAX_CHECKS);
      clients.check();
      // node-resque's clients end (their connections closed) before the server is read back.
      await clients.closeAll();
      await claimed.confirmKeys();
      const snapshot = await readResqueSnapshot(session.admin, rk, run.jobs, claimed.signal);
      return libraryResult(run, raced, auditResque(snapshot, raced.moves), MAX_CHECKS);
    } finally {
      await clients.closeAll();
      for (const redis of connections) redis.disconnect();
    }
  });
};

/** node-resque's connection options for the race's server: its own client, in the run's namespace. */
function resqueConnection(target: ServerTarget, namespace: string): ResqueConnection {
  const { host, port, db, ...options } = libraryClientOptions(target);
  return { host, port, database: db ?? 0, namespace, options: { ...options, ...(host ? { host } : {}), ...(port ? { port } : {}) } };
}

/** A node-resque Queue of the user's package, its cleanOldWorkers called as an application calls it. */
async function queueCaller(
  resque: NodeResque,
  found: FoundLibrary,
  target: ServerTarget,
  keys: ResqueKeys,
  jobs: number,
  clients: ResqueClients,
): Promise<Caller> {
  const queue = clients.addQueue(new resque.Queue({ connection: resqueConnection(target, keys.namespace) }));
  await queue.connect();
  clients.check();
  const client = queue.connection?.redis;
  if (typeof client?.sendCommand !== 'function') throw missingApi(found, 'node-resque', 'ioredis client at Queue#connection.redis after connect()');
  // Counted from now: the client's connect-time commands (its ready check) are not the recovery's.
  const roundTrips = countRoundTrips(client as CommandSender);
  return {
    async check(stopped) {
      // One call of node-resque's is the whole clean-up, a round trip per worker: on many jobs it
      // runs for a minute. A stopped run waits for it no longer; the queue's connection, closed on
      // the way out (clients.closeAll) before the run's keys are deleted, fails its next command,
      // so nothing of it writes after the clean-up.
      const cleaned = await orStopped(stopped, queue.cleanOldWorkers(AGE_MS));
      clients.check();
      return idsOf(
        Object.values(cleaned).map((failure) => failure.payload),
        jobs,
      );
    },
    get commands() {
      return roundTrips();
    },
  };
}

/**
 * Wraps `client`'s sendCommand to count the round trips it makes from now on: one per command
 * sent alone, one per pipeline or MULTI, whose commands ioredis sends together in one go (the
 * ports count theirs the same way). Resolves to the count so far.
 */
function countRoundTrips(client: CommandSender): () => number {
  let trips = 0;
  let inPipeline = false;
  const send = client.sendCommand.bind(client);
  client.sendCommand = (command, stream, ...rest) => {
    if (!stream?.isPipeline) trips++;
    else if (!inPipeline) {
      // A pipeline's commands are sent in one synchronous loop: the first of them counts.
      trips++;
      inPipeline = true;
      queueMicrotask(() => {
        inPipeline = false;
      });
    }
    return send(command, stream, ...rest);
  };
  return () => trips;
}

/** The job ids of the payloads a call pushed onto `failed`, as strings for the race's record. */
function idsOf(payloads: readonly unknown[], jobs: number): string[] {
  return payloads.flatMap((payload) => {
    const id = jobIdOf(payload, jobs);
    return id === undefined ? [] : [String(id)];
  });
}

/** The round-trip port on one connection of the tool's, every command a round trip, stopped by `signal` between two. */
function portCaller(redis: Redis, keys: ResqueKeys, jobs: number, guarded: boolean, signal: AbortSignal): Caller {
  let commands = 0;
  const exec: Exec = (command, ...args) => {
    signal.throwIfAborted();
    commands++;
    return redis.call(command, ...args);
  };
  const multi: Transaction = async (list) => {
    signal.throwIfAborted();
    commands++;
    const replies = (await redis.multi(list.map(([command, ...args]) => [command.toLowerCase(), ...args])).exec()) ?? [];
    for (const [err] of replies) if (err) throw err;
    return replies;
  };
  return {
    check: async () => idsOf(await portedCleanOldWorkers(exec, multi, keys, AGE_MS, guarded), jobs),
    get commands() {
      return commands;
    },
  };
}

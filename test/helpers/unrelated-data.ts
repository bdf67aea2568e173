/**
 * Someone else's data: keys of every type, some with a TTL, and keys under other `emq:{…}` queues
 * (one with an owner marker not written by emq-race, one that only looks like a default queue),
 * so a test can prove a run touches none of it.
 */
import type { Redis } from 'ioredis';
import { keyspaceDigest } from './keyspace.js';
import { after, before } from 'node:test';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { startEmbeddedServer, type EmbeddedServer, type StartOptions } from '../../src/server/embedded-server.js';

export async function fillUnrelated(redis: Redis): Promise<void> {
  await redis.set('user:string', 'hello');
  await redis.set('user:ttl', 'expires later', 'EX', 3600);
  await redis.rpush('user:list', 'a', 'b', 'c', 'a');
  await redis.hset('user:hash', 'field', 'value', 'n', 1);
  const big: (string | number)[] = [];
  for (let i = 0; i < 300; i++) big.push(`f${i}`, 'x'.repeat(80));
  await redis.hset('user:bighash', ...big);
  await redis.sadd('user:set', 'x', 'y', 'z');
  await redis.zadd('user:zset', 1, 'one', 2, 'two');
  await redis.xadd('user:stream', '*', 'event', 'created');
  await redis.pfadd('user:hll', 'a', 'b', 'c');
  await redis.setbit('user:bitmap', 1000, 1);
  await redis.geoadd('user:geo', 13.361389, 38.115556, 'Palermo');
  // Another queue on the same naming scheme, with an owner marker in its own format.
  await redis.set('emq:{orders}:owner', 'worker-7');
  await redis.zadd('emq:{orders}:active', 1, '1', 2, '2');
  await redis.rpush('emq:{orders}:pending', '3');
  await redis.hset('emq:{orders}:job:1', 'state', 'active', 'stalled', 0);
  await redis.hset('emq:{orders}:job:2', 'state', 'active', 'stalled', 2);
  // Looks like a default queue name, but emq-race did not write its marker.
  await redis.set('emq:{race-0000beef}:owner', 'not emq-race');
  await redis.hset('emq:{race-0000beef}:job:1', 'state', 'pending');
}

/**
 * Somebody else's queue under a name a run could pick (`race-payments`, inside the README's ACL
 * pattern), holding keys with the very names a run creates: job:1, job:2, job:50 and pending.
 */
export async function fillPaymentsQueue(redis: Redis): Promise<void> {
  await redis.hset('emq:{race-payments}:job:1', 'state', 'active', 'stalled', 0, 'amount', '120.00');
  await redis.hset('emq:{race-payments}:job:2', 'state', 'active', 'stalled', 1, 'amount', '75.50');
  await redis.hset('emq:{race-payments}:job:50', 'state', 'pending', 'amount', '9900.00');
  await redis.pexpire('emq:{race-payments}:job:50', 3_600_000);
  await redis.rpush('emq:{race-payments}:pending', '50', '2');
}

/** The digest plus which keys carry a TTL: a run must change neither. */
export async function unrelatedState(redis: Redis): Promise<{ digest: Map<string, string>; withTtl: string[] }> {
  const digest = await keyspaceDigest(redis);
  const withTtl: string[] = [];
  for (const key of digest.keys()) if ((await redis.pttl(key)) > 0) withTtl.push(key);
  return { digest, withTtl };
}

export type UnrelatedState = Awaited<ReturnType<typeof unrelatedState>>;

/** A filled server as `filledServer` holds it: each part set once the suite's `before` has run. */
export interface FilledServer {
  readonly server: EmbeddedServer;
  readonly redis: Redis;
  readonly initial: UnrelatedState;
}

/** useFilledServer's parts, held in one object for the suite's tests to read. */
export function filledServer(options: StartOptions): FilledServer {
  const held: { -readonly [K in keyof FilledServer]?: FilledServer[K] } = {};
  useFilledServer(options, (server, redis, initial) => Object.assign(held, { server, redis, initial }));
  const part = <K extends keyof FilledServer>(name: K): FilledServer[K] => {
    const value = held[name];
    if (value === undefined) throw new Error(`the filled server's ${name} is read before the suite started it`);
    return value as FilledServer[K];
  };
  return {
    get server() {
      return part('server');
    },
    get redis() {
      return part('redis');
    },
    get initial() {
      return part('initial');
    },
  };
}

/**
 * A private server for the suite, filled with unrelated data before its tests and stopped after,
 * with the state of that data as it was: what a test compares against once the tool has run.
 */
export function useFilledServer(options: StartOptions, ready: (server: EmbeddedServer, redis: Redis, initial: UnrelatedState) => void): void {
  let server: EmbeddedServer | undefined;
  let redis: Redis | undefined;
  before(async () => {
    server = await startEmbeddedServer(options);
    redis = await connect(parseServerUrl(server.url));
    await fillUnrelated(redis);
    ready(server, redis, await unrelatedState(redis));
  });
  after(async () => {
    redis?.disconnect();
    await server?.stop();
  });
}

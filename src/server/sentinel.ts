/**
 * --sentinel: a real Sentinel of the failover drill's own, from the same binary as its servers
 * (`redis-server --sentinel`, `valkey-server --sentinel`), under a keeper like them, so that it is
 * stopped and its folder (its configuration file in it) removed on every way out. It watches the
 * drill's primary alone, with a quorum of one, and decides the primary is down after
 * DOWN_AFTER_MS without an answer: after the drill kills the primary, the promotion is Sentinel's
 * own, and the tool learns where the new primary is by asking it, as a Sentinel-aware client does.
 */
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from './connection.js';
import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.js';

/** The name the Sentinel knows the drill's primary by. */
const MASTER = 'emq-race';

/**
 * How long the primary may be silent before Sentinel holds it down: short, so the drill does not
 * wait long, but well above a loaded machine's pauses before the kill (the primary is alive and
 * answering until then, so a false alarm could only come from a pause this long).
 */
const DOWN_AFTER_MS = 500;

export interface EmbeddedSentinel {
  readonly url: string;
  readonly pid: number;
  readonly lost: AbortSignal;
  /** Aborted when Sentinel's process ended unasked (or its keeper was killed: `lost`). */
  readonly ended: AbortSignal;
  /** Whether Sentinel has found the replica on `port` and holds it fit to be promoted. */
  knowsReplica(port: number): Promise<boolean>;
  /** The port of the server Sentinel currently names as the primary. */
  primaryPort(): Promise<number>;
  stop(): Promise<void>;
}

/** The configuration Sentinel starts from: one primary, a quorum of one, short timings. Pure. */
function sentinelConfig(primaryPort: number): string {
  return [
    `sentinel monitor ${MASTER} 127.0.0.1 ${primaryPort} 1`,
    `sentinel down-after-milliseconds ${MASTER} ${DOWN_AFTER_MS}`,
    // The time a failover may take before Sentinel gives it up and may try again.
    `sentinel failover-timeout ${MASTER} 10000`,
    '',
  ].join('\n');
}

export async function startSentinel(bin: string | undefined, primaryPort: number): Promise<EmbeddedSentinel> {
  const server: EmbeddedServer = await startEmbeddedServer({
    ...(bin !== undefined ? { bin } : {}),
    sentinelConfig: sentinelConfig(primaryPort),
    role: { name: "the failover drill's Sentinel", short: 'the Sentinel' },
  });
  let redis: Redis | undefined;
  try {
    redis = await connect(parseServerUrl(server.url));
  } catch (err) {
    await server.stop();
    throw err;
  }
  const admin = redis;
  return {
    url: server.url,
    pid: server.pid,
    lost: server.lost,
    ended: server.ended,
    async knowsReplica(port) {
      const replicas = (await admin.call('SENTINEL', 'REPLICAS', MASTER)) as string[][];
      return replicas.some((fields) => {
        const entry = fieldsOf(fields);
        return entry.port === String(port) && entry.flags === 'slave' && entry['master-link-status'] === 'ok';
      });
    },
    async primaryPort() {
      const address = (await admin.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER)) as [string, string] | null;
      return Number(address?.[1] ?? Number.NaN);
    },
    async stop() {
      admin.disconnect();
      await server.stop();
    },
  };
}

/** A Sentinel reply's flat name, value, name, value… list as a record. Pure. */
function fieldsOf(flat: readonly string[]): Record<string, string> {
  const entry: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) entry[flat[i] as string] = flat[i + 1] as string;
  return entry;
}

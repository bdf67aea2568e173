/**
 * Which primary owns which slot, learned through ioredis' Cluster client from the --url node, and
 * a plain connection target for each primary. A queue's keys share one slot, so every command of
 * a queue (the claim, the SCAN, seeding, the sweeps, the audit, cleanup) goes straight to the
 * primary owning that slot, where a script may touch all of the queue's keys.
 */
import type { Redis } from 'ioredis';
import { askInfo, parseServerUrl, serverAddress, tlsOptions, type ServerTarget } from '../connection.js';
import { describeServerError, serverError, usageError } from '../../shared/errors.js';
import { awakeTimeout } from '../frozen.js';
import { SLOTS } from './slot.js';

export interface Topology {
  /** Primaries as `host:port`, in a stable order. */
  readonly primaries: readonly string[];
  /** The primary (`host:port`) owning a slot, if any. */
  ownerOf(slot: number): string | undefined;
  /** A URL target for a primary, with the --url's credentials and TLS. */
  targetOf(node: string): ServerTarget;
}

/** `INFO cluster` says cluster_enabled:1 on a cluster node. */
export function isClusterInfo(info: string): boolean {
  return /^cluster_enabled:1\s*$/m.test(info);
}

/** Whether the server is a cluster node; a connection lost meanwhile is the one-line error every server failure is. */
export async function isClusterNode(redis: Redis, where: string): Promise<boolean> {
  try {
    // A server without cluster support may answer the section empty; a reply that is not INFO's text is no server's.
    return isClusterInfo(await askInfo(redis, 'cluster', false));
  } catch (err) {
    throw describeServerError(err, where);
  }
}

/**
 * `command` replays on one queue of one server: a cluster node would answer its calls with MOVED
 * for a queue whose slot is another node's. Refused before anything is written (exit 2).
 */
export async function refuseClusterNode(redis: Redis, where: string, command: string): Promise<void> {
  if (await isClusterNode(redis, where))
    throw usageError(
      `${command} runs on one server, and ${where} is a node of a cluster: give --url a server outside a cluster (the race itself runs on a cluster)`,
    );
}

/** The --url with its host and port replaced by a node's; user, password and scheme stay. */
export function nodeUrl(seedUrl: string, node: string): string {
  const url = new URL(seedUrl);
  const at = node.lastIndexOf(':');
  url.hostname = node.slice(0, at);
  url.port = node.slice(at + 1);
  url.pathname = '';
  return url.toString();
}

/** A slot → primary table from ioredis' slot cache (slot → [primary, replicas…]). */
export function topologyFromSlots(slots: readonly (readonly string[] | undefined)[], seed: ServerTarget): Topology {
  const owners: (string | undefined)[] = [];
  const primaries = new Set<string>();
  for (let slot = 0; slot < SLOTS; slot++) {
    const owner = slots[slot]?.[0];
    owners.push(owner);
    if (owner) primaries.add(owner);
  }
  return {
    primaries: [...primaries].sort(),
    ownerOf: (slot) => owners[slot],
    // A node of the tool's own cluster is the tool's own as the cluster is, and lives as long.
    targetOf: (node) => ({ ...parseServerUrl(nodeUrl(seed.url, node)), ...(seed.tls ? { tls: seed.tls } : {}), ...(seed.own ? { own: seed.own } : {}) }),
  };
}

/** How long the cluster may take to give its slot map: one wait, as for a server that stops answering. */
const SLOT_MAP_MS = 10_000;

/**
 * The cluster's slot map from the --url node, within SLOT_MAP_MS and until `signal`: a cluster
 * with a node down may never say it is ready, and nothing else would end the wait.
 */
export async function discoverTopology(seed: ServerTarget, signal?: AbortSignal): Promise<Topology> {
  const { host, port, username, password } = serverAddress(seed.url);
  // Loaded here, like the single-server client in connection.ts: only a run that connects needs it.
  const { Cluster } = await import('ioredis');
  const cluster = new Cluster([{ host: host ?? '127.0.0.1', port: port ?? 6379 }], {
    lazyConnect: true,
    enableOfflineQueue: false,
    clusterRetryStrategy: () => null,
    slotsRefreshTimeout: 5000,
    redisOptions: {
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
      ...(seed.url.startsWith('rediss:') ? { tls: tlsOptions(seed) } : {}),
      connectTimeout: 5000,
      maxRetriesPerRequest: 0,
    },
  });
  cluster.on('error', () => {});
  try {
    const ready = cluster.connect();
    ready.catch(() => {});
    // Timed as the tool's connections are (frozen.ts): time the process stood still does not count.
    let timer: NodeJS.Timeout | undefined;
    let stop: (() => void) | undefined;
    const late = new Promise<never>((_, reject) => {
      const noMap = `the cluster at ${seed.display} gave no slot map within ${SLOT_MAP_MS / 1000} s: is one of its nodes down (CLUSTER INFO: cluster_state)?`;
      awakeTimeout(
        SLOT_MAP_MS,
        () => reject(serverError(noMap)),
        (held) => (timer = held),
      );
      stop = () => reject(signal?.reason);
      signal?.addEventListener('abort', stop, { once: true });
    });
    late.catch(() => {});
    try {
      await Promise.race([ready, late]);
    } finally {
      clearTimeout(timer);
      if (stop) signal?.removeEventListener('abort', stop);
    }
    const topology = topologyFromSlots(cluster.slots, seed);
    if (topology.primaries.length === 0) throw new Error('the cluster reports no slots: is it fully set up (CLUSTER INFO cluster_state:ok)?');
    return topology;
  } catch (err) {
    throw describeServerError(err, seed.display);
  } finally {
    cluster.disconnect();
  }
}

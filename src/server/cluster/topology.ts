/**
 * Which primary owns which slot, learned with CLUSTER SLOTS from the --url node, and
 * a plain connection target for each primary. A queue's keys share one slot, so every command of
 * a queue (the claim, the SCAN, seeding, the sweeps, the audit, cleanup) goes straight to the
 * primary owning that slot, where a script may touch all of the queue's keys.
 */
import type { Redis } from 'ioredis';
import { askInfo, connect, parseServerUrl, serverAddress, type ServerTarget } from '../connection.js';
import { describeServerError, serverError, UnlikeRedisReply, usageError } from '../../shared/errors.js';
import { orStopped } from '../../shared/interrupt.js';
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

/** A slot → primary table from a slot map (slot → [primary, replicas…]). */
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

/**
 * Slot ranges as CLUSTER SLOTS gives them: [start, end, [host, port, id, …], replicas…]. A node
 * whose address the cluster does not know (an empty host, or "?") is reached at the --url's host,
 * as a cluster of one machine's nodes announces none.
 */
export function slotsFromReply(reply: unknown, seedHost: string): (string[] | undefined)[] {
  if (!Array.isArray(reply)) throw new UnlikeRedisReply('CLUSTER SLOTS', 'is no list of slot ranges');
  const slots: (string[] | undefined)[] = [];
  for (const range of reply) {
    if (!Array.isArray(range) || range.length < 3) throw new UnlikeRedisReply('CLUSTER SLOTS', 'holds a slot range that is not one');
    const [start, end, ...nodes] = range as [unknown, unknown, ...unknown[]];
    const names = nodes.map((node) => {
      if (!Array.isArray(node) || node.length < 2) throw new UnlikeRedisReply('CLUSTER SLOTS', 'names a node without its address');
      const host = String(node[0] ?? '');
      return `${host === '' || host === '?' ? seedHost : host}:${Number(node[1])}`;
    });
    const first = Number(start);
    const last = Number(end);
    if (!(Number.isInteger(first) && Number.isInteger(last) && first >= 0 && last < SLOTS && first <= last)) {
      throw new UnlikeRedisReply('CLUSTER SLOTS', 'holds a slot range out of bounds');
    }
    for (let slot = first; slot <= last; slot++) slots[slot] = names;
  }
  return slots;
}

/**
 * The cluster's slot map, asked of the --url node on a connection of the tool's own (its bounded
 * wait, `signal` to stop it): CLUSTER SLOTS, the one command a cluster needs beyond a single
 * server's, so that an ACL user needs `+cluster|slots` and nothing more (a cluster client would
 * also send CLIENT SETNAME and CLUSTER INFO), and a refusal reads as any other permission's.
 */
export async function discoverTopology(seed: ServerTarget, signal?: AbortSignal): Promise<Topology> {
  let redis: Redis | undefined;
  try {
    signal?.throwIfAborted();
    redis = await connect(seed);
    const call = redis.call('CLUSTER', 'SLOTS');
    const reply = signal ? await orStopped(signal, call) : await call;
    const { host } = serverAddress(seed.url);
    const topology = topologyFromSlots(slotsFromReply(reply, host ?? '127.0.0.1'), seed);
    if (topology.primaries.length === 0)
      throw serverError(`the cluster at ${seed.display} reports no slots: is it fully set up (CLUSTER INFO cluster_state:ok)?`);
    return topology;
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw describeServerError(err, seed.display);
  } finally {
    redis?.disconnect();
  }
}

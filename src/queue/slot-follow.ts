/**
 * A run's keys deleted wherever its queue's slot now lies, when the cluster was resharded under
 * the run: on MOVED, on the node named (the slot is wholly there); on ASK or TRYAGAIN, the slot
 * still migrating, each key on the node that holds it, the source or, after ASKING, the target.
 * Still by name, exactly the keys the run created, and only while the queue's marker on the node
 * the slot moved to is the run's own, or was gone and is set as the run's there with SET NX first
 * (never another run's claim, nor a window for one). The marker goes last.
 */
import type { Redis } from 'ioredis';
import { connect, parseServerUrl, type ServerTarget } from '../server/connection.js';
import { nodeUrl } from '../server/cluster/topology.js';
import { isTryAgainReply, serverError, slotRedirect } from '../shared/errors.js';
import type { QueueKeys } from './keys.js';
import { unlinkRunKeys } from './seed.js';

/** More MOVED replies than a resharding under one clean-up can explain: the cluster is not settling. */
const MAX_MOVES = 5;

/** Whether `err` says the queue's slot is moving or moved: a clean-up that meets it follows the slot. */
export function slotMoved(err: unknown): boolean {
  return slotRedirect(err) !== undefined || isTryAgainReply(err);
}

/** Another run's claim stands on the node the slot moved to: its keys are not this run's to delete. */
export class ClaimedElsewhere extends Error {
  constructor() {
    super('another run claimed the queue where its slot now lies');
    this.name = 'ClaimedElsewhere';
  }
}

/** A node of the session's cluster, reached with the session's credentials and TLS, as the topology reaches each primary. */
function nodeTarget(target: ServerTarget, node: string): ServerTarget {
  return { ...parseServerUrl(nodeUrl(target.url, node)), ...(target.tls ? { tls: target.tls } : {}), ...(target.own ? { own: target.own } : {}) };
}

/**
 * Deletes the run's keys (the same names as deleteRunKeys, the marker last) starting on `home`, the node
 * the run raced on, following the slot as the replies name its new place; resolves to the nodes it
 * deleted on besides `home`. `ownerValue`: the run's marker, checked on a node the slot moved to
 * before anything there is deleted. Every connection it opens is closed before it resolves. (A
 * `--lib` run, whose library names keys of its own, is refused on a cluster: none comes here.)
 */
export async function deleteFollowingSlot(home: Redis, target: ServerTarget, keys: QueueKeys, jobCount: number, ownerValue: string): Promise<string[]> {
  const opened = new Map<string, Redis>();
  const nodeConnection = async (node: string): Promise<Redis> => {
    const known = opened.get(node);
    if (known) return known;
    const redis = await connect(nodeTarget(target, node));
    opened.set(node, redis);
    return redis;
  };
  let current = home;
  let moves = 0;
  /** On the node the slot moved to, the marker must be the run's or gone: then it is set there, so no run claims the queue meanwhile. */
  const moveTo = async (node: string): Promise<void> => {
    if (++moves > MAX_MOVES) throw serverError(`the queue's slot kept moving while the run's keys were deleted (${MAX_MOVES} moves)`);
    const redis = await nodeConnection(node);
    const held = await redis.get(keys.owner);
    if (held !== null && held !== ownerValue) throw new ClaimedElsewhere();
    if (held === null && (await redis.set(keys.owner, ownerValue, 'NX')) !== 'OK') throw new ClaimedElsewhere();
    current = redis;
  };
  /**
   * `command` on the marker where it lies: on `current` or, when that answers ASK (the marker is
   * not there and its slot is migrating), on the node the ASK names, after ASKING on the same
   * connection (it admits only the next command into the importing slot).
   */
  const onMarker = async (command: readonly (string | number)[]): Promise<unknown> => {
    const [name = '', ...args] = command;
    try {
      return await current.call(String(name), ...args);
    } catch (err) {
      const redirect = slotRedirect(err);
      if (redirect?.kind !== 'ASK') throw err;
      const [, [failed, reply] = []] = (await (await nodeConnection(redirect.node)).pipeline([['asking'], [...command]]).exec()) ?? [];
      if (failed) throw failed;
      return reply ?? null;
    }
  };
  /**
   * As moveTo on MOVED: the marker must be the run's, or, gone, be set as the run's with SET NX
   * where it would lie, so that no run claims the queue (its SET NX, redirected there as this
   * one is, then fails) while this one deletes the keys on the node the slot is migrating to. A
   * SET NX that fails is a claim made since the read.
   */
  const holdMarker = async (): Promise<void> => {
    const held = await onMarker(['get', keys.owner]);
    if (held !== null && held !== ownerValue) throw new ClaimedElsewhere();
    if (held === null && (await onMarker(['set', keys.owner, ownerValue, 'NX'])) !== 'OK') throw new ClaimedElsewhere();
  };
  const checked = new Set<string>();
  /** ASKING before each key: it admits only the next command into the importing slot. */
  const unlinkAsking = async (node: string, names: readonly string[]): Promise<number> => {
    // Before the first deletion on a node the slot is migrating to: the marker held as the run's.
    if (!checked.has(node)) {
      await holdMarker();
      checked.add(node);
    }
    const redis = await nodeConnection(node);
    const replies = (await redis.pipeline(names.flatMap((name) => [['asking'], ['unlink', name]])).exec()) ?? [];
    let count = 0;
    for (const [err, reply] of replies) {
      if (err) throw err;
      if (typeof reply === 'number') count += reply;
    }
    return count;
  };
  const unlink = async (names: readonly string[]): Promise<number> => {
    for (;;) {
      try {
        return await current.unlink(...names);
      } catch (err) {
        const redirect = slotRedirect(err);
        if (redirect?.kind === 'MOVED') {
          await moveTo(redirect.node);
          continue;
        }
        // Every key of the call is on the target already.
        if (redirect?.kind === 'ASK') return unlinkAsking(redirect.node, names);
        if (!isTryAgainReply(err)) throw err;
        // Some on each side: one key at a time, each where it is.
        return unlinkEach(names);
      }
    }
  };
  const unlinkEach = async (names: readonly string[]): Promise<number> => {
    const replies = (await current.pipeline(names.map((name) => ['unlink', name])).exec()) ?? [];
    let count = 0;
    const asked = new Map<string, string[]>();
    const moved: string[] = [];
    replies.forEach(([err, reply], i) => {
      const name = names[i] as string;
      const redirect = err ? slotRedirect(err) : undefined;
      if (!err) count += Number(reply);
      else if (redirect?.kind === 'ASK') asked.set(redirect.node, [...(asked.get(redirect.node) ?? []), name]);
      else if (redirect?.kind === 'MOVED') moved.push(name);
      else throw err;
    });
    for (const [node, some] of asked) count += await unlinkAsking(node, some);
    // The migration ended between the keys: the rest go where the slot now is.
    if (moved.length > 0) count += await unlink(moved);
    return count;
  };
  try {
    // The marker last, as ever: a key lies on one node alone, and a call for one key is redirected
    // only when it is not on the node asked, so it goes wherever it is.
    await unlinkRunKeys(keys, jobCount, unlink);
    return [...opened.keys()];
  } finally {
    for (const redis of opened.values()) redis.disconnect();
  }
}

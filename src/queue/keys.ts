/**
 * The queue's key layout, in one place. Every key carries the queue name as a hash tag, so a
 * queue's keys share one cluster slot and a script may touch all of them.
 */
import { keySlot } from '../server/cluster/slot.js';
import { createRequire } from 'node:module';

/** node:crypto, loaded on first use rather than for `--help` (docs/architecture.md, "How the command starts"). */
const nodeCrypto = (): typeof import('node:crypto') => createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');

/** Letters, digits, '-' and '_': nothing that could break the hash tag or a SCAN pattern. */
// Up to 160 so that a --queue name (at most 100) still fits with every suffix a run adds to it:
// its mode (up to "-node-resque-guarded"), its trial ("-t10000"), its place among --queues
// ("-63", and "-99999" more on a cluster), 136 characters at most.
export const QUEUE_NAME_MAX = 160;
export const QUEUE_NAME = new RegExp(`^[A-Za-z0-9_-]{1,${QUEUE_NAME_MAX}}$`);

/** The longest name `--queue` takes: a run's own queues add their suffixes to it (QUEUE_NAME). */
export const GIVEN_QUEUE_NAME_MAX = 100;

export interface QueueKeys {
  readonly queue: string;
  /** `emq:{Q}:` — the prefix scripts receive as ARGV[4]. */
  readonly prefix: string;
  readonly active: string;
  readonly pending: string;
  readonly dead: string;
  readonly owner: string;
  /** Present while a run on the queue lives: short expiry, refreshed (see owner-claim.ts). */
  readonly heartbeat: string;
  /** The list workers move the jobs they take into (only runs with --workers create it). */
  readonly running: string;
  job(id: number | string): string;
}

export function queueKeys(queue: string): QueueKeys {
  if (!QUEUE_NAME.test(queue)) {
    throw new Error(`invalid queue name ${JSON.stringify(queue)}`);
  }
  const prefix = `emq:{${queue}}:`;
  return {
    queue,
    prefix,
    active: `${prefix}active`,
    pending: `${prefix}pending`,
    dead: `${prefix}dead`,
    owner: `${prefix}owner`,
    heartbeat: `${prefix}heartbeat`,
    running: `${prefix}running`,
    job: (id) => `${prefix}job:${id}`,
  };
}

/** A SCAN MATCH pattern for every key of the queue, with glob characters escaped. */
export function queuePattern(keys: QueueKeys): string {
  return `${keys.prefix.replace(/[\\*?[\]{}]/g, (c) => `\\${c}`)}*`;
}

/**
 * Where a queue library's keys live in the queue (src/libraries/): `emq:{Q}:NAME:`, under the
 * queue's hash tag, so that the claim, the heartbeat and `clean` cover them. The library names
 * them itself, from one version to the next, so they are found there by SCAN, not listed by name.
 */
export function libraryPrefix(keys: QueueKeys, library: string): string {
  return `${keys.prefix}${library}:`;
}

/** A SCAN MATCH pattern for every key a library wrote in the queue. */
export function libraryPattern(keys: QueueKeys, library: string): string {
  return `${libraryPrefix(keys, library).replace(/[\\*?[\]{}]/g, (c) => `\\${c}`)}*`;
}

/** The keys a run creates besides its job hashes and its owner marker. */
export function structureKeys(keys: QueueKeys): string[] {
  return [keys.active, keys.pending, keys.dead, keys.running, keys.heartbeat];
}

/** The job hashes a run of `jobCount` jobs creates, by name. */
function* jobKeys(keys: QueueKeys, jobCount: number): Generator<string> {
  for (let id = 1; id <= jobCount; id++) yield keys.job(id);
}

/** Every key a run creates, by name: what cleanup deletes (job hashes in another order) and nothing else. */
export function* createdKeys(keys: QueueKeys, jobCount: number): Generator<string> {
  yield* structureKeys(keys);
  yield* jobKeys(keys, jobCount);
  yield keys.owner;
}

/** The slot every key of queue `queue` lives in: that of the prefix they share, hash tag included. */
export function queueSlot(queue: string): number {
  return keySlot(queueKeys(queue).prefix);
}

/** The default queue name: `race-` and 8 random hex characters. */
export function randomQueueName(): string {
  return `race-${nodeCrypto().randomBytes(4).toString('hex')}`;
}

/**
 * The part of Bee-Queue the tool uses, as types, and the user's installed copy loaded from the
 * file their project's `require('bee-queue')` gives. Nothing of Bee-Queue is bundled with the
 * tool: it is an optional peer dependency.
 */
import { pathToFileURL } from 'node:url';
import type { FoundLibrary } from '../../shared/model.js';
import { lacksMethods, missingApi, type Lacks } from '../missing-api.js';

/** The options of the `redis` (node_redis 3) client Bee-Queue makes itself for each connection. */
export interface BeeRedisOptions {
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly path?: string | undefined;
  readonly user?: string | undefined;
  readonly password?: string | undefined;
  readonly db?: number | undefined;
  readonly tls?: object | undefined;
  readonly connect_timeout?: number;
  /** Called when a connection drops: an Error ends the client (every pending command fails) rather than reconnecting. */
  readonly retry_strategy?: () => Error;
}

export interface BeeSettings {
  readonly prefix: string;
  readonly redis: BeeRedisOptions;
  /** The gate's lifetime, and twice a worker's heartbeat interval (ms). */
  readonly stallInterval: number;
  /** false: no blocking connection, no `process` (a caller that only checks). */
  readonly isWorker: boolean;
  readonly getEvents: false;
  readonly sendEvents: false;
  readonly activateDelayedJobs: false;
}

export interface BeeJob {
  setId(id: string): BeeJob;
}

/** A node_redis client of Bee-Queue's: ended at once, every pending command failed. */
export interface BeeRedisClient {
  end(flush: boolean): void;
}

export interface BeeQueue {
  readonly client: BeeRedisClient | null;
  readonly bclient: BeeRedisClient | null;
  readonly eclient: BeeRedisClient | null;
  ready(): Promise<unknown>;
  createJob(data: unknown): BeeJob;
  /** Saves the jobs in one pipeline (Bee-Queue's addJob script each); resolves to the errors by job. */
  saveAll(jobs: readonly BeeJob[]): Promise<Map<BeeJob, Error>>;
  /** Starts the worker: a stalled check, then up to `concurrency` jobs taken at once into `active`, each with its heartbeat. */
  process(concurrency: number, handler: (job: BeeJob) => Promise<unknown>): unknown;
  /**
   * Bee-Queue's own stalled-job check, one call of it (no interval: no timer): its
   * checkStalledJobs script, behind the `stallBlock` gate. Emits `stalled` for each job it moved
   * back to `waiting`, and resolves to how many.
   */
  checkStalledJobs(): Promise<number>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'stalled', listener: (jobId: string) => void): unknown;
  /** Stops the worker (waiting at most `timeout` ms for its jobs) and quits its connections. */
  close(timeout: number): Promise<void>;
}

export type BeeQueueClass = new (name: string, settings: BeeSettings) => BeeQueue;

/** What the tool calls of Bee-Queue, the first piece missing from `loaded` (the package's exports: the Queue class itself). */
export const beeQueueLacks: Lacks = (loaded) =>
  lacksMethods('Queue', queueClass(loaded), ['ready', 'createJob', 'saveAll', 'process', 'checkStalledJobs', 'close']);

/** The class a CommonJS `require` gives, or an ESM import's default. */
function queueClass(loaded: unknown): unknown {
  return typeof loaded === 'function' ? loaded : (loaded as { default?: unknown } | undefined)?.default;
}

/** The user's Bee-Queue, loaded; a usage error naming what it lacks of what the tool calls. */
export async function loadBeeQueue(found: FoundLibrary): Promise<BeeQueueClass> {
  const loaded: unknown = await import(pathToFileURL(found.entry).href);
  const missing = beeQueueLacks(loaded);
  if (missing) throw missingApi(found, 'bee-queue', missing);
  return queueClass(loaded) as BeeQueueClass;
}

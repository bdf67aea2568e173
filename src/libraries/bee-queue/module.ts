/**
 * The part of Bee-Queue the tool uses, as types, and the user's installed copy loaded from the
 * file their project's `require('bee-queue')` gives. Nothing of Bee-Queue is bundled with the
 * tool: it is an optional peer dependency.
 */
import { pathToFileURL } from 'node:url';
import { usageError } from '../../errors.js';
import type { FoundLibrary } from '../../model.js';

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

/** The user's Bee-Queue, loaded; a usage error when it lacks what the tool calls. */
export async function loadBeeQueue(found: FoundLibrary): Promise<BeeQueueClass> {
  const loaded = (await import(pathToFileURL(found.entry).href)) as { default?: unknown };
  const Queue = loaded.default as Partial<BeeQueueClass> | undefined;
  const proto = typeof Queue === 'function' ? (Queue.prototype as Partial<BeeQueue>) : undefined;
  if (!proto || typeof proto.checkStalledJobs !== 'function' || typeof proto.saveAll !== 'function' || typeof proto.process !== 'function') {
    throw usageError(
      `--lib bee-queue: the bee-queue ${found.version} at ${found.entry} has no Queue with checkStalledJobs, saveAll and process: emq-race cannot call its stalled-job recovery`,
    );
  }
  return Queue as BeeQueueClass;
}

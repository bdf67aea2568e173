/**
 * The part of node-resque the tool uses, as types, and the user's installed copy loaded from the
 * file their project's `require('node-resque')` gives. Nothing of node-resque is bundled with the
 * tool: it is an optional peer dependency.
 */
import { pathToFileURL } from 'node:url';
import { usageError } from '../../errors.js';
import type { FoundLibrary } from '../../model.js';

/** node-resque's connection options: where its own client connects, and its key namespace. */
export interface ResqueConnection {
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly database?: number | undefined;
  readonly namespace: string;
  /** Options for the ioredis client node-resque makes itself. */
  readonly options?: object;
  /** A client of the caller's, used instead of one of node-resque's own (it then leaves it open). */
  readonly redis?: object;
}

/** What node-resque records of a job it failed: the payload pushed onto `failed`. */
export interface ResqueFailure {
  readonly worker?: string;
  readonly payload?: { readonly args?: readonly unknown[] };
}

export interface ResqueQueue {
  connect(): Promise<void>;
  end(): Promise<void>;
  enqueue(queue: string, func: string, args: unknown[]): Promise<boolean>;
  /**
   * node-resque's own recovery of workers gone silent: every worker whose job started more than
   * `age` ms ago is cleaned (forceCleanWorker), its job pushed onto `failed`. Resolves to the
   * failure payloads it pushed, by worker.
   */
  cleanOldWorkers(age: number): Promise<Record<string, ResqueFailure>>;
  on(event: 'error', listener: (err: unknown) => void): unknown;
}

export interface ResqueWorker {
  connect(): Promise<void>;
  /** Registers the worker, starts its ping timer and polls once (with looping off: takes one job and keeps it). */
  start(): Promise<void>;
  pingTimer: ReturnType<typeof setInterval> | null;
  on(event: 'error', listener: (err: unknown) => void): unknown;
}

export interface WorkerOptions {
  readonly connection: ResqueConnection;
  readonly name: string;
  readonly queues: string[];
  readonly looping: false;
  readonly timeout: number;
}

export interface NodeResque {
  readonly Queue: new (options: { connection: ResqueConnection }) => ResqueQueue;
  readonly Worker: new (options: WorkerOptions, jobs: Record<string, { perform: (...args: unknown[]) => Promise<unknown> }>) => ResqueWorker;
}

/** The user's node-resque, loaded; a usage error when it lacks what the tool calls. */
export async function loadNodeResque(found: FoundLibrary): Promise<NodeResque> {
  const loaded = (await import(pathToFileURL(found.entry).href)) as Partial<NodeResque> & { default?: Partial<NodeResque> };
  const resque = loaded.Queue ? loaded : (loaded.default ?? {});
  const { Queue, Worker } = resque;
  if (typeof Queue !== 'function' || typeof Worker !== 'function' || typeof Queue.prototype.cleanOldWorkers !== 'function') {
    throw usageError(
      `--lib node-resque: the node-resque ${found.version} at ${found.entry} has no Queue, Worker or Queue#cleanOldWorkers: emq-race cannot call its recovery`,
    );
  }
  return { Queue, Worker };
}

/**
 * The part of node-resque the tool uses, as types, and the user's installed copy loaded from the
 * file their project's `require('node-resque')` gives. Nothing of node-resque is bundled with the
 * tool: it is an optional peer dependency.
 */
import { pathToFileURL } from 'node:url';
import type { FoundLibrary } from '../../shared/model.js';
import { exportsOf, lacksMethods, missingApi, type Lacks } from '../missing-api.js';

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

/**
 * The one method of node-resque's ioredis client the tool wraps, to count the round trips its
 * recovery makes: ioredis sends every command through it, a pipeline's (MULTI's too) with a
 * stream marked `isPipeline`, all in one go.
 */
export interface CommandSender {
  sendCommand(command: unknown, stream?: { readonly isPipeline?: boolean }, ...rest: unknown[]): unknown;
}

export interface ResqueQueue {
  /** The queue's connection; after connect() its ioredis client is `redis`. */
  readonly connection?: { readonly redis?: Partial<CommandSender> & { disconnect?(): void } };
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

/** What the tool calls of node-resque, the first piece missing from `loaded` (the package's exports). */
export const nodeResqueLacks: Lacks = (loaded) => {
  const { Queue, Worker } = exportsOf(loaded, 'Queue');
  return lacksMethods('Queue', Queue, ['connect', 'enqueue', 'cleanOldWorkers', 'end']) ?? lacksMethods('Worker', Worker, ['connect', 'start']);
};

/** The user's node-resque, loaded; a usage error naming what it lacks of what the tool calls. */
export async function loadNodeResque(found: FoundLibrary): Promise<NodeResque> {
  const loaded: unknown = await import(pathToFileURL(found.entry).href);
  const missing = nodeResqueLacks(loaded);
  if (missing) throw missingApi(found, 'node-resque', missing);
  return exportsOf(loaded, 'Queue') as unknown as NodeResque;
}

/**
 * The part of BullMQ the tool uses, as types, and the user's installed copy loaded from the file
 * their project's `require('bullmq')` gives. Nothing of BullMQ is bundled with the tool: it is an
 * optional peer dependency.
 */
import { pathToFileURL } from 'node:url';
import type { FoundLibrary } from '../../shared/model.js';
import { exportsOf, lacksMethods, missingApi, type Lacks } from '../missing-api.js';

export interface BullmqJob {
  readonly id?: string | undefined;
}

/** What a BullMQ client (a Queue or a Worker) has in common here. */
interface BullmqClient {
  waitUntilReady(): Promise<unknown>;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

export interface BullmqQueue extends BullmqClient {
  addBulk(jobs: readonly { name: string; data: unknown }[]): Promise<readonly BullmqJob[]>;
  close(): Promise<void>;
}

export interface BullmqWorker extends BullmqClient {
  /** Takes the next job into `active` under `token`, its lock set for the worker's lockDuration. */
  getNextJob(token: string, options?: { block?: boolean }): Promise<BullmqJob | undefined>;
  /**
   * BullMQ's own stalled-job check, one call of it: the method the worker's stalled-check timer
   * (`startStalledCheckTimer`) calls every `stalledInterval`. It runs the moveStalledJobsToWait
   * script through the worker's backend and emits `stalled` for each job it moved. Private in
   * BullMQ's typings; the tool calls it unmodified, as the timer does.
   */
  moveStalledJobsToWait(): Promise<void>;
  /**
   * Runs one take of a job: the processor, then the completion (or the failure) BullMQ sends for
   * it; resolves once that is answered. The worker's own loop calls it for every job it takes.
   */
  processJob(...args: unknown[]): Promise<unknown>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'stalled', listener: (jobId: string) => void): unknown;
  on(event: 'completed', listener: (job: BullmqJob) => void): unknown;
  close(force?: boolean): Promise<void>;
}

export interface BullmqOptions {
  readonly connection: object;
  readonly prefix: string;
}

export interface WorkerOptions extends BullmqOptions {
  readonly autorun: false;
  readonly lockDuration: number;
  readonly stalledInterval: number;
  readonly maxStalledCount: number;
}

/** A worker that runs jobs: BullMQ's own loop takes them and calls the processor (--fault lapsed-lock). */
export interface LiveWorkerOptions extends BullmqOptions {
  readonly concurrency: number;
  readonly lockDuration: number;
  readonly stalledInterval: number;
  readonly maxStalledCount: number;
  /** BullMQ's own switch: the worker never renews its locks, as when its event loop is blocked. */
  readonly skipLockRenewal: boolean;
  /** BullMQ's own switch: the worker runs no stalled check of its own. */
  readonly skipStalledCheck: boolean;
}

export type Processor = (job: BullmqJob) => Promise<unknown>;

export interface Bullmq {
  readonly Queue: new (name: string, options: BullmqOptions) => BullmqQueue;
  readonly Worker: {
    new (name: string, processor: null, options: WorkerOptions): BullmqWorker;
    new (name: string, processor: Processor, options: LiveWorkerOptions): BullmqWorker;
  };
}

/** What the tool calls of BullMQ, the first piece missing from `loaded` (the package's exports). */
export const bullmqLacks: Lacks = (loaded) => {
  const { Queue, Worker } = exportsOf(loaded, 'Worker');
  return (
    lacksMethods('Queue', Queue, ['addBulk', 'close']) ??
    lacksMethods('Worker', Worker, ['waitUntilReady', 'getNextJob', 'moveStalledJobsToWait', 'processJob', 'close'])
  );
};

/** The user's BullMQ, loaded; a usage error naming what it lacks of what the tool calls. */
export async function loadBullmq(found: FoundLibrary): Promise<Bullmq> {
  const loaded: unknown = await import(pathToFileURL(found.entry).href);
  const missing = bullmqLacks(loaded);
  if (missing) throw missingApi(found, 'bullmq', missing);
  return exportsOf(loaded, 'Worker') as unknown as Bullmq;
}

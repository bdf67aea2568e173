/**
 * The messages between the tool and a sweeper running in a process of its own (--processes):
 * setup (parent → child), ready, go (the barrier's release), then swept and done, or failed; and alive,
 * every ALIVE_EVERY_MS from its start, by which the tool tells a child that stopped answering
 * (SIGSTOP, stuck) from one still at work.
 */
import type { TlsSettings } from '../server/tls.js';
import type { Mode, PendingKind, Cadence } from '../shared/model.js';

export interface WorkerSetup {
  readonly type: 'setup';
  /** Sent over the IPC channel, never on a command line, since it may hold a password. */
  readonly url: string;
  readonly display: string;
  /** For rediss://: the parent's CA, client certificate and key (over IPC, like the URL). */
  readonly tls?: TlsSettings;
  readonly mode: Mode;
  readonly queue: string;
  readonly batch: number;
  readonly maxStalled: number;
  readonly probeDelayMs: number;
  readonly maxSweeps: number;
  readonly cadence: Cadence;
  readonly pending: PendingKind;
  readonly userScript?: string;
  readonly functionName?: string;
}

export interface WorkerGo {
  readonly type: 'go';
}

export interface WorkerReady {
  readonly type: 'ready';
}

export interface WorkerDone {
  readonly type: 'done';
  readonly ids: Int32Array;
  /** 0 unknown, 1 pending, 2 dead, per move, parallel to ids. */
  readonly destinations: Uint8Array;
  readonly commands: number;
  readonly retries: number;
  readonly strayIds: number;
  /** The NOSCRIPT replies to the child's script calls, each answered by sending the script whole. */
  readonly noscriptFallbacks: number;
  readonly sweeps: number;
  readonly cutShort: boolean;
}

export interface WorkerAlive {
  readonly type: 'alive';
}

/** How often a child says it is alive: a tenth of the silence after which the tool gives up on it (process-race.ts). */
export const ALIVE_EVERY_MS = 1_000;

/** Sent as a child's sweeping ends, before its record (done): where the race's wall time stops. */
export interface WorkerSwept {
  readonly type: 'swept';
}

export interface WorkerFailed {
  readonly type: 'failed';
  readonly message: string;
  readonly exitCode: number;
}

export type ToWorker = WorkerSetup | WorkerGo;
export type FromWorker = WorkerAlive | WorkerReady | WorkerSwept | WorkerDone | WorkerFailed;

export const DESTINATION_CODES = ['unknown', 'pending', 'dead'] as const;

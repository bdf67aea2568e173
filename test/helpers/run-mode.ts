/** Runs one mode through the tool's own runMode, with small defaults and a fresh queue name. */
import assert from 'node:assert/strict';
import type { Interrupts } from '../../src/shared/interrupt.js';
import { runMode } from '../../src/race/run-mode.js';
import type { Session } from '../../src/server/session.js';
import { ANOMALIES, type Mode, type PendingKind, NO_CONSEQUENCES, type Consequences, type RunResult } from '../../src/shared/model.js';

let counter = 0;
export const queueName = (label: string): string => `race-t${process.pid}-${label}-${counter++}`;

export interface RunOver {
  jobs?: number;
  sweepers?: number;
  batch?: number;
  maxStalled?: number;
  stalledBefore?: number;
  keep?: boolean;
  queue?: string;
  consequences?: Partial<Consequences>;
  pending?: PendingKind;
  live?: number;
  /** Each sweeper a child process of its own (--processes). */
  processes?: boolean;
}

/** Every anomaly the run measured is 0; one it did not measure is null, never 0. */
export function assertNoAnomaly(run: RunResult): void {
  for (const name of ANOMALIES) assert.ok(run[name] === 0 || run[name] === null, `${run.mode} ${name}: ${run[name]}`);
}

export function runWith(session: Session, interrupts: Interrupts, mode: Mode, over: RunOver = {}): Promise<RunResult> {
  return runMode(
    session,
    {
      mode,
      queue: over.queue ?? queueName(mode),
      jobs: over.jobs ?? 1000,
      sweepers: over.sweepers ?? 4,
      batch: over.batch ?? 100,
      maxStalled: over.maxStalled ?? 3,
      stalledBefore: over.stalledBefore ?? 0,
      probeDelayMs: 0,
      keep: over.keep ?? false,
      consequences: { ...NO_CONSEQUENCES, ...over.consequences },
      ...(over.pending ? { pending: over.pending } : {}),
      ...(over.live !== undefined ? { live: over.live } : {}),
      ...(over.processes ? { processes: true } : {}),
    },
    interrupts,
  );
}

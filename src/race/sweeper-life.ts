/**
 * One sweeper's life in a race: sweep until a sweep finds nothing, the sweep budget runs out, or
 * the run is stopped; optionally on a cadence (an interval plus a random jitter), the way sweepers
 * of separate deployments run rather than back to back in lock-step.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sweeper } from '../sweepers/sweeper.js';
import type { Cadence } from '../shared/model.js';

export interface LoopOutcome {
  readonly sweeps: number;
  /** Stopped on the sweep budget rather than on an empty sweep. */
  readonly cutShort: boolean;
}

/** The pause before the next sweep: the interval plus a jitter in [0, jitterMs). */
export function pauseMs(cadence: Cadence, random: () => number): number {
  return cadence.intervalMs + Math.floor(random() * cadence.jitterMs);
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  await sleep(ms, undefined, { signal }).catch(() => {});
}

/** Decides, after a sweep failed, whether this sweeper stops or sweeps again; rethrows otherwise. */
export type Recover = (err: unknown) => Promise<'stop' | 'retry'>;

export async function sweepUntilDone(
  sweeper: Sweeper,
  maxSweeps: number,
  cadence: Cadence,
  signal: AbortSignal,
  random: () => number = Math.random,
  recover?: Recover,
): Promise<LoopOutcome> {
  if (cadence.jitterMs > 0) await pause(Math.floor(random() * cadence.jitterMs), signal);
  // A sweep cut off by an injected fault and retried does not spend the budget: the faults are
  // bounded on their own, and on a slow machine they would otherwise use it up before the work.
  let budget = maxSweeps;
  for (let n = 0; ; n++) {
    if (signal.aborted) return { sweeps: n, cutShort: false };
    if (budget === 0) return { sweeps: n, cutShort: true };
    let found: number;
    try {
      found = await sweeper.sweep();
    } catch (err) {
      // Without injected faults any error ends the race; with them the fault plan decides.
      if (!recover) throw err;
      if ((await recover(err)) === 'stop') return { sweeps: n + 1, cutShort: false };
      continue;
    }
    budget--;
    if (found === 0) return { sweeps: n + 1, cutShort: false };
    await pause(pauseMs(cadence, random), signal);
  }
}

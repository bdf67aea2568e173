/**
 * Explain writes to the user's server like a race does, so it is guarded like one: before its
 * first write the memory guard (queue/memory-guard.ts) checks that every replay's queue fits below
 * `maxmemory` (exit 2, nothing written, when it does not), and while it writes the eviction watch
 * (server/eviction-watch.ts) stops it at the first eviction (exit 3). The embedded server's keeper
 * dying stops it too, as it stops a race: the tool has stopped the server itself, and the replays
 * end with the keeper's line (exit 3) rather than a lost connection.
 */
import { underHelper, type Interrupts } from '../shared/interrupt.js';
import { checkRunMemory } from '../queue/memory-guard.js';
import { underEvictionWatch } from '../server/eviction-watch.js';
import type { Session } from '../server/session.js';
import { memoryTraits } from '../sweepers/strategies.js';
import { LIMITS, type Mode, type ModeRun } from '../shared/model.js';

/** One queue a replay (or the counter race) writes: its one job, its two sweeps' connections. */
export interface ReplayQueue {
  /** The strategy whose commands it sends (the counter race sends the atomic script's kind). */
  readonly mode: Mode;
  readonly queue: string;
}

/** What a replay's queue holds at its peak, in the terms the memory guard reads: one job, two sweeps. Pure. */
function replayRun(replay: ReplayQueue, maxStalled: number, stalledBefore: number): ModeRun {
  return { mode: replay.mode, queue: replay.queue, jobs: 1, sweepers: 2, batch: LIMITS.batch.default, maxStalled, stalledBefore, probeDelayMs: 0, keep: false };
}

/**
 * Runs `work` (the replays, one after another, on `queues`) once the memory guard let it, under
 * the eviction watch and the keeper's watch; `work` takes the interrupts an eviction or the
 * keeper's death also aborts.
 */
export async function guardedReplays<T>(
  session: Session,
  queues: readonly ReplayQueue[],
  job: { readonly maxStalled: number; readonly stalledBefore: number },
  interrupts: Interrupts,
  work: (interrupts: Interrupts) => Promise<T>,
): Promise<T> {
  // The tool's own server's end, killed or dead, stops the replays at once with its own line.
  return underHelper(session.embedded?.ended, interrupts, async (kept) => {
    const runs = queues.map((replay) => replayRun(replay, job.maxStalled, job.stalledBefore));
    const longest = runs.map((run) => run.queue).reduce((a, b) => (b.length > a.length ? b : a), '');
    await checkRunMemory(
      // One replay after another: each queue is a moment of its own.
      [{ where: session.target.display, redis: session.admin, moments: runs.map((run) => [run]), probeQueue: `${longest.slice(0, 120)}-m` }],
      memoryTraits,
      kept,
      {
        subject: `explain (${runs.length === 1 ? 'one queue' : `${runs.length} queues, one after another`}, one job each)`,
        remedy: 'use a server with more room',
      },
    );
    return underEvictionWatch([session.target], kept, work);
  });
}

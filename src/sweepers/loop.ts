/**
 * The round-trip loop: the same recovery as the atomic script, written app-side as separate
 * awaited commands (no pipeline, no MULTI). It is the honest contrast, so it is not "fixed".
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MoveLog } from './move-log.js';
import { destinationFor, detect, move, probe, read, write } from './loop-steps.js';
import { countingExec, type Sweeper, type SweeperContext } from './sweeper.js';

export function loopSweeper(context: SweeperContext): Sweeper {
  const { keys, batch, maxStalled, probeDelayMs, signal, clock } = context;
  const { exec, count } = countingExec(context.redis);
  const record = new MoveLog();
  const { faults } = context;
  // The loop's crash point: it alone has taken the job out of active and not yet pushed it.
  const afterRemove = faults
    ? (removed: number): void => {
        if (removed === 1) faults.afterClaim();
      }
    : undefined;

  return {
    record,
    get commands() {
      return count();
    },
    async sweep() {
      const nowMs = clock.now();
      const ids = await detect(exec, keys, nowMs, batch);
      for (const id of ids) {
        if (signal.aborted) break;
        if (!(await probe(exec, keys, id, nowMs))) continue;
        // Abortable: a long --probe-delay must not hold up a Ctrl-C.
        if (probeDelayMs > 0) await sleep(probeDelayMs, undefined, { signal });
        const stalled = await read(exec, keys, id);
        const destination = destinationFor(stalled, maxStalled);
        await move(exec, keys, id, destination, context.pending, afterRemove);
        await write(exec, keys, id, stalled, destination);
        record.add(Number(id), destination);
      }
      return ids.length;
    },
  };
}

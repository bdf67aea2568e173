/**
 * The round-trip loop: the same recovery as the atomic script, written app-side as separate
 * awaited commands (no pipeline, no MULTI), in the source page's order: detect, probe, ZREM, push,
 * read the counter, write it back plus one; then, this tool's extension, the dead letter for a job
 * whose count reached max-stalled. It is the honest contrast, so it is not "fixed".
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { MoveLog } from './move-log.js';
import { deadLetter, detect, move, probe, reachesDeadLetter, read, write } from './loop-steps.js';
import { countingExec, type Sweeper, type SweeperContext } from './sweeper.js';

export function loopSweeper(context: SweeperContext): Sweeper {
  const { keys, batch, maxStalled, probeDelayMs, signal, clock, sample } = context;
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
        const jobExec = sample ? sample.execFor(id, exec) : exec;
        if (!(await probe(jobExec, keys, id, nowMs))) continue;
        // Abortable: a long --probe-delay must not hold up a Ctrl-C.
        if (probeDelayMs > 0) await sleep(probeDelayMs, undefined, { signal });
        record.hold(Number(id));
        await move(jobExec, keys, id, context.pending, afterRemove);
        const stalled = await read(jobExec, keys, id);
        await write(jobExec, keys, id, stalled);
        if (reachesDeadLetter(stalled, maxStalled)) {
          sample?.notePendingRemoval();
          await deadLetter(jobExec, keys, id, context.pending);
          record.add(Number(id), 'dead');
        } else {
          record.add(Number(id), 'pending');
        }
      }
      return ids.length;
    },
  };
}

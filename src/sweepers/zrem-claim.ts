/**
 * Round trips, but the ZREM is the claim: of all the sweepers that detected an id, only the one
 * whose ZREM returned 1 goes on, and it counts with HINCRBY rather than a read and a write-back.
 * No duplicates and no lost increments while every client lives; a client that dies between the
 * ZREM and the push loses the job, which no sweep can then find.
 */
import { MoveLog } from './move-log.js';
import { detect, probe, push } from './loop-steps.js';
import { countingExec, type Sweeper, type SweeperContext } from './sweeper.js';

export function claimSweeper(context: SweeperContext): Sweeper {
  const { keys, batch, maxStalled, signal, clock } = context;
  const { exec, count } = countingExec(context.redis);
  const record = new MoveLog();

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
        record.hold(Number(id));
        if (Number(await exec('ZREM', keys.active, id)) !== 1) {
          // Another sweeper claimed it: this one changed nothing.
          record.takeHeld();
          continue;
        }
        context.faults?.afterClaim();
        const stalled = Number(await exec('HINCRBY', keys.job(id), 'stalled', 1));
        const destination = stalled >= maxStalled ? 'dead' : 'pending';
        await push(exec, keys, id, destination, context.pending);
        await exec('HSET', keys.job(id), 'state', destination);
        record.add(Number(id), destination);
      }
      return ids.length;
    },
  };
}

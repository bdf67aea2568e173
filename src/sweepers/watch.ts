/**
 * Optimistic concurrency from the application: per detected id, WATCH the active set and the job
 * hash, re-check the lease, read the counter, then MULTI … EXEC the move. If another sweeper
 * touched either key in between, EXEC answers nil: that attempt is a retry and the id is checked
 * again from the top. Correct, at the price of round trips and retries under contention.
 */
import { MoveLog } from './move-log.js';
import { destinationFor, detect, probe, read } from './loop-steps.js';
import { pushArgs } from './pending.js';
import { countingExec, type Sweeper, type SweeperContext } from './sweeper.js';

export function watchSweeper(context: SweeperContext): Sweeper {
  const { redis, keys, batch, maxStalled, signal, clock } = context;
  const { exec, count } = countingExec(redis);
  const record = new MoveLog();
  // Each MULTI … EXEC goes as one pipeline, so it is one round trip however many commands it queues.
  let transactions = 0;
  let retries = 0;

  /** One attempt at one id: 'moved', 'gone' (someone else has it), or 'changed' (EXEC aborted). */
  async function attempt(id: string, nowMs: number): Promise<'moved' | 'gone' | 'changed'> {
    const jobKey = keys.job(id);
    await exec('WATCH', keys.active, jobKey);
    if (!(await probe(exec, keys, id, nowMs))) {
      await exec('UNWATCH');
      return 'gone';
    }
    const stalled = await read(exec, keys, id);
    const destination = destinationFor(stalled, maxStalled);
    const transaction = redis.multi().zrem(keys.active, id);
    if (destination === 'dead') transaction.zadd(keys.dead, 0, id);
    else transaction.call(...pushArgs(keys, context.pending, id));
    transaction.hset(jobKey, 'stalled', stalled + 1, 'state', destination);
    transactions++;
    record.hold(Number(id));
    const sent = transaction.exec();
    context.faults?.afterSend();
    const replies = await sent;
    if (replies === null) {
      // EXEC discarded the transaction: nothing of it ran.
      record.takeHeld();
      return 'changed';
    }
    for (const [err] of replies) if (err) throw err;
    record.add(Number(id), destination);
    return 'moved';
  }

  return {
    record,
    get commands() {
      return count() + transactions;
    },
    get retries() {
      return retries;
    },
    async sweep() {
      const nowMs = clock.now();
      const ids = await detect(exec, keys, nowMs, batch);
      for (const id of ids) {
        if (signal.aborted) break;
        while ((await attempt(id, nowMs)) === 'changed') {
          retries++;
          if (signal.aborted) break;
        }
      }
      return ids.length;
    },
  };
}

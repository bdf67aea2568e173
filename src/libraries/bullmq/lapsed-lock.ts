/**
 * --fault lapsed-lock on BullMQ: a worker that is alive but whose locks lapse while it still runs
 * its jobs, as when its event loop is blocked past the lock's duration. Made with BullMQ's own
 * code and switches only:
 *
 *   1. the jobs are added (Queue.addBulk), and a live Worker of the user's BullMQ takes every one
 *      through its own loop (concurrency = the jobs), with `skipLockRenewal` (BullMQ's switch: its
 *      lock manager never extends a lock) and its own stalled check off; its processor starts each
 *      job and then waits, like a handler stuck on a blocked event loop;
 *   2. one check of BullMQ's own marks them into `stalled`; the race waits until every lock and
 *      the check's gate have lapsed;
 *   3. the mode's callers race their checks as in any run (BullMQ's own, or a port), and move the
 *      jobs back to `wait`;
 *   4. a second worker takes them from `wait` and runs them again, to completion;
 *   5. the first worker's handlers are let go: BullMQ refuses each late completion (its lock is
 *      gone: "Missing lock for job N. moveToFinished"), and the worker reports the refusal as an
 *      error event, which the run counts rather than fails on.
 *
 * Each handler of the two workers counts its run in the job's hash (HANDLER_RUNS_FIELD) before it
 * does anything else. The audit then reads the keys as in any BullMQ run, and the executions from
 * that count: a take that BullMQ fails without running the handler (a job it marked to fail)
 * raises the job's `ats` but runs nothing.
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { serverError } from '../../shared/errors.js';
import type { LapsedLockFigures } from '../../shared/model.js';
import { HANDLER_RUNS_FIELD } from './keys.js';
import { addJobs, markActiveJobs, waitForLapse, type SeedPlan } from './seed.js';

/** The first worker's lockDuration (ms): how soon its locks lapse once it stops renewing them. */
const LAPSING_LOCK_MS = 500;
/** The second worker's concurrency. */
const SECOND_CONCURRENCY = 50;
/** How long each wait for the workers may take before the run gives up (ms). */
const WAIT_LIMIT_MS = 60_000;
const POLL_MS = 20;

/** A refusal of BullMQ's for a job whose lock the worker no longer holds: the job's id, or undefined for another error. */
export function refusedJobId(message: string): string | undefined {
  return /^(?:Missing lock|Lock mismatch) for job (\S+?)\. /.exec(message)?.[1];
}

/** The first worker, still running every job, and what becomes of its completions once they are let go. */
export interface LapsingWorker {
  /** Lets every handler of the first worker finish, as its event loop frees up. */
  release(): void;
  /** Job ids whose late completion BullMQ refused, and those it accepted. */
  readonly refused: ReadonlySet<string>;
  readonly accepted: ReadonlySet<string>;
  /** Job ids whose completion by the second worker BullMQ refused (another take of the same job held the lock). */
  readonly refusedAgain: Set<string>;
  /** BullMQ's words for the first refusal. */
  readonly refusal: () => string | null;
}

/** Steps 1 and 2: the jobs taken by a live worker that stops renewing its locks, marked by BullMQ's check, and every lock lapsed. */
export async function holdLapsingJobs(admin: Redis, plan: SeedPlan): Promise<LapsingWorker> {
  const { bullmq, connection, keys, jobs, clients, signal } = plan;
  await addJobs(plan);
  const started = new Set<string>();
  const refused = new Set<string>();
  const accepted = new Set<string>();
  let refusal: string | null = null;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const worker = new bullmq.Worker(
    keys.name,
    async (job) => {
      started.add(String(job.id));
      await admin.hincrby(keys.job(String(job.id)), HANDLER_RUNS_FIELD, 1);
      await released;
      return 'finished after its lock lapsed';
    },
    {
      connection,
      prefix: keys.prefix,
      concurrency: jobs,
      lockDuration: LAPSING_LOCK_MS,
      stalledInterval: LAPSING_LOCK_MS,
      maxStalledCount: plan.maxStalledCount,
      skipLockRenewal: true,
      skipStalledCheck: true,
    },
  );
  const expected = (err: Error): boolean => {
    const id = refusedJobId(err.message);
    if (id === undefined) return false;
    refused.add(id);
    refusal ??= err.message;
    return true;
  };
  clients.add(worker, expected);
  worker.on('completed', (job) => accepted.add(String(job.id)));
  await until(() => started.size === jobs, signal, `the first worker did not take all ${jobs} jobs`, clients);
  await markActiveJobs(admin, plan);
  await waitForLapse(admin, keys, jobs, signal);
  return { release, refused, accepted, refusedAgain: new Set<string>(), refusal: () => refusal };
}

/**
 * Step 4: a second worker runs whatever the check put back in `wait`; once `wait` is empty and
 * every take's completion has been answered, it is drained (BullMQ's own close).
 */
export async function runAgain(admin: Redis, plan: SeedPlan, lapsing: LapsingWorker): Promise<void> {
  const { bullmq, connection, keys, clients, signal } = plan;
  // Two entries of one job in wait (a port deaf to LREM's reply) are two takes, each under its own
  // lock: the second take's lock refuses the first one's completion. The run counts those too.
  const expected = (err: Error): boolean => {
    const id = refusedJobId(err.message);
    if (id === undefined) return false;
    lapsing.refusedAgain.add(id);
    return true;
  };
  const worker = clients.add(
    new bullmq.Worker(
      keys.name,
      async (job) => {
        await admin.hincrby(keys.job(String(job.id)), HANDLER_RUNS_FIELD, 1);
        // The handler's work is the run itself: it returns on the next turn.
        await sleep(0);
        return 'finished by the second worker';
      },
      {
        connection,
        prefix: keys.prefix,
        concurrency: SECOND_CONCURRENCY,
        lockDuration: 30_000,
        stalledInterval: 30_000,
        maxStalledCount: plan.maxStalledCount,
        skipLockRenewal: false,
        skipStalledCheck: true,
      },
    ),
    expected,
  );
  // Each take ends once BullMQ has answered its completion (accepted; or refused, then failed):
  // its processJob, which runs the handler first, returns only then. The worker is closed only once every take has ended, since
  // BullMQ reports a refusal only while the worker is not closing: one answered during the close
  // would go uncounted. Observed around BullMQ's own method, which runs unchanged.
  let taken = 0;
  let ended = 0;
  const processJob = worker.processJob.bind(worker);
  worker.processJob = async (...args) => {
    taken++;
    try {
      return await processJob(...args);
    } finally {
      ended++;
    }
  };
  await until(
    async () => ended === taken && (await admin.llen(keys.wait)) === 0,
    signal,
    'the second worker left jobs in wait, or completions unanswered',
    clients,
  );
  await clients.drain(worker);
  clients.check();
}

/** Step 5: the first worker's handlers let go; resolves once each of its jobs' completions was refused or accepted. */
export async function finishLate(lapsing: LapsingWorker, jobs: number, plan: Pick<SeedPlan, 'clients' | 'signal'>): Promise<void> {
  lapsing.release();
  await until(
    () => lapsing.refused.size + lapsing.accepted.size >= jobs,
    plan.signal,
    `the first worker's ${jobs} late completions were not all answered`,
    plan.clients,
  );
}

/** Where each of the fault's figures comes from: the same for every run. */
export const LAPSED_LOCK_SOURCES: LapsedLockFigures['sources'] = {
  recovered: 'sweepers',
  executedTwice: 'server',
  lateCompletionsRefused: 'workers',
  lateCompletionsAccepted: 'workers',
  secondRunsRefused: 'workers',
};

/** The figures of the fault, from the workers' records, the callers' and the handlers' runs the audit read. Pure. */
export function lapsedLockFigures(
  jobs: number,
  recovered: number,
  ran: Uint32Array,
  lapsing: Pick<LapsingWorker, 'refused' | 'accepted' | 'refusedAgain' | 'refusal'>,
): LapsedLockFigures {
  let executedTwice = 0;
  for (let id = 1; id <= jobs; id++) if ((ran[id] ?? 0) >= 2) executedTwice++;
  return {
    lapsedJobs: jobs,
    recovered,
    executedTwice,
    lateCompletionsRefused: lapsing.refused.size,
    lateCompletionsAccepted: lapsing.accepted.size,
    secondRunsRefused: lapsing.refusedAgain.size,
    refusal: lapsing.refusal(),
    sources: LAPSED_LOCK_SOURCES,
  };
}

async function until(done: () => boolean | Promise<boolean>, signal: AbortSignal, what: string, clients: { check(): void }): Promise<void> {
  const started = Date.now();
  for (;;) {
    signal.throwIfAborted();
    clients.check();
    if (await done()) return;
    if (Date.now() - started > WAIT_LIMIT_MS) throw serverError(`--fault lapsed-lock: ${what} after ${WAIT_LIMIT_MS / 1000} s`);
    await sleep(POLL_MS, undefined, { signal });
  }
}

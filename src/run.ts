/**
 * One mode, end to end, on a queue of its own: claim, seed, race, audit, clean up. Cleanup runs on
 * every path once the claim is won, unless --keep or a second Ctrl-C says otherwise.
 */
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { auditJobs, movesPerJob, type AuditCounts } from './audit.js';
import { claimQueue } from './claim.js';
import { deleteRunKeys, leftBehindHint } from './cleanup.js';
import { connect } from './connection.js';
import { describeServerError, type EmqError } from './errors.js';
import { interruption, type Interrupts } from './interrupt.js';
import { queueKeys } from './keys.js';
import { checkMemoryRoom } from './memory-check.js';
import type { Mode } from './options.js';
import { newOwnerMarker, ownerValue } from './owner.js';
import { defaultMaxSweeps, race } from './race.js';
import { defineScripts, preloadScripts } from './scripts.js';
import { seedJobs } from './seed.js';
import { measureServerClock, serverTimeMs, type ServerClock } from './server-clock.js';
import type { Session } from './session.js';
import { readSnapshot } from './snapshot.js';
import { SWEEPERS } from './sweepers/index.js';

export interface ModeRun {
  readonly mode: Mode;
  readonly queue: string;
  readonly jobs: number;
  readonly sweepers: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly probeDelayMs: number;
  readonly keep: boolean;
}

export interface RunResult extends AuditCounts {
  readonly mode: Mode;
  readonly queue: string;
  readonly sweepers: number;
  readonly jobs: number;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly wallMs: number;
  readonly jobsPerSec: number;
  /** Commands the sweepers sent, all together. */
  readonly roundTrips: number;
  readonly sweeps: number;
  /** A sweeper hit its sweep budget before a sweep found nothing. */
  readonly cutShort: boolean;
}

export const newRunId = (): string => randomBytes(8).toString('hex');

export async function runMode(session: Session, run: ModeRun, interrupts: Interrupts, clientNow?: () => number): Promise<RunResult> {
  const { admin, target } = session;
  const keys = queueKeys(run.queue);
  const runId = newRunId();
  const signal = interrupts.signal;

  signal.throwIfAborted();
  try {
    await checkMemoryRoom(admin, run.jobs, run.sweepers);
    // The marker records the job count, so `emq-race clean` can delete a crashed run's keys by name.
    await claimQueue(admin, keys, ownerValue(newOwnerMarker(runId, run.jobs)));
  } catch (err) {
    throw describeServerError(err, target.display);
  }

  const sweeperConnections: Redis[] = [];
  let failure: EmqError | undefined;
  try {
    const serverNowMs = await serverTimeMs(admin);
    await seedJobs(admin, keys, { jobs: run.jobs, stalledBefore: run.stalledBefore, serverNowMs }, signal);
    defineScripts(admin);
    await preloadScripts(admin);
    for (let i = 0; i < run.sweepers; i++) {
      signal.throwIfAborted();
      const redis = await connect(target);
      defineScripts(redis);
      sweeperConnections.push(redis);
    }
    const clock: ServerClock = await measureServerClock(admin, clientNow);
    const result = await race({
      connections: sweeperConnections,
      factory: SWEEPERS[run.mode],
      keys,
      clock,
      batch: run.batch,
      maxStalled: run.maxStalled,
      probeDelayMs: run.probeDelayMs,
      maxSweeps: defaultMaxSweeps(run.jobs, run.batch),
      signal,
    });
    signal.throwIfAborted();
    const snapshot = await readSnapshot(admin, keys, run.jobs, run.stalledBefore, signal);
    const counts = auditJobs(snapshot, movesPerJob(run.jobs, result.records));
    return {
      mode: run.mode,
      queue: run.queue,
      sweepers: run.sweepers,
      jobs: run.jobs,
      batch: run.batch,
      maxStalled: run.maxStalled,
      stalledBefore: run.stalledBefore,
      ...counts,
      wallMs: Math.round(result.wallMs * 10) / 10,
      jobsPerSec: Math.round(run.jobs / (Math.max(result.wallMs, 0.001) / 1000)),
      roundTrips: result.commands,
      sweeps: result.sweeps,
      cutShort: result.cutShort,
    };
  } catch (err) {
    failure = interruption(signal) ?? describeServerError(err, target.display);
    throw failure;
  } finally {
    for (const redis of sweeperConnections) redis.disconnect();
    if (!run.keep) await cleanUp(admin, keys, run, interrupts, failure);
  }
}

/**
 * Deletes the run's keys unless a second signal says not to. What cannot be deleted (a lost
 * server, a hurried exit) is said once: appended to the run's error when there is one, so a failed
 * run still ends in one line.
 */
async function cleanUp(admin: Redis, keys: ReturnType<typeof queueKeys>, run: ModeRun, interrupts: Interrupts, failure: EmqError | undefined): Promise<void> {
  const hint = leftBehindHint(run.queue);
  if (!interrupts.hurried && admin.status === 'ready') {
    try {
      await deleteRunKeys(admin, keys, run.jobs, interrupts.hurry);
      return;
    } catch {
      // said below
    }
  }
  if (failure && !interrupts.hurried) failure.message += `; ${hint}`;
  else process.stderr.write(`emq-race: ${hint}\n`);
}

/**
 * One BullMQ mode end to end on a queue of its own: claim (the library's namespace in the queue,
 * see keys.ts), seed real stalled work through BullMQ (seed.ts), race N callers from one barrier,
 * each on its own connection, each checking until a check moves nothing, stop every BullMQ client,
 * read BullMQ's keys back (snapshot.ts) and audit them (audit.ts). The claim's clean-up removes the
 * namespace on every way out.
 *
 *   bullmq          each caller a BullMQ Worker of the user's installed package, calling its own
 *                   stalled check (Worker#moveStalledJobsToWait, the moveStalledJobsToWait script);
 *   bullmq-naive    each caller the round-trip port of that script, deaf to LREM's reply (port.ts);
 *   bullmq-guarded  the same port, acting on LREM's reply.
 *
 * With --fault lapsed-lock the stalled jobs are a live worker's whose locks lapse while it runs
 * them, and after the race a second worker runs them again and the first one's late completions
 * are let go (lapsed-lock.ts).
 */
import type { Redis } from 'ioredis';
import { onClaimedQueue } from '../../queue/claimed-run.js';
import { queueKeys } from '../../queue/keys.js';
import { connect, libraryClientOptions } from '../../server/connection.js';
import { orStopped } from '../../shared/interrupt.js';
import { NO_CONSEQUENCES, type ModeRun } from '../../shared/model.js';
import { CallTimes, libraryResult, raceCallers, type Caller } from '../race.js';
import { PhaseBarrier } from '../phase-barrier.js';
import type { LibraryRunner } from '../runner.js';
import { auditBullmq } from './audit.js';
import { BULLMQ, bullmqKeys, type BullmqKeys } from './keys.js';
import { finishLate, holdLapsingJobs, lapsedLockFigures, runAgain } from './lapsed-lock.js';
import { loadBullmq, type Bullmq } from './module.js';
import { MEETING_POINTS, portedStalledCheck, type Exec, type MeetingPoint } from './port.js';
import { readBullmqSnapshot } from './snapshot.js';
import { BullmqClients, seedStalledJobs } from './seed.js';

/** The callers' stalledInterval and lockDuration (ms): BullMQ's defaults. The gate a check sets lives this long. */
const RACE_INTERVAL_MS = 30_000;
/** Checks one caller may make: a bound, so a broken recovery cannot spin. */
const MAX_CHECKS = 100;

/** BullMQ's maxStalledCount for --max-stalled N: BullMQ fails a job whose count goes above it, the tool at N. */
export function maxStalledCount(maxStalled: number): number {
  return Math.max(0, maxStalled - 1);
}

export const runBullmqMode: LibraryRunner = async (session, run, interrupts) => {
  const found = run.library;
  if (!found) throw new Error(`mode ${run.mode} ran without its library`);
  const bullmq = await loadBullmq(found);
  const keys = queueKeys(run.queue);
  const claim = { admin: session.admin, target: session.target, keys, jobs: run.jobs, keep: run.keep, library: BULLMQ };
  return onClaimedQueue(claim, interrupts, async (claimed) => {
    const clients = new BullmqClients();
    const connections: Redis[] = [];
    try {
      const bull = bullmqKeys(run.queue);
      const plan = {
        bullmq,
        connection: libraryClientOptions(session.target),
        keys: bull,
        jobs: run.jobs,
        runId: claimed.runId,
        maxStalledCount: maxStalledCount(run.maxStalled),
        clients,
        signal: claimed.signal,
      };
      // --fault lapsed-lock: the stalled jobs are a live worker's, whose locks lapse while it runs them.
      const lapsing = run.consequences?.faults.includes('lapsed-lock') ? await holdLapsingJobs(session.admin, plan) : undefined;
      if (!lapsing) await seedStalledJobs(session.admin, plan);
      const raceTarget = session.raceTarget ?? session.target;
      const callers: Caller[] = [];
      const meetings = { gate: new PhaseBarrier(run.sweepers), delete: new PhaseBarrier(run.sweepers) };
      for (let i = 0; i < run.sweepers; i++) {
        claimed.signal.throwIfAborted();
        if (run.mode === 'bullmq') callers.push(await workerCaller(bullmq, libraryClientOptions(raceTarget), bull, run, clients, claimed.signal));
        else {
          const redis = await connect(raceTarget);
          connections.push(redis);
          callers.push(portCaller(redis, bull, run, run.mode === 'bullmq-guarded', meetings, claimed.signal));
        }
      }
      const ownScript = run.mode === 'bullmq' ? "BullMQ's own moveStalledJobsToWait script" : undefined;
      const raced = await raceCallers(callers, run.jobs, claimed.signal, MAX_CHECKS, ownScript);
      if (lapsing) {
        await runAgain(session.admin, plan, lapsing);
        await finishLate(lapsing, run.jobs, plan);
      }
      clients.check();
      // BullMQ's timers (lock renewal, stalled checks) stop before the server is read back.
      await clients.closeAll();
      await claimed.confirmKeys();
      const snapshot = await readBullmqSnapshot(session.admin, bull, run.jobs, claimed.signal);
      const counts = auditBullmq(snapshot, raced.moves, run.maxStalled, lapsing !== undefined);
      if (!lapsing) return libraryResult(run, raced, counts, MAX_CHECKS);
      return libraryResult(run, raced, counts, MAX_CHECKS, {
        consequences: run.consequences ?? NO_CONSEQUENCES,
        faultCounts: { crashes: 0, lostReplies: 0, reconnects: 0, scriptFlushes: 0, clientKills: 0 },
        lapsedLock: lapsedLockFigures(run.jobs, counts.recoveries, snapshot.ran, lapsing),
      });
    } finally {
      await clients.closeAll();
      for (const redis of connections) redis.disconnect();
    }
  });
};

/** A BullMQ worker of the user's package, its stalled check called as its own timer calls it. */
async function workerCaller(bullmq: Bullmq, connection: object, keys: BullmqKeys, run: ModeRun, clients: BullmqClients, signal: AbortSignal): Promise<Caller> {
  const worker = clients.add(
    new bullmq.Worker(keys.name, null, {
      connection,
      prefix: keys.prefix,
      autorun: false,
      lockDuration: RACE_INTERVAL_MS,
      stalledInterval: RACE_INTERVAL_MS,
      maxStalledCount: maxStalledCount(run.maxStalled),
    }),
  );
  const moved: string[] = [];
  worker.on('stalled', (jobId: string) => moved.push(jobId));
  // A signal stops the wait for a worker whose connection never comes up.
  await orStopped(signal, worker.waitUntilReady());
  let commands = 0;
  const callTimes = new CallTimes();
  return {
    async check() {
      const before = moved.length;
      commands++;
      await callTimes.time(() => worker.moveStalledJobsToWait());
      clients.check();
      return moved.slice(before);
    },
    get commands() {
      return commands;
    },
    callTimes,
  };
}

/**
 * The round-trip port on one connection of the tool's, every command a round trip, stopped by
 * `signal` between two. A caller meets the others at `meetings.gate` once it found the gate open,
 * before it closes it, and at `meetings.delete` once it has read what `stalled` holds, before it
 * deletes it; a caller the gate turned away, that read nothing, or that failed, leaves where it
 * did not arrive.
 *
 * The gate is BullMQ's one check per interval (EXISTS, then SET), two round trips in the port: on
 * a busy machine the server may answer one caller's SET before another's EXISTS, turning that one
 * away and the run into fewer callers than asked for. Meeting between the two lets every caller
 * that found the gate open past it, as the port's own order allows, whichever the machine served first.
 *
 * The window is the span between a caller's SMEMBERS and its DEL. Meeting just before the reads
 * (as the port once did) sends them together but leaves their order at the server to chance: a
 * server held off its core for a moment can serve one connection's DEL, sent on its SMEMBERS'
 * answer, ahead of another's SMEMBERS that was waiting longer, and a run raced no one (seen once
 * in CI). Meeting once the read has answered makes the run the overlapping checks it stands for.
 */
function portCaller(redis: Redis, keys: BullmqKeys, run: ModeRun, guarded: boolean, meetings: Record<MeetingPoint, PhaseBarrier>, signal: AbortSignal): Caller {
  let commands = 0;
  const exec: Exec = (command, ...args) => {
    signal.throwIfAborted();
    commands++;
    return redis.call(command, ...args);
  };
  const args = { maxStalledCount: maxStalledCount(run.maxStalled), maxCheckTime: RACE_INTERVAL_MS };
  return {
    async check() {
      const reached = new Set<MeetingPoint>();
      const meet = async (at: MeetingPoint): Promise<void> => {
        reached.add(at);
        await meetings[at].arrive();
      };
      try {
        return await portedStalledCheck(exec, keys, { ...args, now: Date.now() }, guarded, meet);
      } finally {
        for (const at of MEETING_POINTS) if (!reached.has(at)) meetings[at].leave();
      }
    },
    get commands() {
      return commands;
    },
  };
}

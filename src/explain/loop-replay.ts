/**
 * The loop, replayed on one job by two sweeps A and B, each on its own connection and each running
 * the loop's own step functions, with a turnstile letting one step through at a time in the
 * schedule's order. Every command goes through a recorder, so the timeline is what went over the
 * wire.
 */
import { DEAD_LETTER_STEP, deadLetter, detect, move, probe, reachesDeadLetter, read, write } from '../sweepers/loop-steps.js';
import { readJobFacts, readoutOf } from './readout.js';
import type { Replay } from './replay.js';
import { REPLAY_STEPS, SWEEP_NAMES, formatEntry, replayTurns, type ReplayStep, type ScheduleEntry, type SweepName } from './schedule.js';
import type { Stage } from './stage.js';
import { Turnstile } from './turnstile.js';
import { recordingExec, type WireStep } from './wire.js';

export interface LoopReplayPlan {
  readonly queue: string;
  readonly schedule: readonly ScheduleEntry[];
  readonly batch: number;
  readonly maxStalled: number;
}

/** What one sweep knows between its steps: the application-side state the race lives in. */
interface SweepState {
  nowMs: number;
  /** Still working on the job: it detected it and the probe did not drop it. */
  holds: boolean;
  stalledRead: number;
  moved: boolean;
}

export async function replayLoop(stage: Stage, plan: LoopReplayPlan): Promise<Replay> {
  const { keys, jobId, clock, signal } = stage;
  const turns = replayTurns(plan.schedule);
  const named = new Set(plan.schedule.map(formatEntry));
  const gate = new Turnstile(turns);
  const steps: WireStep[] = [];

  const runSweep = async (sweep: SweepName, index: number): Promise<SweepState> => {
    const recorder = recordingExec(stage.connections[index === 0 ? 0 : 1]);
    const { exec } = recorder;
    const state: SweepState = { nowMs: 0, holds: false, stalledRead: 0, moved: false };
    const act: Record<ReplayStep, () => Promise<void>> = {
      detect: async () => {
        state.nowMs = clock.now();
        state.holds = (await detect(exec, keys, state.nowMs, plan.batch)).includes(jobId);
      },
      probe: async () => {
        state.holds = await probe(exec, keys, jobId, state.nowMs);
      },
      move: async () => {
        await move(exec, keys, jobId);
        state.moved = true;
      },
      read: async () => {
        state.stalledRead = await read(exec, keys, jobId);
      },
      write: async () => {
        await write(exec, keys, jobId, state.stalledRead);
      },
      [DEAD_LETTER_STEP]: async () => {
        if (reachesDeadLetter(state.stalledRead, plan.maxStalled)) await deadLetter(exec, keys, jobId);
      },
    };
    try {
      for (const step of REPLAY_STEPS) {
        await gate.turn(sweep, step);
        signal.throwIfAborted();
        // A sweep that never saw the job, or whose probe dropped it, has nothing to send.
        const skip = step !== 'detect' && !state.holds;
        if (!skip) await act[step]();
        const taken = { sweep, step, ...recorder.take() };
        // A dead-letter turn the schedule left out shows only when it sent something.
        if (taken.commands.length > 0 || named.has(`${sweep}:${step}`)) steps.push(taken);
        gate.done();
      }
      return state;
    } catch (err) {
      gate.fail(err);
      throw err;
    }
  };

  const settled = await Promise.allSettled(SWEEP_NAMES.map((sweep, index) => runSweep(sweep, index)));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  const states = settled.map((s) => (s as PromiseFulfilledResult<SweepState>).value);

  const recoverCount = states.filter((s) => s.moved).length;
  const facts = await readJobFacts(stage.admin, keys, jobId);
  return {
    mode: 'loop',
    queue: plan.queue,
    maxStalled: plan.maxStalled,
    stalledBefore: stage.stalledBefore,
    jobId,
    schedule: steps.map((step) => `${step.sweep}:${step.step}`),
    steps,
    readout: readoutOf(facts, recoverCount, stage.stalledBefore),
  };
}

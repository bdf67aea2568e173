/**
 * The atomic form, replayed on one job: sweeps A and B send the sweep script's EVALSHA at the same
 * moment, each on its own connection. The server runs one script to the end before the other, so
 * one call moves the job and the other finds nothing; which ran first is read from the replies,
 * never assumed.
 */
import { SWEEP_STALLED_LUA, loadScript } from '../lua/registry.js';
import { readJobFacts, readoutOf } from './readout.js';
import type { Replay } from './replay.js';
import { SWEEP_NAMES } from './schedule.js';
import type { Stage } from './stage.js';
import { recordingExec, replyNames, type WireStep } from './wire.js';

export interface AtomicReplayPlan {
  readonly queue: string;
  readonly batch: number;
  readonly maxStalled: number;
}

/**
 * Orders two script calls the way the server ran them: a call that moved the job ran before one
 * that found it gone. When the replies do not tell (neither or both moved it), the order stays as
 * sent.
 */
export function orderAsRun(steps: readonly WireStep[], jobId: string): WireStep[] {
  const moved = (step: WireStep) => replyNames(step.replies[0], jobId);
  return [...steps.filter(moved), ...steps.filter((step) => !moved(step))];
}

export async function replayAtomic(stage: Stage, plan: AtomicReplayPlan): Promise<Replay> {
  const { keys, jobId, clock, admin } = stage;
  // The script the main command runs, loaded by its text; SCRIPT LOAD answers with its SHA1.
  const sha = await loadScript(admin, SWEEP_STALLED_LUA);
  const recorders = stage.connections.map((redis) => recordingExec(redis));
  const nowMs = clock.now();
  stage.signal.throwIfAborted();
  // Both calls are written to their sockets in the same tick; neither waits for the other.
  await Promise.all(
    recorders.map((recorder) => recorder.exec('EVALSHA', sha, 3, keys.active, keys.pending, keys.dead, nowMs, plan.batch, plan.maxStalled, keys.prefix)),
  );
  const sent: WireStep[] = recorders.map((recorder, index) => ({ sweep: SWEEP_NAMES[index] ?? 'A', step: 'sweep', ...recorder.take() }));
  const steps = orderAsRun(sent, jobId);
  const recoverCount = steps.filter((step) => replyNames(step.replies[0], jobId)).length;
  const facts = await readJobFacts(admin, keys, jobId);
  return {
    mode: 'atomic',
    queue: plan.queue,
    maxStalled: plan.maxStalled,
    stalledBefore: stage.stalledBefore,
    jobId,
    schedule: steps.map((step) => `${step.sweep}:${step.step}`),
    steps,
    readout: readoutOf(facts, recoverCount, stage.stalledBefore),
  };
}

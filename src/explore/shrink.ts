/**
 * `--shrink`: a seeded run's anomaly brought down to something a person can read. One figure of the
 * audit (a lost increment if the run lost one, else a duplicate, else its first anomaly) is kept
 * above zero at every step, and each step makes a smaller seeded run on a fresh queue:
 *
 * 1. fewer jobs, halved while the figure survives under the same seed and sweepers;
 * 2. fewer sweepers, one at a time down to two;
 * 3. one job and two sweeps, the seed and the seeds after it tried in turn until one shows it;
 * 4. fewer switches: two neighbouring runs of turns of one sweep and the other swapped, so that
 *    each joins its own sweep's run beyond, replayed on a fresh job through explore's conductor,
 *    kept when the figure survives with fewer switches, until no swap gives fewer.
 *
 * What is left is one job and two sweeps, the witness explore's witness.ts makes into the `explain`
 * line that replays it. Every step is a run on the server, judged by the audit's own rules.
 */
import { onStage, type Stage } from '../explain/stage.js';
import type { SweepName } from '../explain/schedule.js';
import type { Interrupts } from '../shared/interrupt.js';
import { ANOMALIES, LIMITS, type Anomaly, type ModeRun, type RunResult, type ShrinkStep, type ShrunkWitness } from '../shared/model.js';
import { race, defaultMaxSweeps } from '../race/race.js';
import { runMode } from '../race/run-mode.js';
import { SeededScheduler, type ScheduledTurn } from '../race/seeded-scheduler.js';
import type { Session } from '../server/session.js';
import { loadSweeper } from '../sweepers/strategies.js';
import type { TraceTurn } from './conductor.js';
import { auditJob, outcomeClass } from './outcome.js';
import { formatTrace, switchesOf } from './search.js';
import { readFacts, runTurned } from './turned-run.js';
import { explainLine } from './witness.js';

/** Seeds tried on one job and two sweeps, from the run's own: enough for the loop's races to show. */
const SEEDS_ON_ONE_JOB = 64;

/**
 * Turns between change points on one job: a sweep of it is six round trips, and a lost increment
 * needs the turn handed over three times within the two sweeps.
 */
const ONE_JOB_GAP = 2;

/** The conductor's refusal of an order that gives a turn to a sweep that has stopped. */
const STOPPED_SWEEP = /the schedule gives turn \d+ to [AB], which has stopped/;

/** The figure to keep: a lost increment is the loop's subtlest, a duplicate its plainest. Pure. */
export function anomalyToKeep(run: Pick<RunResult, Anomaly>): Anomaly | undefined {
  const preferred: readonly Anomaly[] = ['lostIncrements', 'duplicatePending', 'doubleRecoveries'];
  return [...preferred, ...ANOMALIES].find((name) => (run[name] ?? 0) > 0);
}

/**
 * The seeds tried on one job and two sweeps: the run's own and the ones after it, past the last
 * `--seed` takes (2^32 − 1) round to 0, so that each can be given back to `--seed`. Pure.
 */
export function oneJobSeeds(seed: number): number[] {
  return Array.from({ length: SEEDS_ON_ONE_JOB }, (_, i) => (seed + i) % 2 ** 32);
}

/** A trace's sweeps as runs of one sweep: `AAABBA` → [A×3, B×2, A×1]. Pure. */
function blocksOf(sweeps: readonly SweepName[]): { sweep: SweepName; turns: number }[] {
  const blocks: { sweep: SweepName; turns: number }[] = [];
  for (const sweep of sweeps) {
    const last = blocks.at(-1);
    if (last && last.sweep === sweep) last.turns++;
    else blocks.push({ sweep, turns: 1 });
  }
  return blocks;
}

/**
 * Every order with two neighbouring runs of turns swapped: each then joins the run of its own sweep
 * beyond it, so each has fewer switches (two fewer inside, one at either end). Pure.
 */
export function fewerSwitches(sweeps: readonly SweepName[]): SweepName[][] {
  const blocks = blocksOf(sweeps);
  const candidates: SweepName[][] = [];
  for (let at = 0; at + 1 < blocks.length; at++) {
    const swapped = [...blocks.slice(0, at), blocks[at + 1], blocks[at], ...blocks.slice(at + 2)] as { sweep: SweepName; turns: number }[];
    candidates.push(swapped.flatMap((block) => new Array<SweepName>(block.turns).fill(block.sweep)));
  }
  return candidates;
}

/** A one-job race's turns as explore's trace: each sweeper's first sweep (its later ones find nothing), A and B. Pure. */
export function firstSweeps(turns: readonly ScheduledTurn[]): TraceTurn[] {
  return turns.filter((turn) => turn.sweep === 1).map((turn) => ({ sweep: turn.sweeper === 0 ? 'A' : 'B', label: turn.label, runnable: [] }));
}

export interface ShrinkPlan {
  /** The seeded run that found the anomaly. */
  readonly run: ModeRun;
  readonly seed: number;
  /** Each fresh queue is this name and a number. */
  readonly queue: string;
  /** Told of every run made, as it is made (the progress a person watches). */
  readonly note?: (step: ShrinkStep) => void;
}

interface OneJobRun {
  readonly trace: TraceTurn[];
  readonly kept: boolean;
  readonly outcome: string;
}

/** Shrinks the anomaly `found` showed (a seeded run of a loop-replayed mode) to a witness. */
export async function shrinkRun(session: Session, interrupts: Interrupts, plan: ShrinkPlan, found: RunResult): Promise<ShrunkWitness | undefined> {
  const anomaly = anomalyToKeep(found);
  if (anomaly === undefined) return undefined;
  const { mode, stalledBefore, maxStalled, batch } = plan.run;
  const steps: ShrinkStep[] = [];
  const from = { jobs: found.jobs, sweepers: found.sweepers, seed: plan.seed };
  let fresh = 0;
  const record = (step: ShrinkStep): void => {
    steps.push(step);
    plan.note?.(step);
  };
  const seededRun = async (stage: 'jobs' | 'sweepers', jobs: number, sweepers: number): Promise<boolean> => {
    const run: ModeRun = { ...plan.run, queue: `${plan.queue}-${fresh++}`, jobs, sweepers, live: 0, keep: false, seed: plan.seed };
    const result = await runMode(session, run, interrupts);
    const kept = (result[anomaly] ?? 0) > 0;
    record({ stage, jobs, sweepers, seed: plan.seed, found: kept });
    return kept;
  };

  let jobs = found.jobs;
  while (jobs > 1 && (await seededRun('jobs', Math.max(1, Math.floor(jobs / 2)), found.sweepers))) jobs = Math.max(1, Math.floor(jobs / 2));
  let sweepers = found.sweepers;
  while (sweepers > 2 && (await seededRun('sweepers', jobs, sweepers - 1))) sweepers--;

  const onOneJob = <T>(body: (stage: Stage) => Promise<T>): Promise<T> =>
    onStage(session, { queue: `${plan.queue}-${fresh++}`, stalledBefore, keep: false }, interrupts, body);
  const judged = async (stage: Stage, trace: TraceTurn[], moves: number): Promise<OneJobRun> => {
    const counts = auditJob(await readFacts(stage.admin, stage.keys, stage.jobId, stage.clock), moves, stalledBefore, maxStalled);
    return { trace, kept: (counts[anomaly] ?? 0) > 0, outcome: outcomeClass(counts) };
  };
  const factory = await loadSweeper(mode);

  // One job, two sweeps: the race's own sweepers under the seeded scheduler, seed after seed.
  let best: OneJobRun | undefined;
  for (const seed of oneJobSeeds(plan.seed)) {
    if (best) break;
    interrupts.signal.throwIfAborted();
    const oneJob = await onOneJob(async (stage) => {
      const scheduler = new SeededScheduler(2, seed, true, ONE_JOB_GAP);
      const raced = await race({
        connections: stage.connections,
        factory,
        keys: stage.keys,
        clock: stage.clock,
        batch,
        maxStalled,
        probeDelayMs: 0,
        maxSweeps: defaultMaxSweeps(1, batch),
        signal: stage.signal,
        extras: { pending: 'list' },
        scheduler,
      });
      const moves = new Uint32Array(2);
      for (const log of raced.records) log.countInto(moves);
      return judged(stage, firstSweeps(scheduler.trace), moves[1] ?? 0);
    });
    record({ stage: 'one-job', jobs: 1, sweepers: 2, seed, found: oneJob.kept });
    if (oneJob.kept) best = oneJob;
  }
  if (!best) return { mode, anomaly, outcome: outcomeClass(found), from, steps, switches: null, schedule: null, command: null };

  // Fewer switches: every swap of two neighbouring runs tried; the best that keeps the anomaly kept.
  const turned = { mode, batch, maxStalled };
  for (;;) {
    interrupts.signal.throwIfAborted();
    let better: OneJobRun | undefined;
    // Two sweeps took part: a shrunk run never opens a third connection.
    const sweeps = best.trace.map((turn) => turn.sweep).filter((sweep): sweep is SweepName => sweep !== 'C');
    for (const order of fewerSwitches(sweeps)) {
      const tried = await onOneJob(async (stage) => {
        const run = await runTurned(stage, turned, order);
        return judged(stage, run.trace, run.moves);
      }).catch((err: unknown) => {
        // The order gave a turn to a sweep that had stopped (it saw the job gone): not an execution.
        if (err instanceof Error && STOPPED_SWEEP.test(err.message) && !interrupts.signal.aborted) return undefined;
        throw err;
      });
      if (!tried?.kept || switchesOf(tried.trace) >= switchesOf((better ?? best).trace)) continue;
      better = tried;
    }
    if (!better) break;
    best = better;
  }
  const job = { stalledBefore, maxStalled };
  const defaults = { stalledBefore: LIMITS.stalledBefore.default, maxStalled: LIMITS.maxStalled.default };
  return {
    mode,
    anomaly,
    outcome: best.outcome,
    from,
    steps,
    switches: switchesOf(best.trace),
    schedule: formatTrace(best.trace),
    command: explainLine(mode, best.trace, job, defaults),
  };
}

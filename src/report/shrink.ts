/**
 * What `--shrink` found, in a few lines under the report: the path from the seeded run to one job
 * and two sweeps, and the witness as the explain line that replays it. Pure.
 */
import type { ShrunkWitness } from '../shared/model.js';

const WORDS: Readonly<Record<string, string>> = {
  lostIncrements: 'a lost increment',
  duplicatePending: 'a duplicate in pending',
  doubleRecoveries: 'a double recovery',
};

/** The lines; `fit` wraps a sentence to the width (the explain line is left whole, to be copied). */
export function shrinkLines(witness: ShrunkWitness, fit: (line: string) => string): string[] {
  const { from, steps } = witness;
  // Only the steps that kept the anomaly are the path; the one-job seeds are counted apart.
  const kept = steps.filter((step) => step.found);
  const fewerJobs = kept.filter((step) => step.stage === 'jobs').map((step) => step.jobs);
  const fewerSweepers = kept.filter((step) => step.stage === 'sweepers').map((step) => step.sweepers);
  const oneJob = steps.filter((step) => step.stage === 'one-job');
  const found = oneJob.find((step) => step.found);
  const path = [
    `jobs ${[from.jobs, ...fewerJobs].join(' → ')}`,
    `sweepers ${[from.sweepers, ...fewerSweepers].join(' → ')}`,
    found
      ? // At one job's faster change points: not a run `--seed N` makes again, which the line says; the witness is the replay.
        `then one job and two sweeps: seed ${found.seed} at one job's quicker changes of sweep (not what --seed ${found.seed} runs; ${oneJob.length} seed${oneJob.length === 1 ? '' : 's'} tried)`
      : `no seed of ${oneJob.length} tried showed it on one job and two sweeps`,
  ].join(', ');
  const head = `Shrunk from seed ${from.seed}, keeping ${WORDS[witness.anomaly] ?? witness.anomaly} at every step (${steps.length} seeded runs, each on a fresh queue): ${path}.`;
  if (witness.switches === null) return [fit(head)];
  const replay =
    witness.command ?? `explain cannot replay it step by step (a step of one sweep is split by the other's commands); its round trips: ${witness.schedule}`;
  return [
    fit(head),
    fit(`The witness, ${witness.outcome} in ${witness.switches} switch${witness.switches === 1 ? '' : 'es'}, to replay step by step:`),
    `  ${replay}`,
  ];
}

/**
 * The order in which the replay runs the loop's steps of two sweeps A and B. A schedule is valid
 * when it names each sweep's five steps once each, in the loop's own order: only the interleaving
 * between the two sweeps is the user's to choose, since one sweep's code runs top to bottom.
 */
import { usageError } from '../errors.js';
import { LOOP_STEPS, type LoopStep } from '../sweepers/loop-steps.js';

export const SWEEP_NAMES = ['A', 'B'] as const;
export type SweepName = (typeof SWEEP_NAMES)[number];

export interface ScheduleEntry {
  readonly sweep: SweepName;
  readonly step: LoopStep;
}

/** The worst interleaving: both sweeps see the job, read the counter, then both act on it. */
export const DEFAULT_SCHEDULE = 'A:detect,B:detect,A:probe,B:probe,A:read,B:read,A:move,B:move,A:write,B:write';

/** A finishes before B starts: the serial order, in which B must find nothing. */
export const SERIAL_SCHEDULE = 'A:detect,A:probe,A:read,A:move,A:write,B:detect,B:probe,B:read,B:move,B:write';

export function formatEntry(entry: ScheduleEntry): string {
  return `${entry.sweep}:${entry.step}`;
}

/** Parses `A:detect,B:detect,…` into entries, or throws one usage error naming what is wrong. */
export function parseSchedule(raw: string): ScheduleEntry[] {
  const fail = (why: string) => usageError(`--schedule: ${why}`);
  const steps = LOOP_STEPS.join(', ');
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.every((part) => part === '')) throw fail(`is empty; expected SWEEP:STEP items such as ${DEFAULT_SCHEDULE}`);

  const entries: ScheduleEntry[] = [];
  const next = new Map<SweepName, number>(SWEEP_NAMES.map((name) => [name, 0]));
  for (const part of parts) {
    const match = /^([^:\s]+)\s*:\s*([^:\s]+)$/.exec(part);
    if (!match) throw fail(`${JSON.stringify(part)} is not SWEEP:STEP (for example A:detect)`);
    const sweepText = (match[1] ?? '').toUpperCase();
    const stepText = (match[2] ?? '').toLowerCase();
    if (!(SWEEP_NAMES as readonly string[]).includes(sweepText)) {
      throw fail(`${JSON.stringify(part)} names sweep ${JSON.stringify(match[1])}; the sweeps are A and B`);
    }
    if (!(LOOP_STEPS as readonly string[]).includes(stepText)) {
      throw fail(`${JSON.stringify(part)} names step ${JSON.stringify(match[2])}; the loop's steps are ${steps}`);
    }
    const sweep = sweepText as SweepName;
    const step = stepText as LoopStep;
    const index = LOOP_STEPS.indexOf(step);
    const expected = next.get(sweep) ?? 0;
    // Steps are taken in order, so one behind the next expected step has been seen already.
    if (index < expected) throw fail(`${sweep}:${step} appears twice; each sweep runs ${steps} once each, in that order`);
    if (index > expected) {
      throw fail(`${sweep}:${step} comes before ${sweep}:${LOOP_STEPS[expected]}; each sweep runs ${steps} once each, in that order`);
    }
    next.set(sweep, expected + 1);
    entries.push({ sweep, step });
  }
  for (const sweep of SWEEP_NAMES) {
    const done = next.get(sweep) ?? 0;
    if (done < LOOP_STEPS.length) {
      throw fail(`${sweep}:${LOOP_STEPS[done]} is missing; each sweep needs all of ${steps}`);
    }
  }
  return entries;
}

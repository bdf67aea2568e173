/**
 * The order in which the replay runs the loop's steps of two sweeps A and B. A schedule is valid
 * when it names each sweep's five steps (the source page's: detect, probe, move, read, write) once
 * each, in that order: only the interleaving between the two sweeps is the user's to choose, since
 * one sweep's code runs top to bottom. Each sweep may also name its dead-letter step (this tool's
 * extension) after its write; left out, it takes its turn right after that write, and sends
 * nothing unless the write reached max-stalled.
 */
import { usageError } from '../shared/errors.js';
import { nearWord, showable, shownValue, VALUE_NOT_SHOWN } from '../shared/text.js';
import { DEAD_LETTER_STEP, LOOP_STEPS, type LoopStep } from '../sweepers/loop-steps.js';

export const SWEEP_NAMES = ['A', 'B'] as const;
export type SweepName = (typeof SWEEP_NAMES)[number];

/** Every step a sweep takes, in its order: the page's five, then the dead-letter extension. */
export const REPLAY_STEPS = [...LOOP_STEPS, DEAD_LETTER_STEP] as const;
export type ReplayStep = LoopStep | typeof DEAD_LETTER_STEP;

export interface ScheduleEntry {
  readonly sweep: SweepName;
  readonly step: ReplayStep;
}

/** The worst interleaving: both sweeps see the job, both move it, then both count it. */
export const DEFAULT_SCHEDULE = 'A:detect,B:detect,A:probe,B:probe,A:move,B:move,A:read,B:read,A:write,B:write';

/** A finishes before B starts: the serial order, in which B must find nothing. */
export const SERIAL_SCHEDULE = 'A:detect,A:probe,A:move,A:read,A:write,B:detect,B:probe,B:move,B:read,B:write';

export function formatEntry(entry: ScheduleEntry): string {
  return `${entry.sweep}:${entry.step}`;
}

/** Parses `A:detect,B:detect,…` into entries, or throws one usage error naming what is wrong. */
export function parseSchedule(raw: string): ScheduleEntry[] {
  const fail = (why: string) => usageError(`--schedule: ${why}`);
  const steps = LOOP_STEPS.join(', ');
  const order = `each sweep runs ${steps} once each, in that order (and may name its ${DEAD_LETTER_STEP} after its write)`;
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.every((part) => part === '')) throw fail(`is empty; expected SWEEP:STEP items such as ${DEFAULT_SCHEDULE}`);

  // An item is repeated only when it reads as one mistyped: a password typed here is not.
  const shown = (part: string): string => shownValue(part, /^[a-z]{1,2}\s*:\s*[a-z_-]{1,24}$/i.test(part) || nearWord(part, REPLAY_STEPS));
  const entries: ScheduleEntry[] = [];
  const next = new Map<SweepName, number>(SWEEP_NAMES.map((name) => [name, 0]));
  for (const [position, part] of parts.entries()) {
    const match = /^([^:\s]+)\s*:\s*([^:\s]+)$/.exec(part);
    // An item not shown is named by its place in the list, so that it can still be found.
    const item = `item ${position + 1} of ${parts.length}`;
    if (part === '') throw fail(`${item} is empty (two commas in a row, or one at an end); expected SWEEP:STEP items such as ${DEFAULT_SCHEDULE}`);
    const quoted = shown(part);
    const named = quoted === VALUE_NOT_SHOWN ? `${item}, ${quoted},` : quoted;
    if (!match) throw fail(`${named} is not SWEEP:STEP (for example A:detect; items are separated by commas)`);
    const sweepText = (match[1] ?? '').toUpperCase();
    const stepText = (match[2] ?? '').toLowerCase();
    if (!(SWEEP_NAMES as readonly string[]).includes(sweepText)) {
      const sweepNamed = /^[a-z]{1,2}$/i.test(match[1] ?? '') ? `sweep ${JSON.stringify(match[1])}` : 'another sweep';
      throw fail(`${named} names ${sweepNamed}; the sweeps are A and B`);
    }
    if (!(REPLAY_STEPS as readonly string[]).includes(stepText)) {
      const typed = match[2] ?? '';
      const stepNamed = showable(typed, nearWord(typed, REPLAY_STEPS)) ? `step ${JSON.stringify(typed)}` : 'another step';
      throw fail(`${named} names ${stepNamed}; the loop's steps are ${steps}, then ${DEAD_LETTER_STEP}`);
    }
    const sweep = sweepText as SweepName;
    const step = stepText as ReplayStep;
    const index = REPLAY_STEPS.indexOf(step);
    const expected = next.get(sweep) ?? 0;
    // Steps are taken in order, so one behind the next expected step has been seen already.
    if (index < expected) throw fail(`${sweep}:${step} appears twice; ${order}`);
    if (index > expected) throw fail(`${sweep}:${step} comes before ${sweep}:${REPLAY_STEPS[expected]}; ${order}`);
    next.set(sweep, expected + 1);
    entries.push({ sweep, step });
  }
  for (const sweep of SWEEP_NAMES) {
    const done = next.get(sweep) ?? 0;
    if (done < LOOP_STEPS.length) throw fail(`${sweep}:${LOOP_STEPS[done]} is missing; each sweep needs all of ${steps}`);
  }
  return entries;
}

/** The turns the replay takes: the schedule, with each dead-letter step it leaves out right after that sweep's write. */
export function replayTurns(schedule: readonly ScheduleEntry[]): ScheduleEntry[] {
  const named = new Set(schedule.filter((e) => e.step === DEAD_LETTER_STEP).map((e) => e.sweep));
  return schedule.flatMap((entry) => (entry.step === 'write' && !named.has(entry.sweep) ? [entry, { sweep: entry.sweep, step: DEAD_LETTER_STEP }] : [entry]));
}

/** What explore prints: a table per mode, fitted to the width, and the JSON contract. Pure. */
import { groupThousands, plural, wrap, wrapLines } from '../shared/text.js';
import type { Exploration } from './explore.js';
import { CLEAN } from './outcome.js';

function percent(part: number, whole: number): string {
  if (whole === 0) return '-';
  const share = (100 * part) / whole;
  return `${share >= 10 || share === 0 ? share.toFixed(0) : share.toFixed(1)}%`;
}

/** `A's 6 and B's 6`, `A's 9, B's 9 and C's 9`. */
function turnsText(turns: Exploration['turns']): string {
  const parts = Object.entries(turns).map(([sweep, n]) => `${sweep}'s ${n}`);
  return parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts.join('');
}

/**
 * What was explored, in words: every schedule of the sweeps' turns, or, under a bound, how many of
 * them it covers; and the executions they come to.
 */
function explorationHead(exploration: Exploration): string {
  const { schedules, allSchedules, maxSwitches, turns, executions } = exploration;
  const covered =
    maxSwitches === null
      ? `${groupThousands(schedules)} schedules`
      : `${groupThousands(schedules)} of ${groupThousands(allSchedules)} schedules (those with at most ${plural(maxSwitches, 'preemption')})`;
  return `${covered} of ${turnsText(turns)} round trips, ${groupThousands(executions.length)} distinct executions`;
}

/** One mode's table: its counts, a row per outcome class, then each class's witness line (whole, to be copied). */
export function renderExploration(exploration: Exploration, width: number): string {
  const { mode, schedules, executions, outcomes, witnesses } = exploration;
  const head = `${mode}: ${explorationHead(exploration)}${exploration.complete ? '' : ' (incomplete: stopped before the end)'}`;
  const header = ['outcome', 'schedules', 'share', 'executions', 'switches'];
  const rows = Object.entries(outcomes).map(([outcome, count]) => [
    outcome,
    groupThousands(count),
    percent(count, schedules),
    groupThousands(executions.filter((e) => e.outcome === outcome).length),
    String(witnesses.find((w) => w.outcome === outcome)?.switches ?? '-'),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  // Three sweeps' classes can be long (duplicateAndOverCountAndMisplacedAndDeadLetteredEarly): the
  // outcome column keeps to what the width leaves, and a longer name has a line of its own.
  const numbers = widths.slice(1).reduce((sum, w) => sum + w + 2, 0);
  widths[0] = Math.max(header[0]?.length ?? 0, Math.min(widths[0] ?? 0, width - 2 - numbers));
  const line = (cells: readonly string[]) =>
    `  ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ')}`.trimEnd();
  const row = (cells: readonly string[]) => ((cells[0] ?? '').length > (widths[0] ?? 0) ? [`  ${cells[0]}`, line(['', ...cells.slice(1)])] : [line(cells)]);
  const lines = [...wrapLines(head, width).trimEnd().split('\n'), line(header), ...rows.flatMap(row)];
  // The orders that break it, the shortest of each kind, as lines to replay (--json has every class's).
  const breaking = witnesses.filter((w) => w.outcome !== CLEAN);
  const replayable = breaking.filter((w) => w.command !== null);
  if (replayable.length > 0) {
    lines.push(...wrapLines('fewest switches to each anomaly, to replay step by step:', width).trimEnd().split('\n'));
    for (const witness of replayable) lines.push(`  ${witness.outcome} (${witness.switches}): ${witness.command}`);
  }
  // Orders explain cannot replay (three sweeps, a split loop step): their round trips, in order.
  const unreplayable = breaking.filter((w) => w.command === null);
  if (unreplayable.length > 0) {
    lines.push(...wrapLines("fewest switches to each anomaly, the sweeps' round trips in order (explain replays two sweeps):", width).trimEnd().split('\n'));
    for (const witness of unreplayable) {
      lines.push(...wrap(`${witness.outcome} (${witness.switches}): ${witness.schedule.replaceAll(',', ', ')}`, width - 2, '    ').map((l) => `  ${l}`));
    }
  }
  return lines.join('\n');
}

export const BOUND_LEGEND =
  'preemptions: changes of sweep while the sweep that had the turn could have gone on (the change when a sweep stops is not one); the bound covers the schedules with at most that many, and runs every execution they make.';

export const EXPLORE_LEGEND =
  'Each outcome read back from the server and judged by the audit. executions: distinct runs (schedules that differ only after a sweep stopped are one); switches: the fewest changes of sweep to reach the outcome.';

/** One mode's JSON: the counts, the classes and each class's witness. */
export interface ExplorationJson {
  readonly mode: string;
  readonly complete: boolean;
  readonly sweeps: number;
  readonly maxSwitches: number | null;
  readonly schedules: number;
  readonly allSchedules: number;
  readonly executions: number;
  readonly turns: Readonly<Record<string, number>>;
  readonly outcomes: Readonly<Record<string, number>>;
  /** Executions per class: the runs behind each class's schedules. */
  readonly outcomeExecutions: Readonly<Record<string, number>>;
  readonly witnesses: readonly { outcome: string; switches: number; schedule: string; command: string | null }[];
  readonly modelAgrees: boolean;
}

export function explorationJson(exploration: Exploration): ExplorationJson {
  const outcomeExecutions: Record<string, number> = {};
  for (const outcome of Object.keys(exploration.outcomes)) outcomeExecutions[outcome] = exploration.executions.filter((e) => e.outcome === outcome).length;
  return {
    mode: exploration.mode,
    complete: exploration.complete,
    sweeps: exploration.sweeps,
    maxSwitches: exploration.maxSwitches,
    schedules: exploration.schedules,
    allSchedules: exploration.allSchedules,
    executions: exploration.executions.length,
    turns: exploration.turns,
    outcomes: exploration.outcomes,
    outcomeExecutions,
    witnesses: exploration.witnesses.map((w) => ({ outcome: w.outcome, switches: w.switches, schedule: w.schedule, command: w.command })),
    modelAgrees: exploration.executions.every((e) => e.outcome === e.predicted && e.sameTurns),
  };
}

/** `explore --json`: the whole exploration, and what the page is drawn from. */
export interface ExploreReportJson {
  readonly kind: 'explore';
  readonly complete: boolean;
  readonly server: { readonly kind: string; readonly version: string; readonly url: string };
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly sweeps: number;
  readonly maxSwitches: number | null;
  readonly modes: readonly ExplorationJson[];
  readonly stopped?: { readonly exit: number; readonly message: string };
  /** With `stopped`: the modes asked for that the stop came before, in order. */
  readonly notStarted?: readonly string[];
}

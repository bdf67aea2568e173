/** What explore prints: a table per mode, fitted to the width, and the JSON contract. Pure. */
import { wrapLines } from '../text.js';
import type { Exploration } from './explore.js';
import { CLEAN } from './outcome.js';

function percent(part: number, whole: number): string {
  if (whole === 0) return '-';
  const share = (100 * part) / whole;
  return `${share >= 10 || share === 0 ? share.toFixed(0) : share.toFixed(1)}%`;
}

/** One mode's table: its counts, a row per outcome class, then each class's witness line (whole, to be copied). */
export function renderExploration(exploration: Exploration, width: number): string {
  const { mode, schedules, executions, outcomes, witnesses, turns } = exploration;
  const head = `${mode}: ${schedules} schedules of A's ${turns.A} and B's ${turns.B} round trips, ${executions.length} distinct executions${exploration.complete ? '' : ' (incomplete: stopped before the end)'}`;
  const header = ['outcome', 'schedules', 'share', 'executions', 'switches'];
  const rows = Object.entries(outcomes).map(([outcome, count]) => [
    outcome,
    String(count),
    percent(count, schedules),
    String(executions.filter((e) => e.outcome === outcome).length),
    String(witnesses.find((w) => w.outcome === outcome)?.switches ?? '-'),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `  ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ')}`.trimEnd();
  const lines = [...wrapLines(head, width).trimEnd().split('\n'), line(header), ...rows.map(line)];
  // The orders that break it, the shortest of each kind, as lines to replay (--json has every class's).
  const breaking = witnesses.filter((w) => w.outcome !== CLEAN && w.command !== null);
  if (breaking.length > 0) {
    lines.push(...wrapLines('fewest switches to each anomaly, to replay step by step:', width).trimEnd().split('\n'));
    for (const witness of breaking) lines.push(`  ${witness.outcome} (${witness.switches}): ${witness.command}`);
  }
  return lines.join('\n');
}

export const EXPLORE_LEGEND =
  'Each outcome read back from the server and judged by the audit. executions: distinct runs (schedules that differ only after a sweep stopped are one); switches: the fewest changes of sweep to reach the outcome.';

/** One mode's JSON: the counts, the classes and each class's witness. */
export function explorationJson(exploration: Exploration): object {
  return {
    mode: exploration.mode,
    complete: exploration.complete,
    schedules: exploration.schedules,
    executions: exploration.executions.length,
    turns: exploration.turns,
    outcomes: exploration.outcomes,
    witnesses: exploration.witnesses.map((w) => ({ outcome: w.outcome, switches: w.switches, schedule: w.schedule, command: w.command })),
    modelAgrees: exploration.executions.every((e) => e.outcome === e.predicted && e.sameTurns),
  };
}

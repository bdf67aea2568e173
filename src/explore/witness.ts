/**
 * An execution as a line a user can run: `emq-race explain --mode M --schedule …`. Explain orders
 * the loop's steps, so a loop execution has one exactly when no step of one sweep is split by the
 * other's commands (the move is ZREM then RPUSH; the dead letter LREM, ZADD, HSET). The atomic
 * replay sends both calls at once and the server orders them, which is the whole of what can differ.
 * Pure.
 */
import { DEAD_LETTER_STEP, LOOP_STEPS } from '../sweepers/loop-steps.js';
import type { ReplayStep, SweepName } from '../explain/schedule.js';
import { replayOf } from '../sweepers/strategies.js';
import type { Mode } from '../shared/model.js';
import type { TraceTurn } from './conductor.js';

/** The loop's steps with the commands each sends, in its order. */
const STEP_COMMANDS: readonly (readonly [ReplayStep, number])[] = [
  ['detect', 1],
  ['probe', 1],
  ['move', 2],
  ['read', 1],
  ['write', 1],
  [DEAD_LETTER_STEP, 3],
];

/**
 * The loop execution as explain's schedule of steps, or undefined when the other sweep's commands
 * split a step or a third sweep took part. A sweep that stopped early names its remaining steps right after its last one (they
 * send nothing); a dead letter it sent is named where it ran.
 */
export function loopSchedule(trace: readonly TraceTurn[]): string | undefined {
  // Explain replays two sweeps: an order of three has no line.
  const isAorB = (turn: TraceTurn): turn is TraceTurn & { readonly sweep: SweepName } => turn.sweep === 'A' || turn.sweep === 'B';
  if (!trace.every(isAorB)) return undefined;
  const steps: { sweep: SweepName; step: ReplayStep }[] = [];
  const taken: Record<SweepName, number> = { A: 0, B: 0 };
  let open: { sweep: SweepName; left: number } | undefined;
  for (const turn of trace) {
    if (open && open.left > 0) {
      if (open.sweep !== turn.sweep) return undefined;
      open.left--;
      taken[turn.sweep]++;
      continue;
    }
    const mine = steps.filter((s) => s.sweep === turn.sweep).length;
    const [step, commands] = STEP_COMMANDS[mine] ?? [];
    if (step === undefined || commands === undefined) return undefined;
    steps.push({ sweep: turn.sweep, step });
    open = { sweep: turn.sweep, left: commands - 1 };
    taken[turn.sweep]++;
  }
  if (open && open.left > 0) return undefined;
  // The steps a stopped sweep never took send nothing: named right after its last one.
  const out: string[] = [];
  const lastOf = (sweep: SweepName) => steps.map((s) => s.sweep).lastIndexOf(sweep);
  steps.forEach((entry, at) => {
    out.push(`${entry.sweep}:${entry.step}`);
    if (at === lastOf(entry.sweep)) {
      const named = steps.filter((s) => s.sweep === entry.sweep).length;
      for (const step of LOOP_STEPS.slice(named)) out.push(`${entry.sweep}:${step}`);
    }
  });
  return out.join(',');
}

/** The explain line that replays this execution, or null when explain cannot replay it. */
export function explainLine(
  mode: Mode,
  trace: readonly TraceTurn[],
  job: { stalledBefore: number; maxStalled: number },
  defaults: { stalledBefore: number; maxStalled: number },
): string | null {
  // Explain replays two sweeps: an order of three has no line.
  if (trace.some((turn) => turn.sweep === 'C')) return null;
  const kind = replayOf(mode);
  const flags = [
    ...(job.maxStalled !== defaults.maxStalled ? [`--max-stalled ${job.maxStalled}`] : []),
    ...(job.stalledBefore !== defaults.stalledBefore ? [`--stalled-before ${job.stalledBefore}`] : []),
  ];
  if (kind === 'atomic') return ['emq-race explain --mode', mode, ...flags].join(' ');
  if (kind !== 'loop') return null;
  const schedule = loopSchedule(trace);
  return schedule === undefined ? null : ['emq-race explain --mode', mode, ...flags, '--schedule', schedule].join(' ');
}

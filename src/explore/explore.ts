/**
 * Every interleaving of two sweeps of one mode on one job, run on the server: each execution on a
 * fresh queue of its own, claimed, seeded and cleaned up like explain's replays (explain/stage.ts),
 * the next execution chosen depth first from the turns where both sweeps waited (search.ts). Each
 * outcome is read back from the server and judged by the audit's rules (outcome.ts), and set beside
 * what the model (model.ts) predicts for the same choices. A signal stops the search after the
 * execution in hand: what was explored is returned, marked incomplete.
 */
import type { Interrupts } from '../interrupt.js';
import { SWEEP_STALLED_LUA, loadScript } from '../lua/registry.js';
import type { Mode } from '../model.js';
import type { SweepName } from '../explain/schedule.js';
import { onStage } from '../explain/stage.js';
import type { Session } from '../server/session.js';
import { deleteSweepFunction, loadSweepFunction } from '../sweepers/function-library.js';
import type { TraceTurn } from './conductor.js';
import { modelRun } from './model.js';
import { auditJob, outcomeClass, type JobFacts } from './outcome.js';
import { formatTrace, schedulesOf, search, switchesOf, turnsPerSweep } from './search.js';
import { runTurned } from './turned-run.js';
import { explainLine } from './witness.js';

export interface ExplorePlan {
  readonly mode: Mode;
  /** Each execution's queue is this name and its number. */
  readonly queue: string;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  /** The explain flags' defaults: a witness's line names only the flags that differ. */
  readonly defaults: { readonly maxStalled: number; readonly stalledBefore: number };
}

export interface Execution {
  readonly trace: readonly TraceTurn[];
  readonly facts: JobFacts;
  readonly moves: number;
  /** The class the audit gives the server's outcome. */
  readonly outcome: string;
  /** The class the audit gives the model's outcome for the same choices. */
  readonly predicted: string;
  /** The model took the same commands in the same order. */
  readonly sameTurns: boolean;
  readonly schedules: number;
  readonly switches: number;
}

export interface Witness {
  readonly outcome: string;
  readonly switches: number;
  /** The execution's round trips, as SWEEP:command. */
  readonly schedule: string;
  /** The explain line that replays it, or null where explain cannot. */
  readonly command: string | null;
}

export interface Exploration {
  readonly mode: Mode;
  readonly complete: boolean;
  readonly schedules: number;
  readonly executions: Execution[];
  /** Schedules per outcome class, in the order the classes were first met. */
  readonly outcomes: Record<string, number>;
  readonly witnesses: Witness[];
  /** Each sweep's turns in a schedule: its longest execution's. */
  readonly turns: Record<SweepName, number>;
}

/** The fewest switches; among as few, one explain can replay; then the first in A-before-B order. */
function betterWitness(a: Witness, b: Witness): boolean {
  if (a.switches !== b.switches) return a.switches < b.switches;
  if ((a.command === null) !== (b.command === null)) return a.command !== null;
  return a.schedule < b.schedule;
}

/** Sums the executions into the exploration's counts and picks each class's witness. Pure. */
export function summarize(
  mode: Mode,
  runs: readonly Omit<Execution, 'schedules' | 'switches'>[],
  plan: Pick<ExplorePlan, 'maxStalled' | 'stalledBefore' | 'defaults'>,
  complete: boolean,
): Exploration {
  const turns = turnsPerSweep(runs.map((run) => run.trace));
  const executions = runs.map((run) => ({ ...run, schedules: schedulesOf(run.trace, turns), switches: switchesOf(run.trace) }));
  const outcomes: Record<string, number> = {};
  const best = new Map<string, Witness>();
  for (const execution of executions) {
    outcomes[execution.outcome] = (outcomes[execution.outcome] ?? 0) + execution.schedules;
    const command = explainLine(mode, execution.trace, plan, plan.defaults);
    const held = best.get(execution.outcome);
    const witness = { outcome: execution.outcome, switches: execution.switches, schedule: formatTrace(execution.trace), command };
    if (!held || betterWitness(witness, held)) best.set(execution.outcome, witness);
  }
  return {
    mode,
    complete,
    schedules: executions.reduce((sum, e) => sum + e.schedules, 0),
    executions,
    outcomes,
    witnesses: [...best.values()],
    turns,
  };
}

/** Every execution of two sweeps of `plan.mode` on the server, one fresh queue each. */
export async function exploreMode(session: Session, interrupts: Interrupts, plan: ExplorePlan): Promise<Exploration> {
  const { admin } = session;
  let fresh = 0;
  let functionName: string | undefined;
  let library: { library: string; name: string } | undefined;
  if (plan.mode === 'atomic') await loadScript(admin, SWEEP_STALLED_LUA);
  try {
    if (plan.mode === 'function') {
      library = await loadSweepFunction(admin, plan.queue.replace(/[^A-Za-z0-9_]/g, '_'));
      functionName = library.name;
    }
    const turned = { mode: plan.mode, batch: plan.batch, maxStalled: plan.maxStalled, ...(functionName !== undefined ? { functionName } : {}) };
    const job = { stalledBefore: plan.stalledBefore, maxStalled: plan.maxStalled };
    const { runs, complete } = await search(
      async (prefix) => {
        const queue = `${plan.queue}-${fresh++}`;
        const run = await onStage(session, { queue, stalledBefore: plan.stalledBefore, keep: false }, interrupts, (stage) => runTurned(stage, turned, prefix));
        const model = modelRun(
          plan.mode,
          job,
          run.trace.map((t) => t.sweep),
        );
        const result = {
          facts: run.facts,
          moves: run.moves,
          outcome: outcomeClass(auditJob(run.facts, run.moves, plan.stalledBefore, plan.maxStalled)),
          predicted: outcomeClass(auditJob(model.facts, model.moves, plan.stalledBefore, plan.maxStalled)),
          sameTurns: formatTrace(model.trace) === formatTrace(run.trace),
        };
        return { trace: run.trace, result };
      },
      () => interrupts.signal.aborted,
    );
    return summarize(
      plan.mode,
      runs.map((run) => ({ trace: run.trace, ...run.result })),
      plan,
      complete,
    );
  } finally {
    if (library) await deleteSweepFunction(admin, library);
  }
}

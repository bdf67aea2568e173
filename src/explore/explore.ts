/**
 * Every interleaving of two sweeps of one mode on one job, run on the server: on one queue, claimed
 * and cleaned up like explain's replays, each execution on the job seeded afresh (explain/stage.ts),
 * the next execution chosen depth first from the turns where both sweeps waited (search.ts). Each
 * outcome is read back from the server and judged by the audit's rules (outcome.ts), and set beside
 * what the model (model.ts) predicts for the same choices. A signal stops the search after the
 * execution in hand: what was explored is returned, marked incomplete.
 */
import type { Redis } from 'ioredis';
import type { Interrupts } from '../shared/interrupt.js';
import { SWEEP_STALLED_LUA, loadScript } from '../lua/registry.js';
import { describeServerError } from '../shared/errors.js';
import type { Mode } from '../shared/model.js';
import { onStages } from '../explain/stage.js';
import { connect, serverGoesWithSignal } from '../server/connection.js';
import { overLiveConnection } from '../queue/claimed-run.js';
import type { Session } from '../server/session.js';
import type { SweepFunction } from '../lua/function-source.js';
import { deleteSweepFunction, loadSweepFunction } from '../sweepers/function-library.js';
import { EXPLORE_SWEEPS, preemptionsOf, type TraceTurn } from './conductor.js';
import { modelRun } from './model.js';
import { auditJob, outcomeClass, type JobFacts } from './outcome.js';
import { allSchedules, formatTrace, schedulesOf, search, switchesOf, turnsPerSweep, type Turns } from './search.js';
import { runTurned } from './turned-run.js';
import { explainLine } from './witness.js';

export interface ExplorePlan {
  readonly mode: Mode;
  /** The exploration's queue is this name and `-0`. */
  readonly queue: string;
  readonly batch: number;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  /** The explain flags' defaults: a witness's line names only the flags that differ. */
  readonly defaults: { readonly maxStalled: number; readonly stalledBefore: number };
  /** Sweeps on the job: 2 (A and B) unless given; 3 adds C. */
  readonly sweeps?: number;
  /** Only the executions (and schedules) with at most this many preemptions; every one when unset. */
  readonly maxSwitches?: number;
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
  /** Switches away from a sweep that could have gone on. */
  readonly preemptions: number;
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
  readonly sweeps: number;
  /** The preemption bound, or null when every schedule was explored. */
  readonly maxSwitches: number | null;
  /** The schedules explored: every one, or those within the bound. */
  readonly schedules: number;
  /** Every schedule of the sweeps' turns, bound or not. */
  readonly allSchedules: number;
  readonly executions: Execution[];
  /** Schedules per outcome class, in the order the classes were first met. */
  readonly outcomes: Record<string, number>;
  readonly witnesses: Witness[];
  /** Each sweep's turns in a schedule: its longest execution's (within the bound). */
  readonly turns: Turns;
}

/** The fewest switches; among as few, one explain can replay; then the first in A-before-B order. */
function betterWitness(a: Witness, b: Witness): boolean {
  if (a.switches !== b.switches) return a.switches < b.switches;
  if ((a.command === null) !== (b.command === null)) return a.command !== null;
  return a.schedule < b.schedule;
}

/**
 * One object for each distinct value `key` tells apart, handed back in place of every equal one.
 * An exploration keeps every execution until it sums them (the schedules an execution stands for
 * depend on the longest of all), and its traces repeat a few dozen turns (a sweep, a command, the
 * sweeps that waited) and its jobs a few read-backs: kept once each, an execution is little more
 * than a list of references (docs/explore.md gives a long `--yes` exploration's memory before and
 * after). Pure but for the table it keeps.
 */
export function interner<T>(key: (value: T) => string): (value: T) => T {
  const seen = new Map<string, T>();
  return (value) => {
    const name = key(value);
    const held = seen.get(name);
    if (held !== undefined) return held;
    seen.set(name, value);
    return value;
  };
}

/** What the search found: each execution's trace and its result, read back and judged. */
type Searched = Awaited<ReturnType<typeof search<Omit<Execution, 'trace' | 'schedules' | 'switches' | 'preemptions'>>>>;

/** Sums the executions into the exploration's counts and picks each class's witness. Pure. */
export function summarize(
  mode: Mode,
  runs: readonly Omit<Execution, 'schedules' | 'switches' | 'preemptions'>[],
  plan: Pick<ExplorePlan, 'maxStalled' | 'stalledBefore' | 'defaults' | 'sweeps' | 'maxSwitches'>,
  complete: boolean,
): Exploration {
  const sweeps = plan.sweeps ?? 2;
  const bound = plan.maxSwitches ?? Number.POSITIVE_INFINITY;
  const turns = turnsPerSweep(
    runs.map((run) => run.trace),
    EXPLORE_SWEEPS.slice(0, sweeps),
  );
  const executions = runs.map((run) => ({
    ...run,
    schedules: schedulesOf(run.trace, turns, bound),
    switches: switchesOf(run.trace),
    preemptions: preemptionsOf(run.trace),
  }));
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
    sweeps,
    maxSwitches: plan.maxSwitches ?? null,
    schedules: executions.reduce((sum, e) => sum + e.schedules, 0),
    allSchedules: allSchedules(turns),
    executions,
    outcomes,
    witnesses: [...best.values()],
    turns,
  };
}

/** A mode's exploration that failed after some executions: what they showed, and the failure. */
export class ExploredBeforeFailure extends Error {
  readonly exploration: Exploration;
  readonly failure: unknown;

  constructor(exploration: Exploration, failure: unknown) {
    super(failure instanceof Error ? failure.message : String(failure));
    this.name = 'ExploredBeforeFailure';
    this.exploration = exploration;
    this.failure = failure;
  }
}

/**
 * Every execution of two sweeps of `plan.mode` on the server, each on the job as a fresh queue
 * holds it. A failure after the first execution throws ExploredBeforeFailure, carrying them.
 */
export async function exploreMode(session: Session, interrupts: Interrupts, plan: ExplorePlan): Promise<Exploration> {
  const { admin } = session;
  // Before the queue's claim, whose failures are described for people: a refusal here (a user
  // without SCRIPT LOAD) is the server's line too, not an error of the tool's.
  if (plan.mode === 'atomic')
    await loadScript(admin, SWEEP_STALLED_LUA).catch((err: unknown) => Promise.reject(describeServerError(err, session.target.display)));
  {
    const job = { stalledBefore: plan.stalledBefore, maxStalled: plan.maxStalled };
    const sweeps = plan.sweeps ?? 2;
    const sameTurn = interner<TraceTurn>((turn) => `${turn.sweep} ${turn.label} ${turn.runnable.join('')}`);
    const sameFacts = interner<JobFacts>((facts) => JSON.stringify(facts));
    // One queue for the whole exploration, each execution on the job seeded afresh (explain/stage.ts).
    // A signal ends the search after the execution in hand and the claim, once cleaned up, throws its
    // cause: what was explored is still returned, marked incomplete.
    let explored: Searched | undefined;
    const made: Searched['runs'] = [];
    const summary = ({ runs, complete }: Searched): Exploration =>
      summarize(
        plan.mode,
        runs.map((run) => ({ trace: run.trace, ...run.result })),
        plan,
        complete,
      );
    let searched: Searched;
    try {
      searched = await onStages(session, { queue: `${plan.queue}-0`, stalledBefore: plan.stalledBefore, keep: false }, interrupts, async (stages) => {
        // The stage holds two connections; a third sweep gets one of its own, for the whole exploration.
        const extra: Redis[] = [];
        // The function mode's library is loaded once the queue is claimed, and named from the
        // claim's run id, as a race's is: whatever way the exploration ends (SIGKILL included), the
        // marker left names it, and `clean` removes it with the queue.
        let library: SweepFunction | undefined;
        let settleLibrary: (() => void) | undefined;
        try {
          if (plan.mode === 'function') {
            library = await loadSweepFunction(admin, stages.runId);
            // A third signal leaves at once: it names the library it leaves behind.
            settleLibrary = interrupts.owe(
              `the function library ${library.library} may remain on the server: remove it with FUNCTION DELETE ${library.library}`,
            );
          }
          const turned = { mode: plan.mode, batch: plan.batch, maxStalled: plan.maxStalled, ...(library ? { functionName: library.name } : {}) };
          for (let i = 2; i < sweeps; i++) extra.push(await connect(session.target));
          explored = await search(
            async (prefix) => {
              const run = await stages.next((stage) => runTurned(stage, turned, prefix, [...stage.connections, ...extra]));
              const model = modelRun(
                plan.mode,
                job,
                run.trace.map((t) => t.sweep),
                sweeps,
              );
              const result = {
                facts: sameFacts(run.facts),
                moves: run.moves,
                outcome: outcomeClass(auditJob(run.facts, run.moves, plan.stalledBefore, plan.maxStalled)),
                predicted: outcomeClass(auditJob(model.facts, model.moves, plan.stalledBefore, plan.maxStalled)),
                sameTurns: formatTrace(model.trace) === formatTrace(run.trace),
              };
              return { trace: run.trace.map(sameTurn), result };
            },
            () => interrupts.signal.aborted,
            plan.maxSwitches,
            made,
          );
          return explored;
        } finally {
          for (const redis of extra) redis.disconnect();
          // Not on the tool's own server stopped by a signal: it goes with everything on it.
          const loaded = library;
          if (loaded && !serverGoesWithSignal(session.target, interrupts.signal))
            await overLiveConnection(admin, session.target, (redis) => deleteSweepFunction(redis, loaded));
          settleLibrary?.();
        }
      });
    } catch (err) {
      // Stopped before the search began (the claim, the connections) or during it: what was explored, if anything.
      if (!interrupts.signal.aborted) {
        // A failure (the server gone, say) still hands on what was explored before it.
        if (made.length === 0) throw err;
        throw new ExploredBeforeFailure(summary({ runs: made, complete: false }), err);
      }
      searched = explored ?? { runs: made, complete: false };
    }
    return summary(searched);
  }
}

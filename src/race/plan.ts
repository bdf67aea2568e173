/**
 * Every run of one command: each mode, T times over (trial 1 of every mode, then trial 2, …), each
 * on a fresh queue of its own (or fresh queues, with several per mode), with the same parameters.
 * The steps run one after another, and each step's queues are deleted before the next begins; only
 * the queues of one step (several with --queues) are alive at once.
 */
import { describeServerError, EmqError } from '../shared/errors.js';
import { cleanCommand } from '../queue/owner-claim.js';
import { keptPromotedWords } from '../server/kept-server.js';
import { fewNamed } from '../shared/text.js';
import type { ServerTarget } from '../server/connection.js';
import { serverHasFunctions } from '../sweepers/function-library.js';
import type { Interrupts } from '../shared/interrupt.js';
import { randomQueueName } from '../queue/keys.js';
import { consequencesFor } from '../consequences/plan.js';
import { STRATEGIES, modesNeeding } from '../sweepers/strategies.js';
import { keptUnreported, runMode } from './run-mode.js';
import type { Session } from '../server/session.js';
import { defaultLive, type Mode, type RaceOptions, type ModeRun, type RunResult } from '../shared/model.js';

/** `NAME`, `NAME-mode` with several modes, and `-tK` with several trials. */
export function runQueueName(base: string, mode: Mode, modeCount: number, trial: number, trials: number): string {
  return `${base}${modeCount > 1 ? `-${mode}` : ''}${trials > 1 ? `-t${trial}` : ''}`;
}

/** The function mode where the server has Functions; in a list of modes it is skipped (with a note) where not. */
export async function availableModes(session: Session, modes: readonly Mode[], note: (line: string) => void): Promise<Mode[]> {
  // The probe runs before any run's own error handling: a refusal (an ACL without FUNCTION) is a line, not a stack.
  const hasFunctions = (): Promise<boolean> =>
    serverHasFunctions(session.admin).catch((err: unknown) => {
      throw describeServerError(err, session.target.display);
    });
  const needFunctions = modes.filter((mode) => modesNeeding('functions').includes(mode));
  if (needFunctions.length === 0 || needFunctions.length === modes.length || (await hasFunctions())) return [...modes];
  note(`this server has no Functions (Redis 7+ or Valkey needed): skipping the ${needFunctions.join(', ')} mode`);
  return modes.filter((mode) => !needFunctions.includes(mode));
}

export interface PlanHooks {
  /** Called before each run when there is more than one. */
  readonly progress?: (trial: number, trials: number, mode: Mode) => void;
  /** What the command line changes per mode (its job count, latency stats, progress). */
  readonly adjust?: (mode: Mode) => Partial<ModeRun>;
  /**
   * Runs one mode of one trial on several queues at once (--queues, a cluster), named from `name`;
   * without it the run is the one queue `name` on the session's server.
   */
  readonly spread?: (name: string, runFor: (queue: string) => ModeRun) => Promise<RunResult[]>;
  /** Sees every step before the first one writes anything (the memory guard), and may refuse the plan. */
  readonly beforeWrites?: (steps: readonly PlanStep[]) => Promise<void>;
}

/** One mode of one trial: its queue name (the base of several with --queues) and the run each queue gets. */
export interface PlanStep {
  readonly trial: number;
  readonly mode: Mode;
  readonly name: string;
  readonly runFor: (queue: string) => ModeRun;
}

/** One mode's run as the options describe it, on `jobs` jobs (the live ones are a tenth of those by default). */
function modeRunFor(options: RaceOptions, mode: Mode, queue: string, trial: number, userScript: string | undefined, jobs = options.jobs): ModeRun {
  return {
    mode,
    queue,
    jobs,
    sweepers: options.sweepers,
    batch: options.batch,
    maxStalled: options.maxStalled,
    stalledBefore: options.stalledBefore,
    probeDelayMs: options.probeDelayMs,
    keep: options.keep,
    pending: options.pending ?? 'list',
    live: options.live ?? defaultLive(jobs),
    ...(options.maxSweeps !== undefined ? { maxSweeps: options.maxSweeps } : {}),
    cadence: { intervalMs: options.intervalMs ?? 0, jitterMs: options.jitterMs ?? 0 },
    processes: options.processes ?? false,
    ...(userScript !== undefined ? { userScript } : {}),
    trial,
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.consequences ? { consequences: consequencesFor(options.consequences, mode, STRATEGIES[mode].faultsThatMiss ?? {}) } : {}),
  };
}

/** Every step of the command, in the order they run. */
export function planSteps(options: RaceOptions, modes: readonly Mode[], userScript: string | undefined, adjust: PlanHooks['adjust'], base: string): PlanStep[] {
  const trials = options.trials ?? 1;
  const steps: PlanStep[] = [];
  for (let trial = 1; trial <= trials; trial++) {
    for (const mode of modes) {
      const adjusted = adjust?.(mode) ?? {};
      const runFor = (queue: string): ModeRun => ({ ...modeRunFor(options, mode, queue, trial, userScript, adjusted.jobs), ...adjusted });
      steps.push({ trial, mode, name: runQueueName(base, mode, modes.length, trial, trials), runFor });
    }
  }
  return steps;
}

/**
 * What the runs that went well before a command was stopped (a signal, an error) kept with --keep,
 * in words for its one error line: their queues on a server that outlives the command (not the
 * tool's own, which goes with it or is named on its own), and every promoted replica a failover
 * drill left running, with how to stop it. Empty when they kept nothing. Pure.
 */
export function keptBefore(target: Pick<ServerTarget, 'own'>, runs: readonly Pick<RunResult, 'queue' | 'failover'>[]): string {
  // A drill's keys are on its promoted replica, not on the command's server.
  const queues = target.own === undefined ? runs.filter((run) => !run.failover).map((run) => run.queue) : [];
  const replicas = runs.flatMap((run) => (run.failover?.keptServer ? [keptPromotedWords(run.queue, run.failover.keptServer)] : []));
  const parts: string[] = [];
  if (queues.length === 1) parts.push(`queue ${queues[0]} (emq:{${queues[0]}}:*): remove it with ${cleanCommand(`--queue ${queues[0]}`)}`);
  else if (queues.length > 1) parts.push(`queues ${fewNamed(queues)}: remove them with ${cleanCommand('--all')}`);
  parts.push(...replicas);
  return parts.length === 0 ? '' : `the runs that finished before it kept (--keep) ${parts.join('; ')}`;
}

export async function runPlan(
  session: Session,
  options: RaceOptions,
  modes: readonly Mode[],
  userScript: string | undefined,
  interrupts: Interrupts,
  hooks: PlanHooks = {},
): Promise<RunResult[]> {
  const steps = planSteps(options, modes, userScript, hooks.adjust, options.queue ?? randomQueueName());
  await hooks.beforeWrites?.(steps);
  const runs: RunResult[] = [];
  // What --keep kept of the runs that went well stays when a later one is stopped: named on the
  // command's one error line, and on a third signal's way out.
  let settleKept = (): void => undefined;
  try {
    for (const step of steps) {
      if (steps.length > 1) hooks.progress?.(step.trial, options.trials ?? 1, step.mode);
      if (hooks.spread) runs.push(...(await hooks.spread(step.name, step.runFor)));
      else runs.push(await runMode(session, step.runFor(step.name), interrupts));
      const kept = options.keep ? keptBefore(session.target, runs) : '';
      settleKept();
      if (kept) settleKept = interrupts.owe(kept);
    }
  } catch (err) {
    // With the run that a companion stopped after it left unreported (--wait-replicas).
    const kept = options.keep ? keptBefore(session.target, [...runs, ...keptUnreported(err)]) : '';
    if (kept && err instanceof EmqError) err.leaveBehind(kept);
    throw err;
  } finally {
    settleKept();
  }
  return runs;
}

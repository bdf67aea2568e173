/**
 * One race on an open session, every mode and trial of it, made into a report: what the main
 * command prints, and what `emq-race grid` runs once per cell.
 */
import { usageError } from '../shared/errors.js';
import { underEvictionWatch } from '../server/eviction-watch.js';
import { orStopped, underHelper, type Interrupts } from '../shared/interrupt.js';
import { jobsForMode } from './options.js';
import { keepsSessionServer, type MainFlags } from './race-flags.js';
import type { RaceReport } from '../report/json.js';
import { judge } from '../report/verdict.js';
import { errorWidth } from '../shared/text.js';
import { clusterTopology } from '../server/cluster/cluster-session.js';
import type { Topology } from '../server/cluster/topology.js';
import { checkPlanBeforeWrites, nodeName, runQueues } from '../race/queues.js';
import { availableModes, planSteps, runPlan } from '../race/plan.js';
import { randomQueueName } from '../queue/keys.js';
import { progressBoard } from '../race/progress.js';
import { totalsPerMode } from '../report/totals.js';
import type { Session } from '../server/session.js';
import { summarizeTrials } from '../audit/trials.js';
import { loadUserScript } from '../sweepers/user-script.js';
import { STRATEGIES } from '../sweepers/strategies.js';
import { findLibrary } from '../libraries/resolve.js';
import { startRaceProxy, type RaceProxy } from '../server/latency-proxy.js';
import { LIMITS, type JobsFlag, type Mode, type RaceOptions, type ModeRun, type RunResult, type Io } from '../shared/model.js';

/** What the command line sets in each mode's run besides the race options: the round-trip modes' jobs (--loop-jobs) and the server's latency figures. */
function commandLineRun(session: Session, options: RaceOptions, flags: MainFlags, varied?: ReadonlySet<string>): (mode: Mode) => Partial<ModeRun> {
  // The user's library, found where --lib-from says (main has already refused a missing one).
  const library = options.library ? findLibrary(options.library.name, options.library.from, options.library.asked) : undefined;
  const loopJobs = flags.loopJobs ?? LIMITS.loopJobs.default;
  return (mode) => {
    const jobs = jobsForMode(mode, options.jobs, loopJobs);
    // What a refusal of the run's size names: --loop-jobs where it set a round-trip mode's jobs,
    // being fewer than --jobs, or as many and given.
    const byLoopJobs = STRATEGIES[mode].roundTrips && (loopJobs < options.jobs || (flags.loopJobs !== undefined && loopJobs === options.jobs));
    // In a grid, an axis sets the flag: no flag to give beside it, so the refusal names the axis.
    const flag = byLoopJobs ? 'loop-jobs' : 'jobs';
    const axis = varied?.has(flag) ?? false;
    const jobsFlag: JobsFlag | undefined = axis || byLoopJobs ? { flag, axis } : undefined;
    return {
      ...(library && STRATEGIES[mode].library === library.name ? { library } : {}),
      jobs,
      ...(jobsFlag !== undefined ? { jobsFlag } : {}),
      // On the tool's own server (or cluster) the figure is a bonus; asked for, it must work.
      serverStats: flags.serverStats ? 'required' : session.embedded !== undefined ? 'if-available' : undefined,
    };
  };
}

/** Whether a race runs its queues side by side, one per --queues or per cluster primary, rather than one queue per step. */
function spreadsQueues(topology: Topology | undefined, flags: MainFlags): boolean {
  return topology !== undefined || flags.queues > 1;
}

/** A cluster sends its clients on to every node, past a proxy that stands for one server: --latency is a usage error there. */
function refuseLatencyOnCluster(session: Session, topology: Topology | undefined, options: RaceOptions): void {
  if (topology && options.library) {
    throw usageError(
      `${options.library.asked}: the server at ${session.target.display} is a cluster node; a library run connects the library's clients to one server, and on a cluster the tool spreads its queues over every primary`,
    );
  }
  if (topology && options.latency) {
    throw usageError(
      `--latency: the server at ${session.target.display} is a cluster node; the latency proxy stands for one server, and a cluster sends its clients on to every node`,
    );
  }
}

/** One cell of a grid: its race options and the flags they were read from. */
export interface CellSettings {
  readonly options: RaceOptions;
  readonly flags: MainFlags;
  /** The grid's axes (flags without their dashes): a refusal names `--vary jobs` where an axis set the jobs. */
  readonly varied?: ReadonlySet<string>;
}

/**
 * What a grid checks once, before its first cell writes, that a single race checks before its own
 * writes: the user's script compiles, --latency is not asked of a cluster, and every cell fits
 * below the server's maxmemory (the dearest cell refuses the whole grid: exit 2, nothing written,
 * rather than a grid stopped halfway). Each cell's race checks again before its writes, as the
 * server's room may shrink while the grid runs.
 */
export async function checkGridCells(
  session: Session,
  cells: readonly CellSettings[],
  userScript: string | undefined,
  interrupts: Pick<Interrupts, 'signal' | 'owe'>,
): Promise<void> {
  const { signal } = interrupts;
  const first = cells[0];
  if (!first) return;
  if (userScript !== undefined && first.options.script !== undefined)
    await loadUserScript(session.admin, userScript, first.options.script, session.target.display);
  // A server that stops answering here holds the one bounded wait: a signal ends it at once.
  const topology = await orStopped(signal, clusterTopology(session, first.flags.cluster));
  for (const cell of cells) refuseLatencyOnCluster(session, topology, cell.options);
  // Each cell's race says which modes it skips and why; here a skipped mode simply weighs nothing.
  const modes = await availableModes(session, first.options.modes, () => {});
  const plans = cells.map(({ options, flags, varied }) => ({
    queues: spreadsQueues(topology, flags) ? flags.queues : 1,
    steps: planSteps(options, modes, userScript, commandLineRun(session, options, flags, varied), randomQueueName()),
  }));
  await checkPlanBeforeWrites(session, topology, plans, interrupts);
}

/** Every mode's run on the session's server, and the report they make. */
export async function raceReport(
  session: Session,
  options: RaceOptions,
  flags: MainFlags,
  userScript: string | undefined,
  interrupts: Interrupts,
  io: Io,
  show: { readonly progress: boolean } = { progress: true },
): Promise<{ report: RaceReport; runs: RunResult[] }> {
  // Compiled by the server before anything is seeded: a script that does not compile writes nothing.
  if (userScript !== undefined && options.script !== undefined) await loadUserScript(session.admin, userScript, options.script, session.target.display);
  const modes = await availableModes(session, options.modes, (line) => io.err(`emq-race: ${line}\n`));
  const trials = options.trials ?? 1;
  // On a terminal with --trials a line says which trial runs, and once the trial has run a second
  // the progress line follows that trial's name; a CI log gets the plain progress lines alone.
  // The grid keeps a progress line of its own: its cells' races run without theirs.
  let trialLabel = '';
  const board = show.progress
    ? progressBoard(io.err, {
        terminal: Boolean(io.stderrIsTty),
        width: () => errorWidth(io),
        ...(io.stderrIsTty && options.trials !== undefined ? { label: () => trialLabel } : {}),
      })
    : undefined;
  const perMode = commandLineRun(session, options, flags);
  const adjust = (mode: Mode): Partial<ModeRun> => ({
    ...perMode(mode),
    ...(board ? { progress: board } : {}),
    warn: (line: string) => io.err(`emq-race: ${line}\n`),
  });
  // A server that stops answering here holds the one bounded wait: a signal ends it at once.
  const topology = await orStopped(interrupts.signal, clusterTopology(session, flags.cluster));
  refuseLatencyOnCluster(session, topology, options);
  const perQueue = spreadsQueues(topology, flags);
  const progress = show.progress && io.stderrIsTty && !options.csv;
  // Any eviction on a server the run uses stops the run as a Ctrl-C would, with its own error; so
  // does the death of a helper the run relies on: the embedded server or its keeper (the tool has
  // then stopped the server itself), or the latency proxy's thread.
  // A failover drill's queue lives on a pair of its own, not on the session's server: servers of the
  // tool's own, which run without maxmemory and so never evict. Nothing of the run's is left to
  // watch, and the session's server, which holds none of its keys, is not watched in its stead.
  const watched = options.consequences?.failover ? [] : topology ? topology.primaries.map((node) => topology.targetOf(node)) : [session.target];
  // The race's own connections go through the proxy; seeding, audit and cleanup stay direct.
  let proxy: RaceProxy | undefined;
  const planned = await underHelper(session.embedded?.ended, interrupts, (kept) =>
    underEvictionWatch(watched, kept, async (watching) => {
      proxy = options.latency ? await startRaceProxy(session.target, options.latency, watching.signal) : undefined;
      try {
        const raced: Session = proxy ? { ...session, raceTarget: proxy.target } : session;
        const lost = proxy?.lost;
        return await underHelper(lost, watching, (runInterrupts) =>
          runPlan(raced, options, modes, userScript, runInterrupts, {
            adjust,
            ...(progress
              ? {
                  progress: (trial: number, of: number, mode: Mode) => {
                    trialLabel = `trial ${trial}/${of}, `;
                    io.err(`\r\x1b[Kemq-race: ${options.trials !== undefined ? trialLabel : ''}${mode}…`);
                  },
                }
              : {}),
            // A trial of several queues runs them all side by side; the next trial starts on fresh ones.
            ...(perQueue
              ? { spread: (name: string, runFor: (queue: string) => ModeRun) => runQueues(raced, topology, name, flags.queues, runFor, runInterrupts) }
              : {}),
            // Every step is checked against maxmemory before the first one writes.
            beforeWrites: (steps) => checkPlanBeforeWrites(session, topology, [{ queues: perQueue ? flags.queues : 1, steps }], runInterrupts),
          }),
        );
      } finally {
        await proxy?.close();
      }
    }),
  );
  if (progress && trials * modes.length > 1) io.err('\r\x1b[K');
  // A failover drill's queue lived on its own pair, not on the session's server: no node to name
  // (its promoted replica, when kept, is failover.keptServer).
  const runs: RunResult[] = perQueue ? planned : planned.map((run) => (run.failover ? run : { ...run, node: nodeName(session.target.url) }));
  interrupts.signal.throwIfAborted();
  const totals = perQueue ? totalsPerMode(runs) : undefined;
  const report: RaceReport = {
    server: { ...session.info, url: session.target.display },
    // The report is read once the run is over: by then the tool's own server is gone (unless kept).
    ...(session.embedded ? { embedded: keepsSessionServer(options) ? 'kept' : 'stopped' } : {}),
    ...(proxy ? { latency: proxy.latency } : {}),
    runs,
    ...(totals ? { totals } : {}),
    ...(topology ? { primaries: topology.primaries } : {}),
    // With several queues a trial is judged by its summed row: one count per trial, not per queue.
    ...(options.trials !== undefined ? { trials: summarizeTrials(totals ?? runs) } : {}),
    ...(options.expect ? { verdict: judge(options.expect, runs, options.modes) } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  };
  return { report, runs };
}

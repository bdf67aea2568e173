/**
 * `emq-race explore`: every interleaving of two sweeps' round trips on one job, for each mode, run
 * on the server and judged by the audit; the flags, the session and the output. The exploration
 * itself lives in explore/.
 */
import { Option, type Command } from 'commander';
import { EmqError, ExitCode, usageError } from '../shared/errors.js';
import { randomQueueName } from '../queue/keys.js';
import { intFlag, refuseEmptyMode, urlOnce } from './options.js';
import { commandLine } from '../html/command-line.js';
import { outputFileFlag, writeOrLost } from '../html/output-file.js';
import type { ServerChoice } from '../server/session.js';
import { addTlsOptions, type TlsFlags } from '../server/tls.js';
import { scrubUrlText, serverHeadline } from '../server/connection.js';
import { groupThousands, outputWidth, plural, shownChoice, wrapLines } from '../shared/text.js';
import { type Io, LIMITS, type Mode } from '../shared/model.js';
import { modeSets, modes as allModes } from '../sweepers/strategies.js';
import { modelledModes, plannedExploration } from '../explore/model.js';

const SWEEPS = { min: 2, max: 3, default: 2 };
const MAX_SWITCHES = { min: 0, max: 1_000, default: 0 };
/** Above this many schedules an exploration runs only with --yes: minutes of the server's time. */
const MAX_SCHEDULES_WITHOUT_YES = 100_000;

/**
 * The flags that decide how much explore will run, checked before any server is touched: three
 * sweeps need a bound (every order of three is tens of millions), and a bound (or a job) that
 * makes more than 100,000 schedules needs --yes. The model, searched as the server will be, says
 * how many there are.
 */
async function checkPlan(flags: ExploreFlags): Promise<void> {
  if (flags.sweeps === 3 && flags.maxSwitches === undefined) {
    throw usageError('--sweeps 3: every order of three sweeps is tens of millions of schedules; bound them with --max-switches K (2 or 3 run in a minute)');
  }
  if (flags.yes) return;
  const modes = flags.mode ?? explorable();
  let schedules: number | null = 0;
  for (const mode of modes) {
    // Counting stops past the limit: a large bound has millions of executions to list.
    const planned = await plannedExploration(mode, flags, flags.sweeps, flags.maxSwitches, MAX_SCHEDULES_WITHOUT_YES - schedules);
    if (planned.schedules === null) {
      schedules = null;
      break;
    }
    schedules += planned.schedules;
  }
  if (schedules === null || schedules > MAX_SCHEDULES_WITHOUT_YES) {
    const bound = flags.maxSwitches === undefined ? '' : ` with at most ${plural(flags.maxSwitches, 'preemption')}`;
    const count = schedules === null ? `more than ${groupThousands(MAX_SCHEDULES_WITHOUT_YES)}` : groupThousands(schedules);
    throw usageError(
      `explore: ${count} schedules of ${flags.sweeps} sweeps${bound} (${modes.join(', ')}); over ${groupThousands(MAX_SCHEDULES_WITHOUT_YES)} runs only with --yes`,
    );
  }
}

interface ExploreFlags extends TlsFlags {
  mode?: Mode[];
  sweeps: number;
  maxSwitches?: number;
  yes?: boolean;
  html?: string;
  maxStalled: number;
  stalledBefore: number;
  url?: string;
  serverBin?: string;
  json: boolean;
}

/** The modes explore can run: those it holds a model of, in the strategy table's order. */
function explorable(): Mode[] {
  return modelledModes(allModes());
}

/** A comma list of modes explore can run (`all` for every one). */
export function parseExploreModes(raw: string): Mode[] {
  const modes: Mode[] = [];
  for (const part of raw.split(',').flatMap((p) => (p.trim() === 'all' ? explorable() : [p.trim()]))) {
    refuseEmptyMode(raw, part);
    if (!(explorable() as readonly string[]).includes(part)) {
      const known = (allModes() as readonly string[]).includes(part) || Object.keys(modeSets()).includes(part);
      throw usageError(
        // A known mode is repeated; any other word only as shownChoice allows (it may be a password).
        `--mode: ${known ? JSON.stringify(part) : shownChoice(part, [...explorable(), 'all'])} is ${known ? 'a mode explore cannot run' : 'not a mode'}; explore runs ${explorable().join(', ')}, or all`,
      );
    }
    if (!modes.includes(part as Mode)) modes.push(part as Mode);
  }
  return modes;
}

export function addExploreCommand(program: Command, io: Io, exit: { code: number }): void {
  program.enablePositionalOptions();
  const explore = program
    .command('explore')
    // A stray word (a URL without --url) is an error, never a run on another server than meant.
    .allowExcessArguments(false)
    .description(
      "Run every order of two sweeps' round trips on one job, seeded afresh for each order, and judge each outcome from the server: how many orders break each mode, and the fewest switches that do.",
    )
    .addOption(new Option('--mode <modes>', `a comma list of ${explorable().join(', ')} (default: all)`).argParser(parseExploreModes))
    .addOption(new Option('--sweeps <n>', 'sweeps on the job: 2, or 3 with --max-switches').default(2).argParser(intFlag('--sweeps', SWEEPS)))
    .addOption(
      new Option(
        '--max-switches <k>',
        'only the schedules with at most K preemptions (changes of sweep while the one that had the turn could go on)',
      ).argParser(intFlag('--max-switches', MAX_SWITCHES)),
    )
    .addOption(new Option('--yes', `explore more than ${groupThousands(MAX_SCHEDULES_WITHOUT_YES)} schedules`))
    .addOption(
      new Option('--max-stalled <n>', 'stall count at which the job goes to dead')
        .default(LIMITS.maxStalled.default)
        .argParser(intFlag('--max-stalled', LIMITS.maxStalled)),
    )
    .addOption(
      new Option('--stalled-before <n>', 'stall count the job starts with (below --max-stalled)')
        .default(LIMITS.stalledBefore.default)
        .argParser(intFlag('--stalled-before', LIMITS.stalledBefore)),
    )
    .addOption(new Option('--url <url>', 'server URL (default: $REDIS_URL, else an embedded server)').argParser(urlOnce))
    .addOption(new Option('--server-bin <path>', 'redis-server, valkey-server or redict-server binary for the embedded server'))
    .addOption(new Option('--json', 'print one JSON object on stdout and nothing else').default(false))
    .addOption(
      new Option('--html <file>', 'also write a self-contained web page: each outcome matrix, each witness as a sequence diagram').argParser(
        outputFileFlag('--html'),
      ),
    );
  addTlsOptions(explore);
  explore.action(async (flags: ExploreFlags) => {
    exit.code = await exploreMain(flags, io);
  });
}

/** The command line that runs this exploration again (the URL's password redacted), for the page. */
function exploreCommandLine(flags: ExploreFlags): string {
  return commandLine(
    ['explore'],
    [
      ['--mode', flags.mode],
      ['--sweeps', flags.sweeps === SWEEPS.default ? undefined : flags.sweeps],
      ['--max-switches', flags.maxSwitches],
      ['--yes', flags.yes],
      ['--max-stalled', flags.maxStalled === LIMITS.maxStalled.default ? undefined : flags.maxStalled],
      ['--stalled-before', flags.stalledBefore === LIMITS.stalledBefore.default ? undefined : flags.stalledBefore],
      ['--url', flags.url],
      ['--json', flags.json],
      ['--html', flags.html],
    ],
  );
}

async function exploreMain(flags: ExploreFlags, io: Io): Promise<number> {
  const { chooseTarget, openSession, serverNews, withSession } = await import('../server/session.js');
  const { jsonHeader } = await import('../report/json-header.js');
  const { guardedReplays } = await import('../explain/guard.js');
  const { refuseClusterNode } = await import('../server/cluster/topology.js');
  const { orStopped } = await import('../shared/interrupt.js');
  const { ExploredBeforeFailure, exploreMode, summarize } = await import('../explore/explore.js');
  const { BOUND_LEGEND, EXPLORE_LEGEND, explorationJson, renderExploration } = await import('../explore/render.js');
  const { serverHasFunctions } = await import('../sweepers/function-library.js');
  const { stopCause } = await import('../shared/interrupt.js');
  if (flags.stalledBefore >= flags.maxStalled) {
    throw usageError(`--stalled-before: ${flags.stalledBefore} must be below --max-stalled (${flags.maxStalled})`);
  }
  await checkPlan(flags);
  const choice: ServerChoice = {
    ...(flags.url !== undefined ? { url: flags.url } : {}),
    ...(flags.serverBin !== undefined ? { serverBin: flags.serverBin } : {}),
    tls: flags,
  };
  chooseTarget(choice, io.env);
  type Exploration = Awaited<ReturnType<typeof exploreMode>>;
  type ExploreReportJson = import('../explore/render.js').ExploreReportJson;

  return withSession(
    (signal) => openSession(choice, io.env, signal),
    io,
    false,
    async (session, interrupts) => {
      await orStopped(interrupts.signal, refuseClusterNode(session.admin, session.target.display, 'explore'));
      // By default every mode explore can run that this server can: the function mode needs
      // Functions, and an ACL user refused FUNCTION is left without it too.
      const functions = flags.mode === undefined && (await serverHasFunctions(session.admin).catch(() => false));
      const modes = flags.mode ?? explorable().filter((mode) => mode !== 'function' || functions);
      const base = randomQueueName();
      const queued = modes.map((mode) => ({ mode, queue: `${base}-${mode}` }));
      const done: Exploration[] = [];
      // Modes whose exploration began: those after them were never started.
      let begun = 0;
      let failure: unknown;
      try {
        await guardedReplays(
          session,
          queued.map((q) => ({ mode: q.mode, queue: `${q.queue}-0` })),
          flags,
          interrupts,
          async (guarded) => {
            for (const { mode, queue } of queued) {
              begun++;
              const plan = {
                mode,
                queue,
                batch: LIMITS.batch.default,
                maxStalled: flags.maxStalled,
                stalledBefore: flags.stalledBefore,
                sweeps: flags.sweeps,
                ...(flags.maxSwitches !== undefined ? { maxSwitches: flags.maxSwitches } : {}),
                defaults: { maxStalled: LIMITS.maxStalled.default, stalledBefore: LIMITS.stalledBefore.default },
              };
              const exploration = await exploreMode(session, guarded, plan).catch((err: unknown) => {
                // What the failed mode explored is reported with the rest; the failure ends the command.
                if (err instanceof ExploredBeforeFailure) {
                  done.push(err.exploration);
                  throw err.failure;
                }
                // A mode that failed before its first execution (its script refused, its claim) is
                // still the one under way, reported with none, once a mode before it was: neither
                // explored nor "not started". A failure in the first mode is the error line alone.
                if (done.length > 0) done.push(summarize(mode, [], plan, false));
                throw err;
              });
              done.push(exploration);
              if (!exploration.complete) break;
            }
            guarded.signal.throwIfAborted();
          },
        );
      } catch (err) {
        if (done.length === 0) throw err;
        // The report names what stopped it as the command's last line will: the tool's own server's
        // death, not the lost connection it caused (serverNews).
        failure = stopCause(interrupts.signal) ?? (await serverNews(session, err));
      }
      const complete = failure === undefined && done.every((e) => e.complete);
      const server = { kind: session.info.kind, version: session.info.version, url: session.target.display };
      const stopped =
        failure === undefined
          ? undefined
          : failure instanceof EmqError
            ? { exit: failure.exitCode, message: scrubUrlText(failure.message) }
            : { exit: ExitCode.server, message: 'unexpected error (a bug; please report it)' };
      const report: ExploreReportJson = {
        kind: 'explore',
        complete,
        server,
        maxStalled: flags.maxStalled,
        stalledBefore: flags.stalledBefore,
        sweeps: flags.sweeps,
        maxSwitches: flags.maxSwitches ?? null,
        modes: done.map(explorationJson),
        ...(stopped ? { stopped, notStarted: modes.slice(begun) } : {}),
      };
      if (flags.json) {
        io.out(`${JSON.stringify({ ...jsonHeader(), ...report })}\n`);
      } else {
        const width = outputWidth(io);
        const headline = wrapLines(serverHeadline(server, session.embedded ? 'stopped' : undefined), width);
        const legend = wrapLines(flags.maxSwitches === undefined ? EXPLORE_LEGEND : `${EXPLORE_LEGEND} ${BOUND_LEGEND}`, width);
        const tables = done.map((exploration) => renderExploration(exploration, width));
        const unstarted = report.notStarted?.length ? `; not started: ${report.notStarted.join(', ')}` : '';
        const incomplete = complete ? [] : [wrapLines(`incomplete: stopped before every order was run${unstarted}`, width).trimEnd()];
        io.out(`${[headline, ...tables, legend.trimEnd(), ...incomplete].join('\n\n')}\n`);
      }
      let pageLost: string | undefined;
      const html = flags.html;
      if (html !== undefined) {
        const { writeExplorePage } = await import('../html/report-files.js');
        pageLost = writeOrLost('--html', () => writeExplorePage(html, { ...jsonHeader(), ...report }, exploreCommandLine(flags), io, flags.json));
      }
      if (pageLost !== undefined) io.err(`emq-race: ${pageLost}\n`);
      if (failure !== undefined) throw failure;
      return pageLost === undefined ? ExitCode.ok : ExitCode.outputLost;
    },
  );
}

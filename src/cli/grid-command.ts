/**
 * `emq-race grid`: the race over a grid of settings. `--vary FLAG=LIST` names an axis (any numeric
 * race flag, checked by that flag's own parser); every cell is a full, audited race on fresh queues
 * with the other race flags as given, and the grid prints a table per mode, or its JSON, and writes
 * a page of charts. Every cell's options are checked before the server is touched; a stop (Ctrl-C,
 * a failure) still prints what the finished cells found, marked incomplete.
 */
import { Option, type Command } from 'commander';
import { performance } from 'node:perf_hooks';
import { EmqError, ExitCode, usageError } from '../shared/errors.js';
import type { GridJson } from '../grid/json.js';
import { cellCount, gridCells, MAX_CELLS_WITHOUT_YES, type CellAt, type GridAxis } from '../grid/plan.js';
import { outputFileFlag, writeOrLost } from '../html/output-file.js';
import { libraryAsked, refusing } from './options.js';
import { addHelpNote } from './help.js';
import { addTlsOptions } from '../server/tls.js';
import { raceFlagOptions, raceOptionsFrom, type MainFlags } from './race-flags.js';
import type { CellSettings } from './race-report.js';
import { redactArgs, scrubUrlText, serverHeadline } from '../server/connection.js';
import type { ServerChoice } from '../server/session.js';
import { modesNeeding } from '../sweepers/strategies.js';
import { outputWidth, shownChoice, shownValue, wrapLines } from '../shared/text.js';
import { LIMITS, type Io } from '../shared/model.js';

/**
 * Race flags a grid does not take, each with why: every cell keeps nothing and names its own fresh
 * queues, the grid has its own table, JSON and page, and a verdict over a grid is not a single
 * run's verdict; a seeded run, its shrinking and its exported test are a single run's. Each is
 * refused in one line rather than by commander's "unknown option".
 */
const REFUSED_IN_GRID: readonly [flags: string, why: string][] = [
  ['--keep', 'every cell removes its own queues'],
  ['--queue <name>', 'every cell names fresh queues of its own'],
  ['--csv', 'a grid prints its own table, --json or --html'],
  ['--wide', 'a grid prints its own table'],
  ['--expect <terms>', "a verdict is a single run's: run the cell you want to hold to it with --expect"],
  ['--seed <n>', "a seeded run is a single run's: run the cell you want with --seed"],
  ['--shrink', 'it shrinks a single seeded run'],
  ['--export-test <file>', 'it exports a single seeded run'],
];

/** The race's options a grid leaves out: those it refuses, and --html, whose place the grid's own takes. */
const NOT_IN_GRID = new Set([...REFUSED_IN_GRID.map(([flags]) => flags.split(' ')[0]), '--html']);

/** Race flags an axis may vary: the numeric ones (a run's count, size, pause or latency). */
const VARIABLE_FLAGS = [
  'sweepers',
  'jobs',
  'batch',
  'max-stalled',
  'stalled-before',
  'probe-delay',
  'loop-jobs',
  'queues',
  'workers',
  'cycles',
  'max-sweeps',
  'live',
  'interval',
  'jitter',
  'latency',
  'latency-jitter',
  'failover-after',
  'failover-calls',
  'replica-lag',
] as const;

/**
 * The grid without --vary: sweepers against latency, where the loop's race and the atomic
 * script's lead both show. About a minute on a 2-core machine (docs/grid.md has the figures).
 */
const DEFAULT_AXES: readonly GridAxis[] = [
  { flag: 'sweepers', values: [1, 2, 4, 8] },
  { flag: 'latency', values: [0, 1, 5] },
];

/**
 * Jobs per run and per call in a grid, unless --jobs and --batch say otherwise: 80 calls of 1,000,
 * ten for each of 8 sweepers, so a cell's rate is the calls' pace and not the first and last
 * call's (at 1,000 jobs in calls of 100, some of 8 sweepers made 3 calls where others made 1; at
 * 40,000, five calls each, the start and the end of the race still weighed enough that a cell at
 * 1 ms with 8 sweepers reached 0.79 to 0.89 of its bound, against 0.88 to 0.93 at 80,000). The
 * larger call is for the bound (docs/grid.md, "What the bound leaves out"): the tool's own work per
 * call (reading the reply, forwarding it through the proxy) then weighs a tenth of what it did at
 * 100, so a cell at 1 ms with 8 sweepers is held by the server's thread and the round trip, which
 * the bound counts, rather than by the tool's CPU, which it does not.
 */
const GRID_JOBS = 80_000;
const GRID_BATCH = 1000;
/**
 * A library's own recovery (BullMQ's moveStalledJobsToWait, Bee-Queue's checkStalledJobs) takes
 * every stalled job in one script call, whose cost grows faster than the jobs: at 40,000 BullMQ's
 * held the server past the default busy-reply-threshold of 5 s, so a grid of a library's modes
 * seeds the race's own default unless --jobs says otherwise.
 */
const GRID_LIBRARY_JOBS = LIMITS.jobs.default;
/** The round-trip modes' jobs in a grid, unless --loop-jobs says otherwise: a rate per 1,000 jobs needs no more, and the loop at 10 ms takes 30 s for these. */
const GRID_LOOP_JOBS = 500;

type GridFlags = Omit<MainFlags, 'keep' | 'queue' | 'csv' | 'wide' | 'expect' | 'html' | 'given'> & {
  vary?: string[];
  yes?: boolean;
  html?: string;
};

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * The axes of `--vary` words, each value read by its flag's own parser (so limits and messages are
 * the race's); `given` says which race flags were set on the command line, which an axis may not
 * also set.
 */
function parseAxes(words: readonly string[], options: readonly Option[], given: (flag: string) => boolean): GridAxis[] {
  const axes: GridAxis[] = [];
  const known = VARIABLE_FLAGS.join(', ');
  for (const word of words) {
    const at = word.indexOf('=');
    if (at < 0) throw usageError(`--vary: ${shownChoice(word, VARIABLE_FLAGS)} is not FLAG=LIST; for example --vary sweepers=1,2,8`);
    // As typed, like the values: a name with spaces around it is no flag's name.
    const flag = word.slice(0, at).replace(/^--/, '');
    const list = word.slice(at + 1);
    if (!(VARIABLE_FLAGS as readonly string[]).includes(flag)) {
      const race = options.some((option) => option.long === `--${flag}`);
      const flags = options.flatMap((option) => (option.long ? [option.long.replace(/^--/, '')] : []));
      throw usageError(`--vary: ${shownChoice(flag, flags)} is ${race ? 'not a numeric race flag' : 'not a race flag'}; a grid varies one of ${known}`);
    }
    if (axes.some((axis) => axis.flag === flag)) throw usageError(`--vary: ${flag} is varied twice; give its values in one list`);
    if (given(`--${flag}`)) throw usageError(`--vary: ${flag} is also given as --${flag}; leave one out`);
    const option = options.find((o) => o.long === `--${flag}`);
    if (!option?.parseArg) throw new Error(`no parser for --${flag}`);
    const parse = option.parseArg;
    const raw = list.split(',');
    if (list.trim() === '' || raw.some((item) => item.trim() === ''))
      throw usageError(`--vary ${flag}: an empty value in ${shownValue(list, /^[\s\d,.+-]{0,40}$/.test(list))}; give a comma list such as ${flag}=1,2,8`);
    // Each item as typed: the flag's parser refuses spaces around a value, here as on the flag itself.
    const values = raw.map((item) => parse(item, undefined as unknown) as number);
    const twice = values.find((value, i) => values.indexOf(value) !== i);
    if (twice !== undefined) throw usageError(`--vary ${flag}: ${twice} is listed twice`);
    axes.push({ flag, values });
  }
  return axes;
}

/**
 * A cell's flags: the grid's, with each axis's value in place. The latency axis's 0 is the direct
 * connection; a --latency 0 given to the whole grid goes through the proxy, as on the main command.
 */
function cellFlags(base: MainFlags, axes: readonly GridAxis[], options: readonly Option[], at: CellAt): MainFlags {
  const flags: Record<string, unknown> = { ...base };
  for (const axis of axes) {
    const option = options.find((o) => o.long === `--${axis.flag}`);
    if (!option) throw new Error(`no option --${axis.flag}`);
    flags[option.attributeName()] = at[axis.flag];
  }
  const cell = flags as unknown as MainFlags;
  // latency=0 is the loopback baseline: no proxy at all, unless jitter asks for one.
  const varied = axes.some((axis) => axis.flag === 'latency');
  if (varied && cell.latency === 0 && !cell.latencyJitter) return { ...cell, latency: undefined, latencyJitter: undefined };
  return cell;
}

const GRID_NOTE = `Every cell is a full race (claim, seed, race, audit, clean-up) on fresh queues; cells run one after another. latency=0 is the direct connection, without the proxy. Each value of an axis is read by that flag's own parser. See docs/grid.md.`;

export function addGridCommand(program: Command, io: Io, exit: { code: number }, argv: readonly string[]): void {
  const options = raceFlagOptions().filter((option) => !NOT_IN_GRID.has(option.long ?? ''));
  options.find((option) => option.long === '--jobs')?.default(GRID_JOBS, `${GRID_JOBS}, or ${GRID_LIBRARY_JOBS} for a library's modes`);
  options.find((option) => option.long === '--batch')?.default(GRID_BATCH);
  const loopJobs = options.find((option) => option.long === '--loop-jobs');
  if (loopJobs) {
    // The race's own words name its default of 100,000, which a grid does not have: the grid's
    // default is said once, in commander's own parentheses.
    loopJobs.description = loopJobs.description.replace(/; default \d+, or --jobs if smaller/, '');
    loopJobs.default(GRID_LOOP_JOBS, `${GRID_LOOP_JOBS}, or --jobs if smaller`);
  }
  const grid = program
    .command('grid')
    // A stray word (a URL without --url) is an error, never a run on another server than meant.
    .allowExcessArguments(false)
    .description(
      'Run the race over a grid of settings (--vary FLAG=LIST, for example sweepers against latency) and show how the anomalies and the throughput grow: a table per mode, --json, and --html charts.',
    );
  for (const option of options) grid.addOption(option);
  for (const [flags, why] of REFUSED_IN_GRID) {
    const long = flags.split(' ')[0] as string;
    grid.addOption(refusing(new Option(flags).hideHelp().argParser(() => refuse(long, why))));
    // A flag without a value never reaches a parser: its own event refuses it.
    if (!flags.includes('<')) grid.on(`option:${long.slice(2)}`, () => refuse(long, why));
  }
  grid
    .addOption(
      new Option(
        '--vary <flag=list>',
        `an axis: a numeric race flag and its values, e.g. sweepers=1,2,8 or latency=0,1,10 (repeatable; default ${DEFAULT_AXES.map((a) => `${a.flag}=${a.values.join(',')}`).join(' and ')})`,
      ).argParser(collect),
    )
    .addOption(new Option('--yes', `run a grid of more than ${MAX_CELLS_WITHOUT_YES} cells`))
    .addOption(
      new Option('--html <file>', "also write the grid as one self-contained page of charts, drawn from the grid's JSON it embeds").argParser(
        outputFileFlag('--html'),
      ),
    )
    .action(async (flags: GridFlags) => {
      const given = (flag: string): boolean => grid.getOptionValueSource(flag.replace(/^--/, '').replace(/-(.)/g, (_, c: string) => c.toUpperCase())) === 'cli';
      exit.code = await gridMain(flags, options, given, io, argv);
    });
  // The server's TLS flags, as the race and every other command take them.
  addTlsOptions(grid);
  addHelpNote(grid, GRID_NOTE);
}

/** The jobs every cell seeds, unless an axis varies them: --jobs, else the default for the modes raced. */
function gridJobs(flags: GridFlags, given: (flag: string) => boolean, axes: readonly GridAxis[]): number {
  if (given('--jobs') || axes.some((axis) => axis.flag === 'jobs')) return flags.jobs;
  return libraryAsked({ ...flags, modeGiven: given('--mode') }) ? GRID_LIBRARY_JOBS : flags.jobs;
}

function refuse(flag: string, why: string): never {
  throw usageError(`grid: ${flag} is not taken: ${why} (docs/grid.md)`);
}

async function gridMain(flags: GridFlags, options: readonly Option[], given: (flag: string) => boolean, io: Io, argv: readonly string[]): Promise<number> {
  // The race, the server and the page load when a grid runs, not for the program's --help.
  const { checkGridCells, raceReport } = await import('./race-report.js');
  const { openEmbeddedClusterSession } = await import('../server/cluster/cluster-session.js');
  const { chooseTargetOrCluster, openSession, serverNews, withSession } = await import('../server/session.js');
  const { checkConsequenceOptions } = await import('../consequences/plan.js');
  const { readUserScript } = await import('../sweepers/user-script.js');
  const { proxyTarget } = await import('../server/latency-proxy.js');
  const { writeGridPage } = await import('../html/report-files.js');
  const { runGrid } = await import('../grid/run-grid.js');
  const { gridProgress } = await import('../grid/progress.js');
  const { renderGridTables } = await import('../grid/table.js');
  const { gridJson } = await import('../grid/json.js');
  const { shellQuote } = await import('../html/command-line.js');
  const varied = parseAxes(flags.vary ?? [], options, given);
  const axes = varied.length > 0 ? varied : DEFAULT_AXES.filter((axis) => !given(`--${axis.flag}`));
  if (axes.length === 0) throw usageError('--vary: nothing to vary; the default axes are all given as flags');
  const planned = cellCount(axes);
  if (planned > MAX_CELLS_WITHOUT_YES && !flags.yes) {
    throw usageError(
      `--vary: ${planned} cells (${axes.map((a) => a.values.length).join(' × ')}); a grid over ${MAX_CELLS_WITHOUT_YES} cells runs only with --yes`,
    );
  }
  const base: MainFlags = {
    ...flags,
    jobs: gridJobs(flags, given, axes),
    keep: false,
    csv: false,
    wide: false,
    // The flags given, and every axis varied: a library's run refuses those it would ignore.
    given: [...options.flatMap((option) => (option.long && given(option.long) ? [option.long] : [])), ...axes.map((axis) => `--${axis.flag}`)],
  };
  // Every cell's options, checked before anything starts: a bad combination anywhere writes nothing.
  const cells = gridCells(axes);
  const axisFlags = new Set(axes.map((axis) => axis.flag));
  const cellOptions: CellSettings[] = cells.map((at) => {
    const f = cellFlags(base, axes, options, at);
    return { flags: f, options: raceOptionsFrom(f), varied: axisFlags };
  });
  const first = cellOptions[0];
  if (!first) throw new Error('a grid of no cells');
  const userScript =
    first.options.script !== undefined && modesNeeding('script-file').some((mode) => first.options.modes.includes(mode))
      ? readUserScript(first.options.script)
      : undefined;
  const choice: ServerChoice = {
    ...(flags.url !== undefined ? { url: flags.url } : {}),
    ...(flags.serverBin !== undefined ? { serverBin: flags.serverBin } : {}),
    tls: flags,
  };
  const target = chooseTargetOrCluster(choice, flags.embeddedCluster, io.env);
  for (const cell of cellOptions) {
    if (cell.options.consequences) checkConsequenceOptions(cell.options.consequences, target === undefined, cell.options.processes ?? false);
    if (cell.options.latency && target) proxyTarget(target.url);
  }

  const open = (signal: AbortSignal) =>
    flags.embeddedCluster !== undefined ? openEmbeddedClusterSession(flags.embeddedCluster, flags.serverBin, signal) : openSession(choice, io.env, signal);
  // A grid keeps nothing (no --keep): its session closes, and its embedded server stops, however it ends.
  // The line for a page the grid made and could not write, said once its report is out.
  let pageLost: string | undefined;
  const stoppedBy = await withSession(open, io, false, async (session, interrupts) => {
    const started = performance.now();
    const progress = gridProgress(io, axes, cells.length, started);
    try {
      // Refused here, the grid has written nothing: no cell has run, and no JSON or page is made.
      await checkGridCells(session, cellOptions, userScript, interrupts);
      const outcome = await runGrid({
        cells,
        modes: first.options.modes,
        now: () => performance.now(),
        onStart: progress.start,
        onDone: progress.done,
        raceCell: async (_at, index) => {
          const cell = cellOptions[index];
          if (!cell) throw new Error(`no cell ${index}`);
          const { report } = await raceReport(session, cell.options, cell.flags, userScript, interrupts, io, { progress: false });
          return { runs: report.runs, totals: report.totals, latency: report.latency };
        },
      });
      progress.stop();
      // The tool's own server's death, rather than the lost connection it caused (serverNews): the
      // grid returns what stopped it, so no other place would put it in the lost connection's stead.
      const stoppedBy = await serverNews(session, outcome.stoppedBy);
      // Stopped before any cell finished (a read-only replica found at the first write, a signal):
      // there is nothing to show, so the command ends as a single race would, with its line alone.
      if (stoppedBy !== undefined && outcome.cells.length === 0) return stoppedBy;
      const stopped =
        stoppedBy instanceof EmqError
          ? { exit: stoppedBy.exitCode, message: scrubUrlText(stoppedBy.message) }
          : stoppedBy !== undefined
            ? { exit: ExitCode.server, message: 'unexpected error (a bug; please report it)' }
            : undefined;
      const report: GridJson = gridJson({
        complete: stoppedBy === undefined,
        server: { kind: session.info.kind, version: session.info.version, url: session.target.display },
        axes,
        modes: first.options.modes.filter((mode) => outcome.cells.length === 0 || outcome.cells.some((cell) => cell.modes.some((m) => m.mode === mode))),
        trials: first.options.trials ?? 1,
        plannedCells: cells.length,
        cells: outcome.cells,
        elapsedMs: Math.round(performance.now() - started),
        ...(stopped ? { stopped } : {}),
      });
      const command = scrubUrlText(['emq-race', ...redactArgs(argv.slice(2))].map(shellQuote).join(' '));
      const html = flags.html;
      // A page that could not be written loses the page, not the grid: its report is printed all the same.
      const writePage = (): void => {
        if (html !== undefined) pageLost = writeOrLost('--html', () => writeGridPage(html, report, { command }, io, flags.json));
      };
      // Under --json the page comes first, its line on stderr before the report on stdout.
      if (flags.json) writePage();
      if (flags.json) io.out(`${JSON.stringify(report)}\n`);
      else {
        const width = outputWidth(io);
        const embedded = session.embedded ? 'stopped' : undefined;
        io.out(`${wrapLines(serverHeadline({ ...session.info, url: session.target.display }, embedded), width)}\n${renderGridTables(report, width)}`);
      }
      if (!flags.json) writePage();
      if (pageLost !== undefined) io.err(`emq-race: ${pageLost}\n`);
      return stoppedBy;
    } finally {
      progress.stop();
    }
  });
  if (stoppedBy !== undefined) throw stoppedBy;
  return pageLost === undefined ? ExitCode.ok : ExitCode.outputLost;
}

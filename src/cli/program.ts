/**
 * The command line: parses flags, runs the modes, prints the report and maps every outcome to an
 * exit code. The work itself lives in the modules it calls.
 */
import { Command, CommanderError, Option } from 'commander';
import { checkConsequenceOptions } from '../consequences/plan.js';
import { collectFault } from '../consequences/faults/names.js';
import { addCleanCommand } from './clean-command.js';
import { EmqError, ExitCode, InterruptedError, usageError } from '../errors.js';
import { onClientNote, scrubUrlText } from '../server/connection.js';
import { watchEvictions } from '../server/eviction-watch.js';
import { addExplainCommand } from './explain-command.js';
import { teachHelp } from './help.js';
import { processIo } from './process-io.js';
import { watchInterrupts, withStop, type Interrupts } from '../interrupt.js';
import { checkRaceOptions, intFlag, jobsForMode, latencyAsked, msFlag, modesWithScript, parseModes, parsePendingKind, parseQueueName } from './options.js';
import { parseExpectation } from './expect.js';
import { renderCsv } from '../report/csv.js';
import { writeRacePage } from '../html/report-files.js';
import { outputFileFlag } from '../html/output-file.js';
import { errorJson, reportJson, type RaceReport } from '../report/json.js';
import { describeMisses, formatExpectation, judge } from '../report/verdict.js';
import { latencyLine, renderTable, type TableLayout } from '../report/report.js';
import { serverHeadline } from '../server/connection.js';
import { errorWidth, outputWidth, wrapLines } from '../text.js';
import { clusterTopology, openEmbeddedClusterSession } from '../server/cluster/cluster-session.js';
import { checkPlanMemory, nodeName, runQueues } from '../race/queues.js';
import { availableModes, runPlan } from '../race/plan.js';
import { progressBoard } from '../race/progress.js';
import { totalsPerMode } from '../report/totals.js';
import { keptServerLines } from '../server/embedded-server.js';
import { chooseTarget, closeSession, openSession, type ServerChoice, type Session } from '../server/session.js';
import { summarizeTrials } from '../audit/trials.js';
import { renderTrialsTable } from '../report/trials-table.js';
import { modesNeeding } from '../sweepers/strategies.js';
import { loadUserScript, readUserScript } from '../sweepers/user-script.js';
import { addTlsOptions, type TlsFlags } from '../server/tls.js';
import { proxyTarget, startRaceProxy, type RaceProxy } from '../server/latency-proxy.js';
import { type FaultName, LIMITS, type Expectation, type Mode, type PendingKind, type RaceOptions, type ModeRun, type RunResult, VERSION, type Io } from '../model.js';

export interface MainFlags extends TlsFlags {
  mode: Mode[];
  jobs: number;
  sweepers: number;
  batch: number;
  maxStalled: number;
  stalledBefore: number;
  probeDelay: number;
  loopJobs?: number;
  serverStats: boolean;
  queues: number;
  cluster: boolean;
  embeddedCluster?: number;
  queue?: string;
  url?: string;
  serverBin?: string;
  keep: boolean;
  json: boolean;
  expect?: Expectation;
  fault: FaultName[];
  workers: number;
  cycles: number;
  observe: boolean;
  allowServerWide: boolean;
  script?: string;
  pending: PendingKind;
  maxSweeps?: number;
  live?: number;
  interval: number;
  jitter: number;
  processes: boolean;
  csv: boolean;
  trials?: number;
  latency?: number;
  latencyJitter?: number;
  /** Whether --mode was given (with --script and no --mode, only the script runs). */
  modeGiven: boolean;
  html?: string;
  wide: boolean;
}

function range(limit: { min: number; max: number }): string {
  return `${limit.min}–${limit.max}`;
}

function buildProgram(io: Io, onMain: (flags: MainFlags) => Promise<number>, exit: { code: number }): Command {
  const program = new Command('emq-race')
    .description("Seed expired leases into a live Redis or Valkey, race N sweepers (one atomic Lua script vs a loop of round trips), audit the server's state against the sweepers' own records and print what went wrong.")
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: io.out,
      writeErr: io.err,
      // Commander's own usage errors become one line, like ours.
      // A URL given where a command name goes is echoed in "unknown command": scrubbed like every error.
      outputError: (message, write) => write(`emq-race: ${scrubUrlText(oneLine(message))}\n`),
    })
    .exitOverride()
    .addOption(new Option('--mode <mode>', 'the strategies to race, each on a queue of its own: a mode, both, all, or a comma list (see Modes below)').default(['atomic', 'loop'], 'both').argParser(parseModes))
    .addOption(new Option('--sweepers <n>', `concurrent sweepers, each on its own connection (${range(LIMITS.sweepers)})`).default(LIMITS.sweepers.default).argParser(intFlag('--sweepers', LIMITS.sweepers)))
    .addOption(new Option('--jobs <n>', `expired leases to seed (${range(LIMITS.jobs)})`).default(LIMITS.jobs.default).argParser(intFlag('--jobs', LIMITS.jobs)))
    .addOption(new Option('--batch <n>', `jobs per sweep (${range(LIMITS.batch)})`).default(LIMITS.batch.default).argParser(intFlag('--batch', LIMITS.batch)))
    .addOption(new Option('--max-stalled <n>', `stall count at which a job goes to dead (${range(LIMITS.maxStalled)})`).default(LIMITS.maxStalled.default).argParser(intFlag('--max-stalled', LIMITS.maxStalled)))
    .addOption(new Option('--stalled-before <n>', 'stall count every job starts with (below --max-stalled)').default(LIMITS.stalledBefore.default).argParser(intFlag('--stalled-before', LIMITS.stalledBefore)))
    .addOption(new Option('--probe-delay <ms>', `loop only: pause after each probe, standing for a slower liveness check (${range(LIMITS.probeDelay)})`).default(LIMITS.probeDelay.default).argParser(intFlag('--probe-delay', LIMITS.probeDelay)))
    .addOption(new Option('--loop-jobs <n>', `jobs for the round-trip mode (loop), which is slow by nature (${range(LIMITS.loopJobs)}; default ${LIMITS.loopJobs.default}, or --jobs if smaller)`).argParser(intFlag('--loop-jobs', LIMITS.loopJobs)))
    .addOption(new Option('--server-stats', "read the server's LATENCY HISTOGRAM around each race for serverCallMsP99 (always on for the embedded server)").default(false))
    .addOption(new Option('--queues <k>', `queues per mode, run side by side, each with its own sweepers; on a cluster spread over the primaries (${range(LIMITS.queues)})`).default(LIMITS.queues.default).argParser(intFlag('--queues', LIMITS.queues)))
    .addOption(new Option('--cluster', 'the --url node is a Redis Cluster / Valkey cluster node (detected from INFO cluster anyway)').default(false))
    .addOption(new Option('--embedded-cluster <n>', `start a private cluster of n primaries from the server binary instead of one server (${range(LIMITS.embeddedCluster)})`).argParser(intFlag('--embedded-cluster', LIMITS.embeddedCluster)))
    .addOption(new Option('--queue <name>', 'queue name: letters, digits, - and _ (default: race- and 8 random hex digits)').argParser(parseQueueName))
    .addOption(new Option('--url <url>', 'server URL: redis://[user:pass@]host:port[/db], rediss://… or unix:///path (default: $REDIS_URL, else an embedded server)'))
    .addOption(new Option('--server-bin <path>', 'redis-server or valkey-server binary for the embedded server (default: redis-server, then valkey-server, from PATH)'))
    .addOption(new Option('--keep', "leave the run's keys (and an embedded server) in place").default(false))
    .addOption(new Option('--json', 'print one JSON object on stdout and nothing else').default(false))
    .addOption(new Option('--fault <name>', 'inject a fault: sweeper-crash, script-flush or client-kill (repeat for several)').default([], 'none').argParser(collectFault))
    .addOption(new Option('--allow-server-wide', 'let --fault script-flush run on a --url server (it empties every application\'s script cache)').default(false))
    .addOption(new Option('--workers <n>', `workers consuming pending during the race, so duplicates run twice (${range(LIMITS.workers)})`).default(LIMITS.workers.default).argParser(intFlag('--workers', LIMITS.workers)))
    .addOption(new Option('--cycles <n>', `stalls each job may have: a recovered job is leased again, already expired, up to n − 1 times (${range(LIMITS.cycles)})`).default(LIMITS.cycles.default).argParser(intFlag('--cycles', LIMITS.cycles)))
    .addOption(new Option('--observe', 'sample where jobs stand during the race, counting jobs seen in no place or in two').default(false))
    .addOption(new Option('--script <file>', 'your own sweep script (Lua, same KEYS/ARGV contract as the built-in one) as the script mode; alone unless --mode is given'))
    .addOption(new Option('--pending <type>', 'list (RPUSH) or zset (ZADD pending 0 id, as EchoMQ)').default('list').argParser(parsePendingKind))
    .addOption(new Option('--max-sweeps <n>', `sweeps per sweeper before it stops (${range(LIMITS.maxSweeps)}; default 10 × ⌈jobs / batch⌉ + 10)`).argParser(intFlag('--max-sweeps', LIMITS.maxSweeps)))
    .addOption(new Option('--live <n>', `jobs seeded with still-valid leases, which no sweep may touch (${range(LIMITS.live)}; default 10% of --jobs)`).argParser(intFlag('--live', LIMITS.live)))
    .addOption(new Option('--interval <ms>', `pause between one sweeper's sweeps (${range(LIMITS.interval)})`).default(LIMITS.interval.default).argParser(intFlag('--interval', LIMITS.interval)))
    .addOption(new Option('--jitter <ms>', `random extra pause per sweeper and per sweep, up to this (${range(LIMITS.jitter)})`).default(LIMITS.jitter.default).argParser(intFlag('--jitter', LIMITS.jitter)))
    .addOption(new Option('--processes', 'run each sweeper in a Node process of its own').default(false))
    .addOption(new Option('--latency <ms>', `add this round-trip time to every race connection, through a delaying proxy on loopback (${range(LIMITS.latency)}, fractions allowed; seeding and audit go direct)`).argParser(msFlag('--latency', LIMITS.latency)))
    .addOption(new Option('--latency-jitter <ms>', `with --latency: up to this much more per chunk, at random, order kept (${range(LIMITS.latencyJitter)})`).argParser(msFlag('--latency-jitter', LIMITS.latencyJitter)))
    .addOption(new Option('--csv', 'print the runs as CSV, the JSON\'s field names as headers').default(false))
    .addOption(new Option('--wide', 'every column of the table, one row per run, however wide (without it: the headline figures, fitted to the terminal)').default(false))
    .addOption(new Option('--trials <n>', `repeat each mode this many times on fresh queues and summarise (${range(LIMITS.trials)})`).argParser(intFlag('--trials', LIMITS.trials)))
    .addOption(new Option('--html <file>', 'also write the report as one self-contained HTML page').argParser(outputFileFlag('--html')))
    .addOption(new Option('--expect <what>', 'exit 1 unless the runs come out so: clean (every run clean), race (the loop races, every other mode is clean), or per mode, e.g. atomic=clean,loop=race (repeatable; terms merge)').argParser(parseExpectation))
    // A stray word is a mistyped command (with a "did you mean"), not an excess argument.
    .allowExcessArguments(true)
    .action(async (flags: Omit<MainFlags, 'modeGiven'>, command: Command) => {
      if (command.args.length > 0) (command as unknown as { unknownCommand(): void }).unknownCommand();
      exit.code = await onMain({ ...flags, modeGiven: command.getOptionValueSource('mode') !== 'default' });
    });
  // Subcommands have flags of their own (--url, --queue): the program's stop at the command name.
  program.enablePositionalOptions();
  addTlsOptions(program);
  addCleanCommand(program, io, exit);
  return program;
}

/**
 * Whether --json is on the command line as a flag: looked for in the words themselves, so that a
 * flag refused before commander reaches --json still fails as JSON, but not where it is the value
 * of an option that takes one (`--html --json`) or after `--`.
 */
export function asksForJson(program: Command, argv: readonly string[]): boolean {
  const options = [program, ...program.commands].flatMap((command) => command.options);
  const takesValue = (word: string): boolean => options.some((o) => (o.long === word || o.short === word) && (o.required || o.optional));
  for (let at = 2; at < argv.length; at++) {
    const word = argv[at] ?? '';
    if (word === '--') return false;
    if (word === '--json') return true;
    if (takesValue(word)) at++;
  }
  return false;
}

export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  onClientNote(io.err);
  const exit = { code: ExitCode.ok as number };
  // Under --json a failure still prints one object on stdout, unless the report is already there.
  let printed = false;
  const tracked: Io = { ...io, out: (text) => { printed = true; io.out(text); } };
  const program = buildProgram(tracked, (flags) => main(flags, tracked), exit);
  addExplainCommand(program, tracked, exit);
  teachHelp(program, tracked);
  const failed = (code: number, message: string): number => {
    if (asksForJson(program, argv) && !printed) io.out(`${JSON.stringify(errorJson(code, message))}\n`);
    return code;
  };
  try {
    await program.parseAsync(subcommandFirst(program, argv));
    return exit.code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has already written its line on stderr (outputError above).
      return err.exitCode === 0 ? ExitCode.ok : failed(ExitCode.usage, oneLine(err.message));
    }
    // Every message is scrubbed once more on its way out: no path may print a password, even one
    // that forgot to use the redacted URL.
    if (err instanceof EmqError) {
      io.err(`emq-race: ${scrubUrlText(err.message)}\n`);
      return failed(err.exitCode, scrubUrlText(err.message));
    }
    io.err(`emq-race: unexpected error (a bug; please report it):\n${scrubUrlText(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`);
    return failed(ExitCode.server, scrubUrlText(`unexpected error (a bug; please report it): ${err instanceof Error ? err.message : String(err)}`));
  }
}

/** Commander's message as the one line the tool prints. */
function oneLine(message: string): string {
  return message.replace(/^error: /, '').replace(/\n+/g, ' ').trim();
}

/**
 * Options written before a subcommand (`emq-race --json explain`) are moved after its name.
 * Commander would read them as the race's own flags and run the subcommand without them; after
 * the name, the subcommand's parser takes them, or names one it does not know (exit 2).
 */
export function subcommandFirst(program: Command, argv: readonly string[]): string[] {
  const args = argv.slice(2);
  const subcommands = new Set(program.commands.flatMap((command) => [command.name(), ...command.aliases()]));
  let at = 0;
  while (at < args.length) {
    const arg = args[at] ?? '';
    if (subcommands.has(arg)) break;
    // A word that is no option and no subcommand: the race's (mistyped) command, left as it is.
    if (!arg.startsWith('-') || arg === '--') return [...argv];
    const option = program.options.find((o) => o.long === arg || o.short === arg);
    at += option && (option.required || option.optional) ? 2 : 1;
  }
  if (at === 0 || at >= args.length) return [...argv];
  return [...argv.slice(0, 2), args[at] ?? '', ...args.slice(0, at), ...args.slice(at + 1)];
}

/** The flags as the run's options: pure, so every combination is checked before anything starts. */
export function raceOptionsFrom(flags: MainFlags): RaceOptions {
  const options: RaceOptions = {
    modes: modesWithScript(flags.mode, flags.script, flags.modeGiven),
    jobs: flags.jobs,
    sweepers: flags.sweepers,
    batch: flags.batch,
    maxStalled: flags.maxStalled,
    stalledBefore: flags.stalledBefore,
    probeDelayMs: flags.probeDelay,
    queue: flags.queue,
    keep: flags.keep,
    json: flags.json,
    expect: flags.expect,
    consequences: { faults: flags.fault, workers: flags.workers, cycles: flags.cycles, observe: flags.observe, allowServerWide: flags.allowServerWide },
    script: flags.script,
    pending: flags.pending,
    maxSweeps: flags.maxSweeps,
    live: flags.live,
    intervalMs: flags.interval,
    jitterMs: flags.jitter,
    processes: flags.processes,
    csv: flags.csv,
    trials: flags.trials,
    latency: latencyAsked(flags),
  };
  checkRaceOptions(options);
  if (flags.embeddedCluster !== undefined && flags.url !== undefined) throw usageError('--embedded-cluster starts its own cluster: leave out --url');
  return options;
}

/** The main command: options from the flags, the server, the race of every mode, the report, the verdict. */
async function main(flags: MainFlags, io: Io): Promise<number> {
  const options = raceOptionsFrom(flags);
  // Read before any server starts: a missing file is a usage error with nothing begun.
  const userScript = options.script !== undefined && modesNeeding('script-file').some((mode) => options.modes.includes(mode)) ? readUserScript(options.script) : undefined;
  const choice: ServerChoice = { ...(flags.url !== undefined ? { url: flags.url } : {}), ...(flags.serverBin !== undefined ? { serverBin: flags.serverBin } : {}), tls: flags };
  // Worked out once, before anything starts: no --url or REDIS_URL means a server of our own.
  const target = flags.embeddedCluster !== undefined ? undefined : chooseTarget(choice, io.env);
  if (options.consequences) checkConsequenceOptions(options.consequences, target === undefined, options.processes ?? false);
  if (options.latency && target) proxyTarget(target.url);

  const interrupts = watchInterrupts(io.err);
  const opened = flags.embeddedCluster !== undefined ? openEmbeddedClusterSession(flags.embeddedCluster, flags.serverBin) : openSession(choice, io.env);
  const session = await opened.catch((err: unknown) => {
    interrupts.dispose();
    throw err;
  });
  let interrupted = false;
  try {
    const { report, runs } = await raceReport(session, options, flags, userScript, interrupts, io);
    const machineOutput = options.json || Boolean(options.csv);
    const writePage = (): void => {
      if (flags.html !== undefined) writeRacePage(flags.html, report, runs, { ...flags, expect: options.expect && formatExpectation(options.expect), url: target?.url }, VERSION, io, machineOutput);
    };
    // Under --json or --csv the page comes first: if it cannot be written, stdout holds nothing yet.
    if (machineOutput) writePage();
    printReport(report, runs, options, flags, io);
    if (!machineOutput) writePage();
    if (options.keep) describeKept(session, runs, io, machineOutput);
    const missed = report.verdict && describeMisses(report.verdict);
    if (missed === undefined) return ExitCode.ok;
    io.err(`emq-race: ${missed}\n`);
    return ExitCode.expectationFailed;
  } catch (err) {
    interrupted = interrupts.signal.aborted;
    throw err;
  } finally {
    await closeSession(session, options.keep && !interrupted);
    interrupts.dispose();
  }
}

/** Every mode's run on the session's server, and the report they make. */
async function raceReport(session: Session, options: RaceOptions, flags: MainFlags, userScript: string | undefined, interrupts: Interrupts, io: Io): Promise<{ report: RaceReport; runs: RunResult[] }> {
  // Compiled by the server before anything is seeded: a script that does not compile writes nothing.
  if (userScript !== undefined && options.script !== undefined) await loadUserScript(session.admin, userScript, options.script, session.target.display);
  const modes = await availableModes(session, options.modes, (line) => io.err(`emq-race: ${line}\n`));
  const trials = options.trials ?? 1;
  // On a terminal with --trials the line says which trial runs instead; a CI log can have both.
  const board = !io.stderrIsTty || trials === 1 ? progressBoard(io.err, { terminal: Boolean(io.stderrIsTty), width: () => errorWidth(io) }) : undefined;
  // What the command line adds to each mode's run: round-trip modes on --loop-jobs, latency stats, progress.
  const adjust = (mode: Mode): Partial<ModeRun> => ({
    jobs: jobsForMode(mode, options.jobs, flags.loopJobs ?? LIMITS.loopJobs.default),
    // On the tool's own server (or cluster) the figure is a bonus; asked for, it must work.
    serverStats: flags.serverStats ? 'required' : session.embedded !== undefined ? 'if-available' : undefined,
    ...(board ? { progress: board } : {}),
    warn: (line: string) => io.err(`emq-race: ${line}\n`),
  });
  const topology = await clusterTopology(session, flags.cluster);
  if (topology && options.latency) {
    throw usageError(`--latency: the server at ${session.target.display} is a cluster node; the latency proxy stands for one server, and a cluster sends its clients on to every node`);
  }
  const perQueue = topology !== undefined || flags.queues > 1;
  const progress = io.stderrIsTty && !options.csv;
  // Any eviction on a server the run uses stops the run as a Ctrl-C would, with its own error.
  const evicted = new AbortController();
  const watch = await watchEvictions(topology ? topology.primaries.map((node) => topology.targetOf(node)) : [session.target], (err) => evicted.abort(err));
  const runInterrupts = withStop(interrupts, evicted.signal);
  // The race's own connections go through the proxy; seeding, audit and cleanup stay direct.
  let proxy: RaceProxy | undefined;
  let planned: RunResult[];
  try {
    proxy = options.latency ? await startRaceProxy(session.target, options.latency) : undefined;
    const raced: Session = proxy ? { ...session, raceTarget: proxy.target } : session;
    planned = await runPlan(raced, options, modes, userScript, runInterrupts, {
      adjust,
      ...(progress ? { progress: (trial: number, of: number, mode: Mode) => io.err(`\r\x1b[Kemq-race: ${options.trials !== undefined ? `trial ${trial}/${of}, ` : ''}${mode}…`) } : {}),
      // A trial of several queues runs them all side by side; the next trial starts on fresh ones.
      ...(perQueue ? { spread: (name: string, runFor: (queue: string) => ModeRun) => runQueues(raced, topology, name, flags.queues, runFor, runInterrupts) } : {}),
      // Every step is checked against maxmemory before the first one writes.
      beforeWrites: (steps) => checkPlanMemory(session, topology, perQueue ? flags.queues : 1, steps, runInterrupts.signal),
    });
  } catch (err) {
    // The count at the end, rather than the one that stopped the run; a signal keeps its own exit code.
    const eviction = await watch.stop();
    throw err instanceof InterruptedError ? err : (eviction ?? err);
  } finally {
    await proxy?.close();
  }
  // An eviction seen only by the last reading still fails the run: its figures may miss keys.
  const late = await watch.stop();
  if (late) throw late;
  if (progress && trials * modes.length > 1) io.err('\r\x1b[K');
  const runs: RunResult[] = perQueue ? planned : planned.map((run) => ({ ...run, node: nodeName(session.target.url) }));
  interrupts.signal.throwIfAborted();
  const totals = perQueue ? totalsPerMode(runs) : undefined;
  const report: RaceReport = {
    server: { ...session.info, url: session.target.display },
    // The report is read once the run is over: by then the tool's own server is gone (unless kept).
    ...(session.embedded ? { embedded: options.keep ? 'kept' : 'stopped' } : {}),
    ...(proxy ? { latency: proxy.latency } : {}),
    runs,
    ...(totals ? { totals } : {}),
    ...(topology ? { primaries: topology.primaries } : {}),
    // With several queues a trial is judged by its summed row: one count per trial, not per queue.
    ...(options.trials !== undefined ? { trials: summarizeTrials(totals ?? runs) } : {}),
    ...(options.expect ? { verdict: judge(options.expect, runs) } : {}),
  };
  return { report, runs };
}

/** The report on stdout in the format asked for: JSON, CSV, the trials table, or the runs table. */
function printReport(report: RaceReport, runs: readonly RunResult[], options: RaceOptions, flags: MainFlags, io: Io): void {
  const layout: TableLayout = { color: useColor(io), width: outputWidth(io), wide: flags.wide };
  if (options.json) io.out(`${JSON.stringify(reportJson(report))}\n`);
  else if (options.csv) io.out(`${renderCsv(runs)}\n`);
  else if (report.trials && (options.trials ?? 1) > 1) {
    const summed = flags.queues > 1 ? `each trial counts the sum of its ${flags.queues} queues per mode (--json has every queue)\n` : '';
    const header = [serverHeadline(report.server, report.embedded), ...(report.latency ? [latencyLine(report.latency)] : [])].map((line) => `${wrapLines(line, layout.width)}\n`).join('');
    io.out(`${header}${renderTrialsTable(report.trials, layout)}\n${wrapLines(summed, layout.width)}`);
  } else io.out(`${renderTable(report, layout)}\n${wrapLines(loopJobsNote(runs, options.jobs), layout.width)}`);
}

function useColor(io: Io): boolean {
  if (io.env.NO_COLOR) return false;
  if (io.env.FORCE_COLOR && io.env.FORCE_COLOR !== '0') return true;
  return io.stdoutIsTty;
}

function describeKept(session: Pick<Session, 'embedded'>, runs: readonly RunResult[], io: Io, machineOutput: boolean): void {
  // With --json (or --csv) stdout carries that output alone, so this goes to stderr.
  // On stdout, under the table, the lines wrap like the table's own sentences.
  const say = machineOutput ? io.err : (line: string) => io.out(wrapLines(line, outputWidth(io)));
  for (const run of runs) {
    say(`kept: queue ${run.queue} (keys emq:{${run.queue}}:*)\n`);
    if (run.keptLibrary) say(`kept: function library ${run.keptLibrary}; remove it with: FUNCTION DELETE ${run.keptLibrary}\n`);
  }
  if (session.embedded) for (const line of keptServerLines(session.embedded)) say(line);
}

/** Says so under the table when a round-trip mode ran on fewer jobs than --jobs. */
export function loopJobsNote(runs: readonly RunResult[], jobs: number): string {
  const fewer = runs.filter((run) => run.jobs < jobs);
  // One line per mode, however many queues it ran on.
  const lines = fewer.map((run) => `${run.mode} ran on ${run.jobs} of the ${jobs} jobs (--loop-jobs: a round trip per command is slow by nature)\n`);
  return [...new Set(lines)].join('');
}

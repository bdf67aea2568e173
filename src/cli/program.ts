/**
 * The command line: parses flags, runs the modes, prints the report and maps every outcome to an
 * exit code. The work itself lives in the modules it calls.
 */
import { Command, CommanderError } from 'commander';
import { addCleanCommand } from './clean-command.js';
import { CodeBugError, EmqError, ExitCode, usageError } from '../shared/errors.js';
import { checkOutputFiles, writeOrLost } from '../html/output-file.js';
import { onClientNote, redactUrl, scrubUrlText } from '../server/connection.js';
import { nearCommand } from '../shared/text.js';
import { withoutSecrets } from '../shared/secrets.js';
import { addExplainCommand } from './explain-command.js';
import { addExploreCommand } from './explore-command.js';
import { teachHelp } from './help.js';
import { processIo } from './process-io.js';
import { catchUncaught, meaning } from './uncaught.js';
import { keepsSessionServer, raceFlagOptions, raceOptionsFrom, type MainFlags } from './race-flags.js';
import { flagOfTheTool, refuseFlagsAsValues, refuseRepeatedValues, takesFlag, takesValue } from './options.js';
import { keepLinesApart } from '../race/progress.js';
import type { ServerChoice } from '../server/session.js';
import { modesNeeding } from '../sweepers/strategies.js';
import { addTlsOptions } from '../server/tls.js';
import { addGridCommand } from './grid-command.js';
import { errorJson } from '../report/json-header.js';
import { VERSION, type Io } from '../shared/model.js';

export { raceOptionsFrom, type MainFlags } from './race-flags.js';

function buildProgram(io: Io, onMain: (flags: MainFlags) => Promise<number>, exit: { code: number }, argv: readonly string[]): Command {
  const program = new Command('emq-race')
    .description(
      "Seed expired leases into a live Redis or Valkey, race N sweepers (one atomic Lua script vs a loop of round trips), audit the server's state against the sweepers' own records and print what went wrong.",
    )
    .version(VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show this help')
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: io.out,
      writeErr: io.err,
      // Commander's own usage errors become one line, like ours.
      // A URL given where a command name goes is echoed in "unknown command": scrubbed like every error.
      // Written from inside parsing, when every command is known.
      outputError: (message, write) => write(`emq-race: ${commanderLine(message, program, argv)}\n`),
    })
    .exitOverride();
  for (const option of raceFlagOptions()) program.addOption(option);
  // Every command's output files against each other, once its flags are parsed and before its
  // action touches anything: two flags naming one file are a usage error, not a file lost.
  program.hook('preAction', (_program, command) => checkOutputFiles(command));
  program
    // A stray word is a mistyped command (with a "did you mean"), not an excess argument.
    .allowExcessArguments(true)
    .action(async (flags: Omit<MainFlags, 'given'>, command: Command) => {
      const [stray] = command.args;
      if (stray !== undefined) {
        // Named only when it is plainly a command mistyped: any other word may be a password
        // given without --url (`emq-race :secret@host`).
        const commands = command.commands.map((sub) => sub.name());
        if (nearCommand(stray, commands)) (command as unknown as { unknownCommand(): void }).unknownCommand();
        throw usageError(
          /^(?:rediss?|unix):\/\//i.test(stray)
            ? `${JSON.stringify(redactUrl(stray))} is not a command: a server URL goes after --url`
            : 'an argument that is neither a command nor a flag (not shown: it may be a password); flags start with --, a server URL goes after --url',
        );
      }
      // The flags the user gave, not commander's defaults (whether --mode was named; what a library's run refuses).
      const given = command.options.flatMap((option) => (option.long && command.getOptionValueSource(option.attributeName()) === 'cli' ? [option.long] : []));
      exit.code = await onMain({ ...flags, given });
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
 * of an option that takes one (`--queue x --json` asks; `--html out.html` takes its word) or after
 * `--`. A flag of the tool right after an option that takes a value is no value but a value left
 * out (refuseFlagsAsValues): `--url --json` is refused, and as JSON.
 */
export function asksForJson(program: Command, argv: readonly string[]): boolean {
  const options = [program, ...program.commands].flatMap((command) => command.options);
  const isFlag = flagOfTheTool(program);
  for (let at = 2; at < argv.length; at++) {
    const word = argv[at] ?? '';
    if (word === '--') return false;
    if (word === '--json') return true;
    if (takesValue(options, word) && !isFlag(argv[at + 1] ?? '')) at++;
  }
  return false;
}

/** The whole command line's definition: every command, its flags and its help, acting on `io`. */
export function assembleProgram(io: Io, exit: { code: number }, argv: readonly string[]): Command {
  const program = buildProgram(io, (flags) => main(flags, io), exit, argv);
  addExplainCommand(program, io, exit);
  addExploreCommand(program, io, exit);
  addGridCommand(program, io, exit, argv);
  teachHelp(program, io);
  refuseRepeatedValues(program);
  return program;
}

export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  onClientNote(io.err);
  const exit = { code: ExitCode.ok as number };
  // Under --json a failure still prints one object on stdout, unless the report is already there.
  let printed = false;
  // On a terminal, stderr's in-place progress line is ended before any other line is written there.
  const tracked: Io = {
    ...io,
    out: (text) => {
      printed = true;
      io.out(text);
    },
    err: keepLinesApart(io.err),
    // A third signal leaves at once, past the catch below: under --json its error object is still printed.
    leave: (code, message) => {
      failed(code, scrubUrlText(message));
      (io.leave ?? ((left: number) => process.exit(left)))(code, message);
    },
  };
  const program = assembleProgram(tracked, exit, argv);
  const failed = (code: number, message: string): number => {
    if (asksForJson(program, argv) && !printed) {
      // Once: a signal as the process ends, after this object, must not print a second.
      printed = true;
      io.out(`${JSON.stringify(errorJson(code, message))}\n`);
    }
    return code;
  };
  // An exception past every caller (a peer's reply no command asked for, thrown inside the client)
  // stops the run, which cleans up, and ends the command here as any other error would.
  const uncaught = catchUncaught();
  try {
    const ordered = subcommandFirst(program, argv);
    refuseFlagsAsValues(program, ordered.slice(2));
    const parsing = program.parseAsync(ordered);
    // Left behind when an exception past every caller ended the command first: its own end is no news.
    parsing.catch(() => {});
    await Promise.race([parsing, uncaught.failed]);
    return exit.code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has already written its line on stderr (outputError above).
      return err.exitCode === 0 ? ExitCode.ok : failed(ExitCode.usage, commanderLine(err.message, program, argv));
    }
    // Every message is scrubbed once more on its way out: no path may print a password, even one
    // that forgot to use the redacted URL. A bug met while speaking to a server (describeServerError
    // kept it as one) is said as every bug is, with what the run left behind on its way out.
    if (err instanceof EmqError && !(err instanceof CodeBugError)) {
      tracked.err(`emq-race: ${scrubUrlText(err.message)}\n`);
      return failed(err.exitCode, scrubUrlText(err.message));
    }
    const report = err instanceof CodeBugError ? bugReport(err.bug, err.added, err.afterOutput) : bugReport(err);
    tracked.err(report.stderr);
    return failed(ExitCode.server, report.message);
  } finally {
    uncaught.release();
    commandReturned = true;
  }
}

/** Whether a command has returned in this process: what reaches the top after it comes once its output was complete. */
let commandReturned = false;

/**
 * A bug, as the command line says it: its line and its stack, then on a line of its own what the
 * run left behind on its way out (kept keys, a kept server: `added`, which the run added to the
 * error's message); and the message the JSON error object carries. `afterOutput`: the bug came
 * once the command's output was complete, and its header says so. A bug's words are no sentence
 * of the tool's: any password in them goes too, wherever it stands.
 */
export function bugReport(cause: unknown, added = '', afterOutput = false): { stderr: string; message: string } {
  const scrub = (text: string): string => withoutSecrets(scrubUrlText(text));
  // Once the output is complete, the header says so: the report above it stands as printed.
  const header = `unexpected error (a bug; please report it)${afterOutput ? ', once its output was complete' : ''}`;
  const said = `${header}: ${cause instanceof Error ? cause.message : String(cause)}`;
  return {
    stderr: `emq-race: ${header}:\n${scrub(cause instanceof Error ? (cause.stack ?? cause.message) : String(cause))}\n${added === '' ? '' : `emq-race: ${scrub(added)}\n`}`,
    message: scrub(added === '' ? said : `${said}; ${added}`),
  };
}

/**
 * For the tool's own process alone (bin/emq-race.js calls it before run): an exception that
 * reaches the top once the command has returned (a timer or socket callback of the tool's firing
 * as the process ends) is still said as the command line says it, a bug with its stack and a
 * reply no command asked for in one line, each after a header that says the output was complete,
 * and the process leaves with that error's exit code (3). Node's default would print its own
 * stack and exit 1, which the tool's exit codes read as "an --expect failed". A listener, not the
 * capture callback: while a command runs, its capture callback (cli/uncaught.ts) takes every such
 * exception before any listener hears of it, so this one hears only what comes after. Never
 * installed in-process (the tests' runCli): there a test runner's own listener hears it, as it
 * should. A code a signal gave the run (above 128) is kept: the exit code is always the first
 * signal's. The keys were removed before the command returned, so the process leaves once its
 * output is flushed, as Node's default would leave at once.
 */
export function reportFailuresAfterCommand(io: Pick<Io, 'err'> = processIo): void {
  process.on('uncaughtException', (err) => {
    const error = meaning(err);
    // Before the command took them (its modules loading), nothing was printed yet to be complete.
    const after = commandReturned;
    if (error instanceof CodeBugError) io.err(bugReport(error.bug, '', after).stderr);
    else io.err(`emq-race: ${scrubUrlText(error.message)}${after ? ', once its output was complete' : ''}\n`);
    const code = Number(process.exitCode ?? 0) > 128 ? Number(process.exitCode) : error.exitCode;
    process.exitCode = code;
    const flushed = (stream: NodeJS.WriteStream): Promise<void> => new Promise((resolve) => stream.write('', () => resolve()));
    void Promise.all([flushed(process.stdout), flushed(process.stderr)]).then(() => process.exit(code));
  });
}

/**
 * Commander's message as the one line the tool prints, scrubbed as every error is. An unknown
 * option is named without the value joined to it (`--password=…`, `-aVALUE`): that value is
 * often the very password (`--password=` and redis-cli's `-a` are other tools' flags).
 */
function commanderLine(message: string, program: Command, argv: readonly string[]): string {
  const name = subcommandFirst(program, argv)[2];
  const command = program.commands.find((c) => c.name() === name);
  // A short flag of the command's with letters joined to it (`-hv`): commander combines only the
  // flags it parses itself, not the help. The flag is named as given, the letters after it are not.
  const joined = /^unknown option '(-[^-])[^']+'/.exec(oneLine(message))?.[1];
  if (joined !== undefined && (joined === '-h' || takesFlag(command ?? program, joined)))
    return `${joined} with letters joined to it is no flag: give ${joined} on its own, and each other flag as a word of its own`;
  const line = scrubUrlText(oneLine(message).replace(/unknown option '(--[^=']+|-[^-'])(.*?)'(?=(?: \(Did you mean [^)]*\))?$)/, "unknown option '$1'"));
  // Said as refuseFlagsAsValues says a value left out before another flag.
  const missing = /^option '(-[^ ']+) ([^']+)' argument missing$/.exec(line);
  if (missing) return `${missing[1]}: no value given; give the value right after ${missing[1]} (${missing[1]} ${missing[2]})`;
  const option = /^unknown option '([^']+)'/.exec(line)?.[1];
  if (option === undefined) return line;
  const note = ownersNote(program, command, option);
  // Beside the note, commander's guess of --help (for `--keep`: two letters apart) is noise; a near
  // flag of the command's own (`--sweeps` for `--sweepers`) may be what was meant, and stays.
  return note ? `${line.replace(/ \(Did you mean --help\?\)$/, '')}${note}` : line;
}

/**
 * A flag of other commands given to one that does not take it (`explore --lib bullmq`, `clean
 * --json`, `emq-race --vary sweepers=1,2`) is no typo: commander's line is followed by every
 * command whose flag it is (the race itself first), and where flags are listed: the command's own,
 * for a flag of the race; else the first owner's. Anything else: nothing.
 */
function ownersNote(program: Command, command: Command | undefined, option: string): string {
  if (command && takesFlag(command, option)) return '';
  const ofTheRace = command !== undefined && takesFlag(program, option);
  const others = program.commands.filter((c) => c !== command && c.name() !== 'help' && takesFlag(c, option)).map((c) => c.name());
  const owners = [...(ofTheRace ? ['the race itself'] : []), ...others.map((owner) => `emq-race ${owner}`)];
  const listed = ofTheRace ? command?.name() : others[0];
  if (owners.length === 0 || listed === undefined) return '';
  const whose = owners.length > 1 ? `${owners.slice(0, -1).join(', ')} and ${owners.at(-1)}` : owners[0];
  return `; ${option} is a flag of ${whose}, not of ${command ? command.name() : 'the race itself'} (emq-race help ${listed} lists its flags)`;
}

/** Commander's message as one line. */
function oneLine(message: string): string {
  return message
    .replace(/^error: /, '')
    .replace(/\n+/g, ' ')
    .trim();
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
    at += takesValue(program.options, arg) ? 2 : 1;
  }
  if (at === 0 || at >= args.length) return [...argv];
  return [...argv.slice(0, 2), args[at] ?? '', ...args.slice(0, at), ...args.slice(at + 1)];
}

/** The main command: options from the flags, the server, the race of every mode, the report, the verdict. */
async function main(flags: MainFlags, io: Io): Promise<number> {
  // The race, the server and the report load when a race runs: --help, --version and a usage
  // error refused by commander start without them (docs/architecture.md, "How the command starts").
  const { raceReport } = await import('./race-report.js');
  // The page writers load the pages of every command (some twenty modules): only for a run that writes a file.
  const files = flags.html !== undefined || flags.exportTest !== undefined ? await import('../html/report-files.js') : undefined;
  const { openEmbeddedClusterSession } = await import('../server/cluster/cluster-session.js');
  const { chooseTargetOrCluster, openSession, withSession } = await import('../server/session.js');
  const { proxyTarget } = await import('../server/latency-proxy.js');
  const { printReport } = await import('./race-output.js');
  const { describeKept } = await import('../server/kept-server.js');
  const { formatExpectation, verdictLine } = await import('../report/verdict.js');
  const { checkConsequenceOptions } = await import('../consequences/plan.js');
  const { readUserScript } = await import('../sweepers/user-script.js');
  const options = raceOptionsFrom(flags);
  // The user's library, found before any server starts: not installed is a usage error with the line that installs it.
  if (options.library) {
    const { findLibrary, versionWarning } = await import('../libraries/resolve.js');
    const warning = versionWarning(findLibrary(options.library.name, options.library.from, options.library.asked));
    if (warning) io.err(`emq-race: ${warning}\n`);
  }
  // Read before any server starts: a missing file is a usage error with nothing begun.
  const userScript =
    options.script !== undefined && modesNeeding('script-file').some((mode) => options.modes.includes(mode)) ? readUserScript(options.script) : undefined;
  const choice: ServerChoice = {
    ...(flags.url !== undefined ? { url: flags.url } : {}),
    ...(flags.serverBin !== undefined ? { serverBin: flags.serverBin } : {}),
    tls: flags,
  };
  // Worked out once, before anything starts: no --url or REDIS_URL means a server of our own.
  const target = chooseTargetOrCluster(choice, flags.embeddedCluster, io.env);
  if (options.consequences) checkConsequenceOptions(options.consequences, target === undefined, options.processes ?? false);
  if (options.latency && target) proxyTarget(target.url);

  const open = (signal: AbortSignal) =>
    flags.embeddedCluster !== undefined ? openEmbeddedClusterSession(flags.embeddedCluster, flags.serverBin, signal) : openSession(choice, io.env, signal);
  const keepServer = keepsSessionServer(options);
  // --shrink and --export-test start from the seeded runs just made, on the same server.
  const shrinking = flags.shrink === true || flags.exportTest !== undefined;
  return withSession(open, io, keepServer, async (session, interrupts) => {
    // Their witness is replayed on one server, as explain's is: on a cluster node, refused before
    // anything is written, rather than met as a MOVED once the race has run.
    if (shrinking) {
      const { refuseClusterNode } = await import('../server/cluster/topology.js');
      const { orStopped } = await import('../shared/interrupt.js');
      await orStopped(interrupts.signal, refuseClusterNode(session.admin, session.target.display, flags.shrink === true ? '--shrink' : '--export-test'));
    }
    const raced = await raceReport(session, options, flags, userScript, interrupts, io);
    const { runs } = raced;
    const shrink = shrinking ? await import('./shrink-output.js') : undefined;
    const report = shrink ? await shrink.withShrink(session, interrupts, raced.report, options, userScript, io, flags.exportTest !== undefined) : raced.report;
    // A test with no witness to write is a miss, as a missed --expect is, not a failed command: the
    // report of the runs made is printed as ever (a script reads it under --json), then its line.
    // A file the run could not write (its folder gone, the disk full since the flags were checked)
    // loses that file, not the run: the report is printed all the same, then the line that says so.
    const exportTest = flags.exportTest;
    let exportMissed: string | undefined;
    let exportLost: string | undefined;
    if (shrink && exportTest !== undefined) {
      const { raceCommandLine } = await import('../html/reproduce.js');
      const commandLine = raceCommandLine({ ...flags, expect: options.expect && formatExpectation(options.expect) }, undefined);
      exportLost = writeOrLost('--export-test', () => {
        exportMissed = shrink.writeExportedTest(exportTest, report.shrink, commandLine, options.seed as number);
      });
    }
    let pageLost: string | undefined;
    const machineOutput = options.json || Boolean(options.csv);
    // Where the exported test went, said where the page's line is said (on stderr: its file is not the report).
    const announceExport = (): void => {
      if (exportTest !== undefined && exportMissed === undefined && exportLost === undefined) files?.announce(io, true, 'exported test', exportTest);
    };
    const html = flags.html;
    const writePage = (): void => {
      if (html !== undefined && files)
        pageLost = writeOrLost('--html', () =>
          files.writeRacePage(
            html,
            report,
            runs,
            { ...flags, expect: options.expect && formatExpectation(options.expect), url: target?.url },
            VERSION,
            io,
            machineOutput,
          ),
        );
    };
    // Under --json or --csv the page comes first, its line on stderr before the report on stdout.
    if (machineOutput) {
      writePage();
      announceExport();
    }
    printReport(report, runs, options, flags, io);
    if (!machineOutput) {
      writePage();
      announceExport();
    }
    if (options.keep) describeKept(session.target, keepServer ? session.embedded : undefined, runs, io, machineOutput);
    // On a pass too: a CI log then shows what was checked, not the table alone.
    if (report.verdict) io.err(`emq-race: ${verdictLine(report.verdict)}\n`);
    if (exportMissed !== undefined) io.err(`emq-race: ${exportMissed}\n`);
    const lost = [exportLost, pageLost].filter((line): line is string => line !== undefined);
    for (const line of lost) io.err(`emq-race: ${line}\n`);
    // A failure keeps its own code; a success that lost a file is none (as one whose stdout was lost).
    if ((report.verdict && !report.verdict.pass) || exportMissed !== undefined) return ExitCode.expectationFailed;
    return lost.length > 0 ? ExitCode.outputLost : ExitCode.ok;
  });
}

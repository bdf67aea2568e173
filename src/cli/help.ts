/**
 * What `--help` teaches beyond each flag's line: the flags grouped by what they are for, a line
 * on every mode (from the strategies' own summaries), examples of the intended uses, and the exit
 * codes; the same for every subcommand; `emq-race help [command]`; and help fitted to the
 * terminal's width.
 */
import type { EventEmitter } from 'node:events';
import { Help, Option, type Command } from 'commander';
import { usageError } from '../shared/errors.js';
import { takesValue } from './options.js';
import { STRATEGIES, modeSets, modes as allModes } from '../sweepers/strategies.js';
import type { Io } from '../shared/model.js';
import { nearCommand, outputWidth } from '../shared/text.js';
import { afterHelpText, helpItem, MIN_WIDTH_TO_WRAP, type AfterHelp, type HelpEntry } from './help-text.js';

type Groups = readonly (readonly [string, readonly string[]])[];

const TLS_FLAGS = ['--tls-ca', '--tls-cert', '--tls-key', '--tls-insecure'];

/** The main command's flags by purpose, in the order the groups print. */
const GROUPS: Groups = [
  ['Race:', ['--mode', '--sweepers', '--jobs', '--batch', '--max-stalled', '--stalled-before', '--queue', '--script', '--trials']],
  ['Your queue library:', ['--lib', '--lib-from']],
  ['Server and connection:', ['--url', '--tls-ca', '--tls-cert', '--tls-key', '--tls-insecure', '--server-bin', '--keep']],
  ['Output and CI:', ['--json', '--csv', '--wide', '--html', '--expect', '--version', '--help']],
  [
    'What the race costs:',
    [
      '--workers',
      '--cycles',
      '--observe',
      '--fault',
      '--failover-after',
      '--failover-calls',
      '--wait-replicas',
      '--replica-lag',
      '--sentinel',
      '--allow-server-wide',
    ],
  ],
  ['Replay and shrink:', ['--seed', '--shrink', '--export-test']],
  ['Realism:', ['--pending', '--live', '--probe-delay', '--interval', '--jitter', '--latency', '--latency-jitter', '--max-sweeps']],
  ['Scale:', ['--loop-jobs', '--queues', '--processes', '--server-stats', '--cluster', '--embedded-cluster']],
];

/**
 * Each subcommand's flags by purpose. The grid takes the race's flags (less those it cannot
 * honour), so its groups are the main command's after its own.
 */
const SUBCOMMAND_GROUPS: Readonly<Record<string, Groups>> = {
  grid: [['Grid:', ['--vary', '--yes']], ...GROUPS],
  explain: [
    ['Replay:', ['--mode', '--schedule', '--counter', '--max-stalled', '--stalled-before', '--queue']],
    ['Server and connection:', ['--url', ...TLS_FLAGS, '--server-bin', '--keep']],
    ['Output:', ['--json', '--html', '--svg', '--help']],
  ],
  explore: [
    ['Explore:', ['--mode', '--sweeps', '--max-switches', '--yes', '--max-stalled', '--stalled-before']],
    ['Server and connection:', ['--url', ...TLS_FLAGS, '--server-bin']],
    ['Output:', ['--json', '--html', '--help']],
  ],
  clean: [
    ['What to remove:', ['--queue', '--all', '--yes']],
    ['Server and connection:', ['--url', ...TLS_FLAGS]],
    ['Help:', ['--help']],
  ],
};

/** Where each flag of the main command is listed; a flag missing here would print under "Options:". */
function helpGroupOf(flag: string, groups: Groups = GROUPS): string | undefined {
  return groups.find(([, flags]) => flags.includes(flag))?.[0];
}

/** The exit codes, each with what it means (fitted to the width as the modes are). */
const EXIT_CODES: readonly HelpEntry[] = [
  ['0', 'done (and every --expect held)'],
  ['1', 'an --expect failed, or --export-test found no witness to write'],
  ['2', "bad usage or input, the queue is already in use, or the run would not fit below the server's maxmemory (nothing written)"],
  [
    '3',
    "server unreachable, refused the credentials, a server error, or the server evicted keys, or lost the run's, while the run was live (the run stops at once), or a helper process of the tool died, or the tool's own server could not start (none installed, no TMPDIR folder), or a bug of the tool's (its stack on stderr; after the report too)",
  ],
  ['4', 'done, but stdout could not take the report (a full disk), or an --html, --svg or --export-test file could not be written at the end'],
  ['129', "stopped by SIGHUP (terminal closed), 130 by SIGINT (Ctrl-C), 131 by SIGQUIT (Ctrl-\\), 143 by SIGTERM; the run's keys are removed first"],
];

/** After the exit codes: the object a failure prints under --json (spaced, so a narrow terminal can break it). */
const JSON_FAILURE = `With --json a failure still prints one object on stdout:
  {"version":…, "schema":…, "error":{"exit":CODE, "message":…}}`;

/** The intended uses, each a command and what it is for. */
const EXAMPLES: readonly HelpEntry[] = [
  ['emq-race', 'the race on a private server: the atomic script vs the loop'],
  ['emq-race --mode all --sweepers 8', 'every strategy, eight sweepers each'],
  ['emq-race --lib bullmq --sweepers 8', "your installed BullMQ's own stalled recovery beside two ports of it to round trips (docs/libraries.md)"],
  ['emq-race --script my-sweep.lua --expect clean', 'check your own sweep script: exit 1 if it ever races'],
  ["emq-race --url 'redis://:PASSWORD@staging:6379' --mode atomic", 'your own server (the tool writes only emq:{race-…}: keys and removes them)'],
  ['emq-race --mode atomic --sweepers 8 --expect clean --json > race.json', 'a CI check: the figures as JSON, exit 1 on any anomaly'],
  ['emq-race explain', 'one job, two sweeps: every command and reply, step by step'],
  ['emq-race explore', 'every order of two sweeps on one job, per mode: how many orders break it, and the fewest switches that do'],
  ['emq-race --mode loop --seed 7 --shrink', 'the same race every time; its anomaly shrunk to an explain line (docs/seed.md)'],
  ['emq-race --html race.html', 'also write the report as one self-contained web page'],
  ['emq-race grid --html grid.html', 'sweepers against latency, each cell a full race: a table per mode and a page of charts (about a minute)'],
  ['emq-race help explain', "explain's own flags (and help explore, explore's; help grid, the grid's; help clean, clean's)"],
];

/** Each subcommand's intended uses, a command and what it is for, as the main command's. */
const SUBCOMMAND_EXAMPLES: Readonly<Record<string, readonly HelpEntry[]>> = {
  grid: [
    ['emq-race grid', 'sweepers 1, 2, 4, 8 against 0, 1 and 5 ms of round trip (about a minute)'],
    ['emq-race grid --vary sweepers=1,2,8 --vary latency=0,1 --trials 2', 'two trials per cell: how often each cell raced'],
    ['emq-race grid --html grid.html --json > grid.json', 'the page of charts, and the grid as JSON'],
    ['emq-race grid --mode loop --vary probe-delay=0,1,5', "how a slower liveness check widens the loop's window"],
  ],
  explain: [
    ['emq-race explain', 'the loop and the atomic script, two sweeps on one job each: every command and reply, step by step'],
    [
      'emq-race explain --mode loop --schedule A:detect,A:probe,A:move,B:detect,…',
      "the loop under an order of your own: each sweep's five steps (detect, probe, move, read, write) once each, interleaved as you list them (docs/explain.md)",
    ],
    ['emq-race explain --mode loop --stalled-before 2', 'a job one stall short of --max-stalled: the dead-letter step in the race'],
    ['emq-race explain --counter client', 'only the counter race: read, then write back plus one, from two clients'],
    ['emq-race explain --html replay.html', 'also write the replays as sequence diagrams on one web page'],
    ["emq-race explain --url 'redis://:PASSWORD@staging:6379' --json", 'on your own server (keys under emq:{race-…}: only, removed after), as JSON'],
  ],
  explore: [
    [
      'emq-race explore',
      "every mode: each order of two sweeps' round trips on one job, seeded afresh for each, its outcome judged by the audit (some ten seconds)",
    ],
    ['emq-race explore --mode loop --json', 'the loop alone, as JSON: schedules, executions, schedules per outcome and a witness for each'],
    [
      'emq-race explain --mode loop --schedule A:detect,A:probe,B:detect,…',
      'replay a witness explore printed, step by step (the line is printed whole to be copied)',
    ],
    [
      'emq-race explore --sweeps 3 --max-switches 2',
      'three sweeps, the schedules with at most two preemptions (of the tens of millions in all): the loop sends a healthy job to dead',
    ],
    ['emq-race explore --html explore.html', 'also write each outcome matrix and each witness as a sequence diagram on one web page'],
    [
      'emq-race explore --mode loop,claim --stalled-before 2',
      'a job one stall short of --max-stalled: the dead letter in every order (the loop: some 20,000 executions, minutes)',
    ],
  ],
  clean: [
    ['emq-race clean --url redis://staging:6379 --queue race-1f2e3d4c', 'remove one kept or crashed queue (the name the run printed)'],
    ['emq-race clean --url redis://staging:6379 --all', 'list every queue emq-race owns there, ask, then remove them'],
    ['emq-race clean --url redis://staging:6379 --all --yes', 'the same without asking (a script, a CI job)'],
  ],
};

/** A subcommand's closing lines: where its exit codes are told. */
const SUBCOMMAND_EXIT_CODES = 'Exit codes: those of emq-race itself (emq-race --help lists them).';

/** The modes and mode sets with their lines, from the strategies' own summaries. */
function modeEntries(): HelpEntry[] {
  const modes = allModes().map((mode): HelpEntry => [mode, STRATEGIES[mode].summary]);
  const sets = Object.entries(modeSets()).map(([name, set]): HelpEntry => [name, `${set.join(', ')}${name === 'both' ? ' (the default)' : ''}`]);
  return [...modes, ...sets];
}

/** What each command taught prints after its flags: help-pages.ts reads it too. */
const AFTER = new WeakMap<Command, AfterHelp>();

/** Subcommands' own paragraphs (addHelpNote), which their help prints first after the flags. */
const NOTES = new WeakMap<Command, string>();

/** A paragraph of `command`'s own for its help, after its flags and before its modes and examples. */
export function addHelpNote(command: Command, note: string): void {
  // teachHelp reads the notes once: one added after it would never print.
  if (AFTER.has(command)) throw new Error(`the help note of ${command.name()} comes after teachHelp`);
  NOTES.set(command, note);
}

/** The text after `command`'s flags, as data; undefined for a command teachHelp did not teach. */
export function afterHelpOf(command: Command): AfterHelp | undefined {
  return AFTER.get(command);
}

/** Sorts `command`'s options into `groups` and prints the groups in their order. */
function groupOptions(command: Command, groups: Groups): void {
  for (const option of command.options) {
    const group = helpGroupOf(option.long ?? option.short ?? '', groups);
    if (group) option.helpGroup(group);
  }
  const rank = (group: string): number => {
    const at = groups.findIndex(([heading]) => heading === group);
    return at < 0 ? groups.length : at;
  };
  command.configureHelp({
    // Fitted down to 40 columns: paragraphs wrap there too, and a flag's description goes under it
    // where the column beside leaves it too little room (help-text.ts, which the pages share).
    minWidthToWrap: MIN_WIDTH_TO_WRAP,
    formatItem(term: string, termWidth: number, description: string): string {
      return helpItem(term, termWidth, description, this.helpWidth ?? 80);
    },
    // "(default: false)" on a switch says nothing: it is off unless given.
    optionDescription(option: Option): string {
      return option.defaultValue === false ? option.description : Help.prototype.optionDescription.call(this, option);
    },
    // Groups print in the order above, not in the order the flags were added.
    groupItems<T extends Command | Option>(unsorted: T[], visible: T[], getGroup: (item: T) => string): Map<string, T[]> {
      const sorted = Help.prototype.groupItems.call(this, unsorted, visible, getGroup as (item: Command | Option) => string) as Map<string, T[]>;
      return new Map([...sorted].sort(([a], [b]) => rank(a) - rank(b)));
    },
  });
}

/**
 * Groups the program's flags, adds the modes, examples and exit codes after them, does the same
 * for every subcommand, enables `help [command]`, and fits help to the terminal. Call once every
 * flag and subcommand has been added.
 */
export function teachHelp(program: Command, io: Io): void {
  const width = (): number => outputWidth(io);
  program.addHelpOption(new Option('-h, --help', 'show this help').helpGroup(helpGroupOf('--help') ?? 'Options:'));
  // -V, as well as the -v the version flag has: both are common, and neither means anything else here.
  program.addOption(new Option('-V').hideHelp());
  // The version flag's own listener prints the version and ends the command.
  program.on('option:V', () => (program as unknown as EventEmitter).emit('option:version'));
  groupOptions(program, GROUPS);
  const rootAfter: AfterHelp = { root: true, modes: modeEntries(), examples: EXAMPLES, exitCodes: EXIT_CODES, closing: JSON_FAILURE };
  AFTER.set(program, rootAfter);
  program
    .configureOutput({ getOutHelpWidth: width, getErrHelpWidth: width })
    // Commander's own help command would print the whole help, on stderr, for a name it does not
    // know: this one says so in one line.
    .helpCommand(false)
    .addHelpText('after', () => afterHelpText(rootAfter, width()));
  for (const command of program.commands) {
    command.configureOutput({ getOutHelpWidth: width, getErrHelpWidth: width });
    const name = command.name();
    const groups = SUBCOMMAND_GROUPS[name] ?? [];
    command.addHelpOption(new Option('-h, --help', 'show this help').helpGroup(helpGroupOf('--help', groups) ?? 'Options:'));
    groupOptions(command, groups);
    const examples = SUBCOMMAND_EXAMPLES[name];
    const note = NOTES.get(command);
    const after: AfterHelp = {
      root: false,
      ...(note ? { note } : {}),
      // The grid's --mode takes the race's modes: they are listed as under the main command's help.
      ...(name === 'grid' ? { modes: modeEntries() } : {}),
      ...(examples ? { examples } : {}),
      closing: SUBCOMMAND_EXIT_CODES,
    };
    AFTER.set(command, after);
    command.addHelpText('after', () => afterHelpText(after, width()));
  }
  program
    .command('help [command]')
    .description('show help for a command')
    // Flags beside it (--json, a stray word) change nothing: help is help.
    .allowUnknownOption()
    .allowExcessArguments()
    .action((_name: string | undefined, _flags: unknown, help: Command) => {
      // Flags written before `help` come after it here (see subcommandFirst): skip them and their values.
      const words = help.args;
      const at = words.findIndex((word, i) => !word.startsWith('-') && !(i > 0 && takesValue(program.options, words[i - 1] ?? '')));
      const name = at < 0 ? undefined : words[at];
      if (name === undefined || name === 'help') program.help();
      const command = program.commands.find((c) => c.name() === name);
      if (!command) {
        const names = program.commands.map((c) => c.name()).filter((n) => n !== 'help');
        // Named only when it is a command mistyped: any other word may be a password typed there.
        const word = nearCommand(name, names) ? JSON.stringify(name) : 'that word (not shown: it may be a password)';
        throw usageError(`help: ${word} is not a command; the commands are ${names.join(', ')} (emq-race --help for the race's own flags)`);
      }
      command.help();
    });
}

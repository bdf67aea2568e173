/**
 * What `--help` teaches beyond each flag's line: the flags grouped by what they are for, a line
 * on every mode (from the strategies' own summaries), examples of the intended uses, and the exit
 * codes; `emq-race help [command]`; and help fitted to the terminal's width.
 */
import { Help, Option, type Command } from 'commander';
import { STRATEGIES, modeSets, modes as allModes } from '../sweepers/strategies.js';
import type { Io } from '../model.js';
import { outputWidth, wrap } from '../text.js';

/** The main command's flags by purpose, in the order the groups print. */
const GROUPS: readonly (readonly [string, readonly string[]])[] = [
  ['Race:', ['--mode', '--sweepers', '--jobs', '--batch', '--max-stalled', '--stalled-before', '--queue', '--script', '--trials']],
  ['Server and connection:', ['--url', '--tls-ca', '--tls-cert', '--tls-key', '--tls-insecure', '--server-bin', '--keep']],
  ['Output and CI:', ['--json', '--csv', '--wide', '--html', '--expect', '--version', '--help']],
  ['What the race costs:', ['--workers', '--cycles', '--observe', '--fault', '--allow-server-wide']],
  ['Realism:', ['--pending', '--live', '--probe-delay', '--interval', '--jitter', '--latency', '--latency-jitter', '--max-sweeps']],
  ['Scale:', ['--loop-jobs', '--queues', '--processes', '--server-stats', '--cluster', '--embedded-cluster']],
];

/** Where each flag of the main command is listed; a flag missing here would print under "Options:". */
export function helpGroupOf(flag: string): string | undefined {
  return GROUPS.find(([, flags]) => flags.includes(flag))?.[0];
}

export const EXIT_CODES_HELP = `Exit codes:
  0    done (and every --expect held)
  1    an --expect failed
  2    bad usage or input, the queue is already in use, or the run would not
       fit below the server's maxmemory (nothing written)
  3    server unreachable, refused the credentials, a server error, or the
       server evicted keys while the run was live (the run stops at once)
  129  stopped by SIGHUP (terminal closed), 130 by SIGINT (Ctrl-C),
       143 by SIGTERM; the run's keys are removed first
With --json a failure still prints one object on stdout:
  {"version":…,"schema":…,"error":{"exit":CODE,"message":…}}`;

/** The intended uses, each a command and what it is for. */
const EXAMPLES: readonly (readonly [string, string])[] = [
  ['emq-race', 'the race on a private server: the atomic script vs the loop'],
  ['emq-race --mode all --sweepers 8', 'every strategy, eight sweepers each'],
  ['emq-race --script my-sweep.lua --expect clean', 'check your own sweep script: exit 1 if it ever races'],
  ["emq-race --url 'redis://:PASSWORD@staging:6379' --mode atomic", 'your own server (the tool writes only emq:{race-…}: keys and removes them)'],
  ['emq-race --mode atomic --sweepers 8 --expect clean --json > race.json', 'a CI check: the figures as JSON, exit 1 on any anomaly'],
  ['emq-race explain', 'one job, two sweeps: every command and reply, step by step'],
  ['emq-race --html race.html', 'also write the report as one self-contained web page'],
  ['emq-race grid --html grid.html', 'sweepers against latency, each cell a full race: a table per mode and a page of charts (about a minute)'],
  ['emq-race help explain', "explain's own flags (and help grid, the grid's)"],
];

/** "  name   text" lines, the text wrapped under itself. */
function list(entries: readonly (readonly [string, string])[], width: number, nameWidth: number): string[] {
  const indent = ' '.repeat(2 + nameWidth + 2);
  return entries.flatMap(([name, text]) => {
    const room = Math.max(20, width - indent.length);
    const body = wrap(text, room, '').map((line, i) => (i === 0 && name.length <= nameWidth ? '' : indent) + line);
    // A name too long for its column gets a line of its own, the text below it.
    if (name.length > nameWidth) return [`  ${name}`, ...body];
    const [first = '', ...rest] = body;
    return [`  ${name.padEnd(nameWidth)}  ${first}`, ...rest];
  });
}

function modesHelp(width: number): string {
  const modes = allModes().map((mode): [string, string] => [mode, STRATEGIES[mode].summary]);
  const sets = Object.entries(modeSets()).map(([name, set]): [string, string] => [name, `${set.join(', ')}${name === 'both' ? ' (the default)' : ''}`]);
  return ['Modes (--mode, or a comma list):', ...list([...modes, ...sets], width, 8)].join('\n');
}

function examplesHelp(width: number): string {
  // Commands print whole (they are to be copied); what each is for goes on the next line.
  return ['Examples:', ...EXAMPLES.flatMap(([command, what]) => [`  ${command}`, ...wrap(what, width - 6, '').map((line) => `      ${line}`)])].join('\n');
}

/**
 * Groups the program's flags, adds the modes, examples and exit codes after them, enables
 * `help [command]`, and fits help to the terminal. Call once every flag has been added.
 */
export function teachHelp(program: Command, io: Io): void {
  const width = (): number => outputWidth(io);
  program.addHelpOption(new Option('-h, --help', 'show this help').helpGroup(helpGroupOf('--help') ?? 'Options:'));
  for (const option of program.options) {
    const group = helpGroupOf(option.long ?? option.short ?? '');
    if (group) option.helpGroup(group);
  }
  const rank = (group: string): number => {
    const at = GROUPS.findIndex(([heading]) => heading === group);
    return at < 0 ? GROUPS.length : at;
  };
  program
    .configureHelp({
      // "(default: false)" on a switch says nothing: it is off unless given.
      optionDescription(option: Option): string {
        return option.defaultValue === false ? option.description : Help.prototype.optionDescription.call(this, option);
      },
      // Groups print in the order above, not in the order the flags were added.
      groupItems<T extends Command | Option>(unsorted: T[], visible: T[], getGroup: (item: T) => string): Map<string, T[]> {
        const groups = Help.prototype.groupItems.call(this, unsorted, visible, getGroup as (item: Command | Option) => string) as Map<string, T[]>;
        return new Map([...groups].sort(([a], [b]) => rank(a) - rank(b)));
      },
    })
    .configureOutput({ getOutHelpWidth: width, getErrHelpWidth: width })
    .helpCommand('help [command]', 'show help for a command')
    .addHelpText('after', () => `\n${modesHelp(width())}\n\n${examplesHelp(width())}\n\n${EXIT_CODES_HELP}`);
  for (const command of program.commands) command.configureOutput({ getOutHelpWidth: width, getErrHelpWidth: width });
}

/**
 * Defaults, limits and the validating parsers behind every flag. Each parser throws a usage error
 * that names the flag and what it accepts, so commander's callers never see a NaN.
 */
import type { Command, Option } from 'commander';
import { usageError } from '../shared/errors.js';
import { GIVEN_QUEUE_NAME_MAX, QUEUE_NAME, QUEUE_NAME_MAX } from '../queue/keys.js';
import { STRATEGIES, modeSets, modes as allModes, modesNeeding } from '../sweepers/strategies.js';
import { LIBRARIES, libraryOf } from '../libraries/table.js';
import { checkExpectedModes } from './expect.js';
import { numberLike, plural, shownChoice, shownValue } from '../shared/text.js';
import { type LibraryName, type Mode, PENDING_KINDS, type PendingKind, type LatencyAsked, type RaceOptions } from '../shared/model.js';

/** The jobs a mode runs on: --jobs, or for a round-trip mode the smaller of --jobs and --loop-jobs. */
export function jobsForMode(mode: Mode, jobs: number, loopJobs: number): number {
  return STRATEGIES[mode].roundTrips ? Math.min(jobs, loopJobs) : jobs;
}

/**
 * A whole number within limits, or a usage error naming the flag. The value is read as typed:
 * spaces around it (`--jobs ' 5'`, a quoted variable with a stray blank) are refused, not
 * trimmed, since a value the tool silently reads otherwise than it was written is a slip it
 * should show.
 */
export function parseIntFlag(flag: string, limit: { min: number; max: number }, raw: string): number {
  if (!/^[+-]?\d+$/.test(raw)) {
    throw usageError(`${flag}: ${shownValue(raw, numberLike(raw))} is not a whole number; expected ${limit.min} to ${limit.max}`);
  }
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < limit.min || value > limit.max) {
    throw usageError(`${flag}: ${raw} is out of range; expected ${limit.min} to ${limit.max}`);
  }
  return value;
}

/** A commander argument parser for an integer flag. */
export const intFlag =
  (flag: string, limit: { min: number; max: number }) =>
  (raw: string): number =>
    parseIntFlag(flag, limit, raw);

/** Milliseconds within limits, fractions allowed (0.5), or a usage error naming the flag; read as typed, as parseIntFlag reads. */
function parseMsFlag(flag: string, limit: { min: number; max: number }, raw: string, why?: string): number {
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(raw)) {
    throw usageError(
      `${flag}: ${shownValue(raw, numberLike(raw))} is not a number of milliseconds; expected ${limit.min} to ${limit.max} (fractions allowed, as in 0.5)`,
    );
  }
  const value = Number(raw);
  if (value < limit.min || value > limit.max) {
    throw usageError(`${flag}: ${raw} is out of range; expected ${limit.min} to ${limit.max}${value > limit.max && why ? ` (${why})` : ''}`);
  }
  return value;
}

/** A commander argument parser for a milliseconds flag. */
export const msFlag =
  (flag: string, limit: { min: number; max: number }, why?: string) =>
  (raw: string): number =>
    parseMsFlag(flag, limit, raw, why);

/** Why --latency and --latency-jitter stop at their maximum: said when a value above it is refused. */
export const LATENCY_CEILING = 'a longer round trip comes near the 10 s a connection waits for a reply, and the server would be counted as stopped';

/**
 * The latency asked for with --latency (and --latency-jitter), or undefined for none. The proxy
 * stands for one server: a cluster, whose client is sent on to every node, is refused.
 */
export function latencyAsked(flags: { latency?: number; latencyJitter?: number; cluster?: boolean; embeddedCluster?: number }): LatencyAsked | undefined {
  if (flags.latency === undefined) {
    if (flags.latencyJitter !== undefined) throw usageError('--latency-jitter: needs --latency, the delay it varies');
    return undefined;
  }
  const cluster = flags.cluster ? '--cluster' : flags.embeddedCluster !== undefined ? '--embedded-cluster' : undefined;
  if (cluster) throw usageError(`--latency: not with ${cluster}; the latency proxy stands for one server, and a cluster sends its clients on to every node`);
  return { delayMs: flags.latency, jitterMs: flags.latencyJitter ?? 0 };
}

/**
 * An empty item of a --mode list (`loop,,claim`, `atomic,`, or nothing at all) is said as that,
 * not as a mode unknown whose name (empty) the error could not show.
 */
export function refuseEmptyMode(raw: string, part: string): void {
  if (raw.trim() === '') throw usageError('--mode: no mode given; name one, or several separated by commas, as in atomic,loop');
  if (part === '') throw usageError('--mode: an empty mode in the list; separate modes with single commas, as in atomic,loop');
}

export function parseModes(raw: string): Mode[] {
  const sets: Readonly<Record<string, readonly Mode[]>> = modeSets();
  // Own names only: `constructor` or `toString` is a mistyped mode, not a set an object inherits.
  const setNamed = (name: string): readonly Mode[] | undefined => (Object.hasOwn(sets, name) ? sets[name] : undefined);
  const set = setNamed(raw.trim());
  if (set) return [...set];
  const known = allModes();
  const modes: Mode[] = [];
  for (const part of raw.split(',').map((p) => p.trim())) {
    refuseEmptyMode(raw, part);
    // A set's name is a whole --mode of its own: in a list it is refused as such, not as a typo.
    const named = setNamed(part);
    if (named) throw usageError(`--mode: ${part} stands alone (--mode ${part}); in a list, name the modes themselves, as in ${named.join(',')}`);
    if (!(known as readonly string[]).includes(part)) {
      const choices = [...known, ...Object.keys(sets)];
      throw usageError(`--mode: ${shownChoice(part, choices)} is not a mode; expected one of ${choices.join(', ')}`);
    }
    if (!modes.includes(part as Mode)) modes.push(part as Mode);
  }
  return modes;
}

/** --script alone runs the mode that needs a script file; with --mode, it joins the modes given. */
export function modesWithScript(modes: readonly Mode[], script: string | undefined, modeGiven: boolean): Mode[] {
  if (script === undefined) return [...modes];
  const scripted = modesNeeding('script-file');
  if (!modeGiven) return scripted;
  return [...modes, ...scripted.filter((mode) => !modes.includes(mode))];
}

/**
 * --lib alone runs the library's modes (and the script mode, when --script asked for it); with
 * --mode, they join the modes given, unless --mode already names some of them (then only those run).
 */
export function modesWithLibrary(modes: readonly Mode[], lib: LibraryName | undefined, modeGiven: boolean): Mode[] {
  if (lib === undefined) return [...modes];
  const own = LIBRARIES[lib].modes.map((m) => m.mode);
  if (!modeGiven) return [...own, ...modes.filter((mode) => modesNeeding('script-file').includes(mode))];
  if (modes.some((mode) => own.includes(mode))) return [...modes];
  return [...modes, ...own];
}

/**
 * The library the run needs and where it is found: --lib, or the library of a mode --mode names;
 * --lib-from needs one of them. Two libraries at once are refused.
 */
export function libraryAsked(flags: {
  mode: readonly Mode[];
  lib?: LibraryName | undefined;
  libFrom?: string | undefined;
  modeGiven: boolean;
}): { name: LibraryName; from: string; asked: string } | undefined {
  const modes = modesWithLibrary(flags.mode, flags.lib, flags.modeGiven);
  const named = [...new Set(modes.map(libraryOf).filter((name): name is LibraryName => name !== undefined))];
  if (named.length > 1) throw usageError(`--mode: the modes of ${named.join(' and ')} run one library at a time; pick one`);
  const name = named[0];
  if (name === undefined) {
    if (flags.libFrom !== undefined) throw usageError('--lib-from: needs --lib NAME (or --mode with a library mode), the library to find there');
    return undefined;
  }
  // A refusal of the library names the flag the user gave: --lib, or the --mode that named its modes.
  const asked = flags.lib !== undefined ? `--lib ${flags.lib}` : `--mode ${modes.filter((mode) => libraryOf(mode) === name).join(',')}`;
  return { name, from: flags.libFrom ?? '.', asked };
}

/**
 * --fault lapsed-lock needs a library whose workers hold locks, and every mode of the run its own:
 * the tool's own modes have no workers' locks, node-resque's workers none per job.
 */
function checkLapsedLock(options: RaceOptions): void {
  if (!options.consequences?.faults.includes('lapsed-lock')) return;
  const library = options.library;
  if (!library) {
    throw usageError(
      "--fault lapsed-lock: only with a queue library whose workers hold locks (--lib bullmq): the tool's own modes have no workers whose locks could lapse",
    );
  }
  if (!LIBRARIES[library.name].faults?.includes('lapsed-lock')) {
    throw usageError(`--fault lapsed-lock: ${library.name}'s workers hold no lock per job that could lapse; it runs with --lib bullmq`);
  }
  const other = options.modes.find((mode) => libraryOf(mode) !== library.name);
  if (other !== undefined) throw usageError(`--fault lapsed-lock: ${other} is not a ${library.name} mode; run the ${library.name} modes alone with it`);
}

/** Flags a library's modes do not take, with what each would have needed. */
function checkLibraryOptions(options: RaceOptions): void {
  checkLapsedLock(options);
  const library = options.library;
  if (!library) return;
  const c = options.consequences;
  const takes = LIBRARIES[library.name].faults ?? [];
  const refused = [
    c?.faults.some((fault) => !takes.includes(fault)) ? '--fault' : undefined,
    c && c.workers > 0 ? '--workers' : undefined,
    c && c.cycles > 1 ? '--cycles' : undefined,
    c?.observe ? '--observe' : undefined,
    options.processes ? '--processes' : undefined,
    options.pending === 'zset' ? '--pending zset' : undefined,
    options.stalledBefore > 0 ? '--stalled-before' : undefined,
    options.live !== undefined ? '--live' : undefined,
  ].filter((flag): flag is string => flag !== undefined);
  const first = refused[0];
  if (first !== undefined) {
    throw usageError(
      `${first}: not with the ${library.name} modes, which race the library's own recovery on the stalled jobs its own code made; leave ${refused.length > 1 ? `${refused.join(', ')} out` : 'it out'}, or run the library's modes apart`,
    );
  }
}

/**
 * Flags a library's run never reads, and why: refused when given on the command line and no mode
 * of the tool's own runs beside the library's (which would read them).
 */
const LIBRARY_RUN_IGNORES: readonly (readonly [flag: string, why: string])[] = [
  ['--batch', 'a check of the library recovers every stalled job it finds, in no batch of the tool'],
  ['--max-sweeps', 'each caller checks until a check moves nothing, under a bound of its own'],
  ['--interval', "the callers' pace is the library run's own"],
  ['--jitter', "the callers' pace is the library run's own"],
  ['--probe-delay', "it paces the tool's loop's probe, which a library's check does not make"],
  ['--server-stats', "the server's latency histogram is read around the tool's own sweep calls, not a library's"],
];

/**
 * Flags given on the command line (`given`, long names) that a run of only a library's modes
 * would accept and ignore: a usage error naming the first and why it means nothing there.
 */
export function checkLibraryFlagsGiven(options: Pick<RaceOptions, 'library' | 'modes'>, given: readonly string[]): void {
  const library = options.library;
  if (!library || options.modes.some((mode) => libraryOf(mode) === undefined)) return;
  const { noStallLimit } = LIBRARIES[library.name];
  const ignored = [...LIBRARY_RUN_IGNORES, ...(noStallLimit ? [['--max-stalled', noStallLimit] as const] : [])].filter(([flag]) => given.includes(flag));
  const first = ignored[0];
  if (first === undefined) return;
  const flags = ignored.map(([flag]) => flag);
  throw usageError(
    `${first[0]}: the ${library.name} modes do not use it (${first[1]}); leave ${flags.length > 1 ? `${flags.join(', ')} out, or run the tool's own modes with them` : "it out, or run the tool's own modes with it"}`,
  );
}

/**
 * A commander parser for `--url`: given twice is a usage error, not the last one silently used, since
 * the two name two servers and the tool writes to the one it picks. Neither value is shown: each may
 * hold a password.
 */
export function urlOnce(raw: string, previous: string | undefined): string {
  if (previous !== undefined) throw usageError('--url: given twice; name the one server the command should use');
  return raw;
}

/** Flags that gather what each use gives (axes, faults, expectation terms): given again, they add. */
const GATHERING = ['--vary', '--fault', '--expect'];

/**
 * A flag that takes a value, given twice, is a usage error rather than the last value silently
 * used: `--jobs 100 … --jobs 1000` in a script is a slip, and the run's figures would be for what
 * only one of them meant. Neither value is shown (either may be a password put in the wrong
 * place). Switches (`--json`) and the flags that gather their values stay repeatable; `--url`
 * says so itself (urlOnce). For `command` and every subcommand of it.
 */
export function refuseRepeatedValues(command: Command): void {
  for (const option of command.options) {
    const flag = option.long;
    if (!flag || !(option.required || option.optional) || GATHERING.includes(flag) || flag === '--url') continue;
    let given = false;
    command.on(`option:${option.name()}`, () => {
      if (given) throw usageError(`${flag}: given twice; give it once${flag === '--mode' ? ' (several modes go in one list: --mode atomic,loop)' : ''}`);
      given = true;
    });
  }
  for (const sub of command.commands) refuseRepeatedValues(sub);
}

/** The option of `options` that `word` names, by its long or its short flag. */
function optionNamed(options: readonly Option[], word: string): Option | undefined {
  return options.find((o) => o.long === word || o.short === word);
}

/** Options a command registers only to refuse them in a line of its own (grid's single-run flags): flags it does not take. */
const REFUSING = new WeakSet<Option>();

/** `option`, marked as one its command refuses: no command that refuses a flag is named as one that takes it. */
export function refusing(option: Option): Option {
  REFUSING.add(option);
  return option;
}

/** Whether `command` takes the flag `word`: it has it, and not only to refuse it. */
export function takesFlag(command: Command, word: string): boolean {
  const option = optionNamed(command.options, word);
  return option !== undefined && !REFUSING.has(option);
}

/** Whether `word` names an option of `options` that takes a value (so the next word is that value). */
export function takesValue(options: readonly Option[], word: string): boolean {
  const option = optionNamed(options, word);
  return Boolean(option?.required || option?.optional);
}

/** Whether a word (what comes before any `=` in it) names a flag of the program or of one of its commands. */
export function flagOfTheTool(program: Command): (word: string) => boolean {
  const names = new Set(['--help', '-h', ...[program, ...program.commands].flatMap((command) => command.options.flatMap((o) => [o.long, o.short]))]);
  return (word) => names.has(word.split('=')[0] ?? '');
}

/**
 * A flag that takes a value, followed by another flag of the tool (`--jobs --sweepers 4`, `--url
 * --json`), is a value left out. Commander would hand the second flag to the first as its value,
 * whose parser could then only say the value is wrong without showing it (it might have been a
 * password), and the word after it would stand alone as a stray argument. Said here instead, as
 * the one line, before commander parses anything: the second flag is named without whatever
 * follows an `=` in it. `args` is the command line as parsed (after subcommandFirst), from argv[2].
 */
export function refuseFlagsAsValues(program: Command, args: readonly string[]): void {
  const isFlag = flagOfTheTool(program);
  const command = program.commands.find((sub) => sub.name() === args[0]) ?? program;
  for (let at = command === program ? 0 : 1; at < args.length; at++) {
    const word = args[at] ?? '';
    if (word === '--') return;
    const option = optionNamed(command.options, word);
    // An optional value is taken only when it does not start with '-': nothing to refuse.
    if (!option?.required) continue;
    const next = args[at + 1] ?? '';
    // The grid's axis names its flag with or without the dashes: `--vary --latency=0,1` is a value.
    if (option.long === '--vary' && next.includes('=')) {
      at++;
      continue;
    }
    const name = next.split('=')[0] ?? '';
    if (isFlag(name)) throw usageError(`${word}: no value given: the flag ${name} follows it; give the value right after ${word} (${option.flags})`);
    at++;
  }
}

export function parsePendingKind(raw: string): PendingKind {
  if (!(PENDING_KINDS as readonly string[]).includes(raw)) {
    throw usageError(`--pending: ${shownChoice(raw, PENDING_KINDS)} is not a pending type; expected list or zset`);
  }
  return raw as PendingKind;
}

export function parseQueueName(raw: string): string {
  return queueNameUpTo(raw, GIVEN_QUEUE_NAME_MAX);
}

/**
 * `clean --queue`: any name a run may have given its queues, the suffixes of its modes, trials and
 * --queues included, so that the `clean` line a kept run prints for each is taken as printed.
 */
export function parseCleanQueueName(raw: string): string {
  return queueNameUpTo(raw, QUEUE_NAME_MAX);
}

function queueNameUpTo(raw: string, max: number): string {
  // `--queue --help` would otherwise run on a queue named "--help": a value that looks like an
  // option is a missing value.
  if (raw.startsWith('-')) {
    throw usageError(
      `--queue: ${shownValue(raw, /^--?[a-z][a-z-]{0,23}$/i.test(raw))} looks like an option, not a queue name; give the name right after --queue (it may not start with '-')`,
    );
  }
  // The name itself is not repeated (a password typed here would be): what is wrong with it is.
  if (raw.length === 0 || raw.length > max)
    throw usageError(`--queue: a queue name of ${plural(raw.length, 'character')}; use 1 to ${max} letters, digits, '-' or '_'`);
  if (!QUEUE_NAME.test(raw)) {
    const named = [...raw.replace(/[A-Za-z0-9_-]/g, '')].map((c) => (/\s/.test(c) ? 'a space' : /[\x00-\x1f\x7f]/.test(c) ? 'a control character' : `'${c}'`));
    throw usageError(
      `--queue: a queue name may not hold ${[...new Set(named)].join(', ')}; use 1 to ${max} letters, digits, '-' or '_' (no braces, glob characters or spaces)`,
    );
  }
  return raw;
}

/** Checks that concern several flags at once. */
export function checkRaceOptions(options: RaceOptions): void {
  if (options.stalledBefore >= options.maxStalled) {
    throw usageError(
      `--stalled-before: ${options.stalledBefore} must be below --max-stalled (${options.maxStalled}): at most ${options.maxStalled - 1}, where the first recovery already dead-letters the job`,
    );
  }
  if (options.script === undefined && options.modes.some((mode) => modesNeeding('script-file').includes(mode))) {
    throw usageError('--mode script: needs --script FILE.lua, the sweep script to test');
  }
  if (options.csv && options.json) {
    throw usageError('--csv and --json: pick one output format');
  }
  if (options.expect) checkExpectedModes(options.expect, options.modes);
  checkLibraryOptions(options);
}

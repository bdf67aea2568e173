/**
 * Text for people: how wide a line may be (the terminal's own width when the output is a terminal,
 * else $COLUMNS, what a user or a CI job sets to ask for a width, else 80), text fitted to that
 * width, and counts in words. Every table, sentence and progress line the tool prints for people
 * is fitted here.
 */
import type { Io } from './model.js';

const DEFAULT_WIDTH = 80;

/** Fewer columns than this cannot hold a figure beside its name; below it, lines may run long. */
const NARROWEST = 40;

function widthFrom(columns: number | undefined, env: NodeJS.ProcessEnv): number {
  if (columns !== undefined && columns > 0) return Math.max(NARROWEST, columns);
  const asked = Number(env.COLUMNS);
  if (Number.isInteger(asked) && asked > 0) return Math.max(NARROWEST, asked);
  return DEFAULT_WIDTH;
}

/** The width of stdout: the table, the sentences under it, explain's transcript. */
export function outputWidth(io: Pick<Io, 'env' | 'stdoutColumns'>): number {
  return widthFrom(io.stdoutColumns, io.env);
}

/** The width of stderr: the progress line. */
export function errorWidth(io: Pick<Io, 'env' | 'stderrColumns'>): number {
  return widthFrom(io.stderrColumns, io.env);
}

// Colour codes (SGR) and the line-editing codes the progress line uses: they take no room.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** The columns `text` takes on a terminal (one line, colour codes not counted). */
export function visibleLength(text: string): number {
  return [...stripAnsi(text)].length;
}

/** Cuts a plain line to `width` columns, ending in '…' where it was cut. */
export function trimToWidth(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

/** A unit that follows a number across a space, which a line is not broken before. */
const UNIT_AFTER = /^ (ms|µs|s|MB|KB|GB|B|jobs\/s)(?![\w/])/;

/**
 * Breaks a plain line into pieces of at most `width` characters, at spaces where it can, and not
 * between a number and its unit where another space will do; every piece after the first starts
 * with `indent`.
 */
export function wrap(line: string, width: number, indent = '  '): string[] {
  const out: string[] = [];
  let rest = line;
  let lead = '';
  while (lead.length + rest.length > width) {
    const room = width - lead.length;
    const space = rest.lastIndexOf(' ', room);
    let cut = space;
    // A number keeps its unit on its line (`4 ms`, `20.9 MB`): the break goes to the space before.
    while (cut > 0 && /\d$/.test(rest.slice(0, cut)) && UNIT_AFTER.test(rest.slice(cut))) cut = rest.lastIndexOf(' ', cut - 1);
    if (cut <= 0) cut = space;
    if (cut <= 0) cut = room;
    out.push(lead + rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^ /, '');
    lead = indent;
  }
  out.push(lead + rest);
  return out;
}

/** Each line of `text` wrapped to `width`, continuation lines indented like the line they continue plus two. */
export function wrapLines(text: string, width: number): string {
  return text
    .split('\n')
    .flatMap((line) => wrap(line, width, `${/^ */.exec(line)?.[0] ?? ''}  `))
    .join('\n');
}

/** Before each group of three digits that ends a run of digits: where en-US puts its commas. */
const THOUSANDS = /\B(?=(\d{3})+(?!\d))/g;

/**
 * 1234567 → "1,234,567"; other text as it is. Grouped here, not by toLocaleString: its first call
 * loads the locale data, about 40 ms of CPU, which was most of what `--help` cost.
 */
export function groupThousands(value: number | string): string {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value).toString().replace(THOUSANDS, ',') : String(value);
  return /^\d+$/.test(value) ? groupThousands(Number(value)) : value;
}

/**
 * A share as a whole percentage, never rounded to the ends it is not at: a share above 0 but below
 * half a percent is "<1%", one below 1 but above 99.5% is ">99%", so that one trial in 201 that
 * reproduced is not said as 0% (nor 200 in 201 as 100%).
 */
export function percent(share: number): string {
  if (share > 0 && share < 0.005) return '<1%';
  if (share < 1 && share >= 0.995) return '>99%';
  return `${Math.round(share * 100)}%`;
}

/**
 * A figure of a summary, grouped like a count: a whole number as groupThousands gives it, anything
 * else (the median of an even number of trials) with one decimal, its whole part grouped.
 */
export function groupFigure(value: number): string {
  if (Number.isInteger(value)) return groupThousands(value);
  const [whole = '0', fraction = '0'] = Math.abs(value).toFixed(1).split('.');
  return `${value < 0 ? '-' : ''}${groupThousands(whole)}.${fraction}`;
}

/** "1 move", "2 moves"; `many` for a plural that is not the singular plus s. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${groupThousands(n)} ${n === 1 ? one : many}`;
}

/** A few names in a sentence: "a", "a and b", "a, b and c", "a, b, c and 2 more". */
export function fewNamed(names: readonly string[], shown = 3): string {
  const listed = names.slice(0, shown);
  if (names.length > shown) listed.push(`${names.length - shown} more`);
  return listed.length <= 1 ? (listed[0] ?? '') : `${listed.slice(0, -1).join(', ')} and ${listed.at(-1)}`;
}

/** The least and the most of `values` as "low–high", one figure when both read the same; "" for none. */
export function rangeText(values: readonly number[], format: (n: number) => string = String): string {
  if (values.length === 0) return '';
  const [low, high] = [format(Math.min(...values)), format(Math.max(...values))];
  return low === high ? low : `${low}–${high}`;
}

/** Whether `word` is a command name mistyped: letters and dashes, at most two edits from one. */
export function nearCommand(word: string, names: readonly string[]): boolean {
  return /^[a-z][a-z-]{0,15}$/i.test(word) && names.some((name) => editDistance(word.toLowerCase(), name) <= 2);
}

/** How an error names a refused value it does not repeat. */
export const VALUE_NOT_SHOWN = 'the value given (not shown: it may be a password)';

/**
 * A refused value as its error names it: quoted when it is plainly a mistyped value of the kind
 * the flag takes (`plausible`) or a short lowercase word (`fast`, `hash`), else not repeated,
 * since a password typed into the wrong flag, or a URL with its password given to a flag that
 * takes none, would be printed back.
 */
export function shownValue(raw: string, plausible = false): string {
  return showable(raw, plausible) ? JSON.stringify(raw) : VALUE_NOT_SHOWN;
}

/** A refused choice as its error names it: shown when it is within reach of one of `choices` (nearWord). */
export function shownChoice(raw: string, choices: readonly string[]): string {
  return shownValue(raw, nearWord(raw, choices));
}

/** Whether shownValue repeats `raw`. */
export function showable(raw: string, plausible = false): boolean {
  // An empty value (`--vary=`) hides nothing.
  return plausible || raw.trim() === '' || /^[a-z][a-z-]{0,11}$/.test(raw);
}

/** A number mistyped: digits, signs and separators with at most two letters (`10k`, `1e6`, `5ms`, `1,000`). */
export function numberLike(raw: string): boolean {
  return raw.length <= 16 && /^[\s\d+\-.,_]*[a-z]{0,2}[\s\d+\-.,_]*$/i.test(raw);
}

/** A choice mistyped: one word, at most two edits from one of `words`, or the start of one. */
export function nearWord(raw: string, words: readonly string[]): boolean {
  const word = raw.trim().toLowerCase();
  return (
    /^[a-z0-9][a-z0-9_-]{0,23}$/.test(word) &&
    words.some((choice) => editDistance(word, choice.toLowerCase()) <= 2 || (word.length >= 3 && choice.toLowerCase().startsWith(word)))
  );
}

/** Levenshtein distance: the fewest insertions, deletions and substitutions from `a` to `b`. Pure. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length] ?? 0;
}

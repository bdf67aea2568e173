/**
 * The samples of output in README.md and docs/: where they are, how one is rewritten from a live
 * run, and the shape two outputs are compared by. A sample sits under a marker
 *
 *     <!-- sample: ARGS -->                    stdout and stderr as a terminal shows them
 *     <!-- sample: ARGS | slow -->             left out by the test (too dear for the suite); the script still makes it
 *     <!-- sample: ARGS | exit -->             followed by `$ echo $?` and the exit code
 *     <!-- sample: ARGS | jq FILTER… -->       stdout through `jq FILTER…` (stderr as it is); with `exit`, jq's code
 *     <!-- sample: ARGS | acl -->              on a server of its own, `$URL` in ARGS its URL, as a user made from
 *                                              the documented ACL line (`acl=-CMD`: that line less CMD)
 *     <!-- sample: ARGS | foreign=QUEUE -->    on a server of its own holding a key of somebody else's in QUEUE
 *
 * options combined with commas (`| acl=-eval, foreign=race-payments, exit`), after the `jq` part
 * when there is one, followed by an indented block whose first line is `$ emq-race ARGS` (and
 * ` | jq FILTER…`). `$URL` alone asks for a server of its own too. `scripts/samples.mjs` rewrites
 * the blocks; test/server/docs-samples.test.ts checks their shape against live runs.
 * test/helpers/sample-setups.ts does what the options ask; this file is pure, but for `writeSampleFiles`.
 */
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FORGETS_ZREM, IGNORES_DEADLINE } from './scripts.js';

export interface Sample {
  /** The file, as given to `findSamples`. */
  readonly file: string;
  /** The marker's line, 0-based. */
  readonly line: number;
  readonly args: readonly string[];
  readonly slow: boolean;
  readonly exit: boolean;
  /** The arguments of the `jq` the output is piped through, as the block shows them and as jq takes them. */
  readonly jq?: { readonly text: string; readonly args: readonly string[] };
  readonly setup: SampleSetup;
  /** The block's indentation: four spaces, more in a list item. */
  readonly indent: string;
  /** The block's lines, its indentation taken off, blank lines inside it kept. */
  readonly block: readonly string[];
  /** The lines the block spans after the marker. */
  readonly blockLength: number;
}

/** What a sample needs before its run: a server of its own, an ACL user on it, a foreign queue on it. */
export interface SampleSetup {
  readonly server: boolean;
  /** The documented ACL line (`''`), or that line less one command (`'-zadd'`). */
  readonly acl?: string;
  readonly foreign?: string;
}

// Indented like the list item it stands in, its block four spaces further in.
const MARKER = /^( *)<!-- sample: (.*) -->$/;
const OPTIONS = new Set(['slow', 'exit', 'acl', 'foreign']);
const INDENT = '    ';

/** Words as a POSIX shell splits them, for the quoting a jq filter needs: single quotes, double quotes, bare words. */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  const pattern = /'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+)/g;
  let current: string | undefined;
  let lastEnd = 0;
  for (const match of text.matchAll(pattern)) {
    const part = match[1] ?? match[2]?.replace(/\\(.)/g, '$1') ?? match[3] ?? '';
    const start = match.index ?? 0;
    // Parts with no space between them are one word ('a'"b"c).
    if (current !== undefined && start === lastEnd) current += part;
    else {
      if (current !== undefined) words.push(current);
      current = part;
    }
    lastEnd = start + match[0].length;
  }
  if (current !== undefined) words.push(current);
  return words;
}

// The marker's text: ARGS, then maybe `| jq …`, then maybe `| options`.
function parseMarker(file: string, line: number, body: string) {
  // The jq filter may hold ` | ` of its own: options after it are told apart by their form (`slow, acl=-eval`).
  const pipeAt = body.indexOf(' | jq ');
  const head = pipeAt < 0 ? body : body.slice(0, pipeAt);
  let jqPart = pipeAt < 0 ? undefined : body.slice(pipeAt + ' | '.length);
  let optionText = '';
  if (jqPart === undefined) {
    const at = head.indexOf(' | ');
    if (at >= 0) optionText = head.slice(at + ' | '.length);
  } else {
    const options = / \| ([a-z]+(?:=\S*)?(?:, *[a-z]+(?:=\S*)?)*)$/.exec(jqPart);
    if (options) {
      optionText = options[1] ?? '';
      jqPart = jqPart.slice(0, options.index);
    }
  }
  const argsText = jqPart === undefined && optionText ? head.slice(0, head.indexOf(' | ')) : head;
  const options = optionText
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      const [name = '', value] = o.split(/=(.*)/);
      return { name, value };
    });
  const unknown = options.filter((o) => !OPTIONS.has(o.name));
  if (unknown.length > 0)
    throw new Error(`${file}:${line + 1}: unknown sample option ${unknown.map((o) => o.name).join(', ')} (known: ${[...OPTIONS].join(', ')})`);
  const value = (name: string) => options.find((o) => o.name === name);
  const args = argsText.trim().split(/\s+/);
  const acl = value('acl');
  const foreign = value('foreign')?.value;
  if (value('foreign') && !foreign) throw new Error(`${file}:${line + 1}: foreign= names the queue that holds somebody else's key`);
  const setup: SampleSetup = {
    server: acl !== undefined || foreign !== undefined || args.some((a) => a.includes('$URL')),
    ...(acl ? { acl: acl.value ?? '' } : {}),
    ...(foreign ? { foreign } : {}),
  };
  const jqText = jqPart?.slice('jq '.length);
  return {
    args,
    slow: Boolean(value('slow')),
    exit: Boolean(value('exit')),
    setup,
    ...(jqText !== undefined ? { jq: { text: jqText, args: shellWords(jqText) } } : {}),
  };
}

/** A sample's command line as its block's first line shows it. */
export function commandLine(sample: Pick<Sample, 'args' | 'jq'>): string {
  return `$ emq-race ${sample.args.join(' ')}${sample.jq ? ` | jq ${sample.jq.text}` : ''}`;
}

/**
 * The README's length limit: a newcomer reads it in minutes. The docs test holds the README to it,
 * and `npm run samples` checks it after making the README's samples again, since a sample's length
 * (the worked example under the table) varies from run to run.
 */
export const MAX_README_LINES = 300;

/** A file's lines as the limit counts them: a final newline ends the last line, it starts none. */
export function lineCount(text: string): number {
  return text.replace(/\n$/, '').split('\n').length;
}

/** Every sample in one Markdown text; a marker with no block under it, or an unknown option, throws. */
export function findSamples(file: string, text: string): Sample[] {
  const lines = text.split('\n');
  const samples: Sample[] = [];
  lines.forEach((line, index) => {
    const marker = MARKER.exec(line);
    if (!marker) return;
    const indent = `${marker[1] ?? ''}${INDENT}`;
    const parsed = parseMarker(file, index, marker[2] ?? '');
    // The block: indented or blank lines, up to the first that is neither; blank lines at its end are not its own.
    let end = index + 1;
    while (end < lines.length && (lines[end]?.startsWith(indent) || lines[end]?.trim() === '')) end++;
    while (end > index + 1 && lines[end - 1]?.trim() === '') end--;
    const block = lines.slice(index + 1, end).map((l) => l.slice(indent.length));
    const command = commandLine(parsed);
    if (block[0] !== command) throw new Error(`${file}:${index + 1}: the block under the marker must start with "${command}"`);
    samples.push({ file, line: index, ...parsed, indent, block, blockLength: end - index - 1 });
  });
  return samples;
}

/** A sample's block as the docs show it: the command, what it printed, and with `exit` its exit code. */
export function sampleBlock(sample: Pick<Sample, 'args' | 'exit' | 'jq'>, output: string, code: number | null): string[] {
  const lines = [commandLine(sample), ...output.replace(/\n+$/, '').split('\n')];
  if (sample.exit) lines.push('$ echo $?', String(code));
  return lines;
}

/** The text with each sample's block replaced by the one `blocks` holds for it (by marker line). */
export function replaceSamples(text: string, samples: readonly Sample[], blocks: ReadonlyMap<number, readonly string[]>): string {
  const lines = text.split('\n');
  // From the last sample up, so that the earlier ones' line numbers still hold.
  for (const sample of [...samples].sort((a, b) => b.line - a.line)) {
    const block = blocks.get(sample.line);
    if (!block) continue;
    lines.splice(sample.line + 1, sample.blockLength, ...block.map((l) => (l === '' ? '' : `${sample.indent}${l}`)));
  }
  return lines.join('\n');
}

// Figures with their units and separators: 1,000 · 12.5 · 250ms · 85% · 48.0k/s · 1.12–1.18 · 3×.
const NUMBER = /\d[\d,]*(?:\.\d+)?(?:(?:ms|s|%|KB|MB|GB|B|k|M|×)(?![A-Za-z]))?/g;
// The same sentence with one count or another: "1 job" and "3 jobs", "was" and "were", "twice" and "3 times".
const WORDS: readonly [RegExp, string][] = [
  [/\btwice\b/g, 'N times'],
  [/\bwere\b/g, 'was'],
  [/\bare\b/g, 'is'],
  [/\b([a-z]{3,}?)(?:ies|s)\b/g, '$1'],
];

/** One line as its shape: data-dependent names and every number replaced, runs of spaces and of rules collapsed. */
export function lineShape(line: string): string {
  let shape = line
    .replace(/\b(?:redis|valkey) \d+\.\d+\.\d+/g, 'SERVER')
    .replace(/\brace-[0-9a-f]{8}\b/g, 'race-Q')
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, 'HOST')
    .replace(/\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/g, 'HEX')
    .replace(/\bpid \d+/g, 'pid N')
    .replace(NUMBER, 'N')
    .replace(/N(?:[–-]N)+/g, 'N')
    .replace(/[─━]+/g, '─')
    // Two sweeps sent at one moment run in either order: which column a step stands in is the server's choice.
    .replace(/\b([AB]) then ([AB])\b/g, 'A then B')
    .replace(/[│┃]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  for (const [pattern, replacement] of WORDS) shape = shape.replace(pattern, replacement);
  return shape;
}

/**
 * An output as the list of its shapes. Lines wrapped to the width are joined to the line they
 * continue (a number's width moves the wrap), so a paragraph is one entry; a sentence made of
 * clauses (`mode (…): clause, clause, clause.`) is split into them. The example job's lines
 * (which commands, in which order, is the race's own) are left out: its heading stands for it,
 * and may be on one side only, as whether a logged job was recovered twice is the race's own too.
 */
export function outputShape(output: string): string[] {
  const joined: string[] = [];
  let inExample = false;
  let inSubItem = false;
  for (const raw of output.replace(/\n+$/, '').split('\n')) {
    if (raw.startsWith('Example: ')) {
      inExample = true;
      inSubItem = false;
      // The blank line above the heading goes with it: whether a run has an example is the race's own.
      if (joined[joined.length - 1] === '') joined.pop();
      joined.push(raw.replace(/, every command .*/, ''));
      continue;
    }
    if (inExample) {
      if (raw.trim() === '') inExample = false;
      continue;
    }
    const last = joined.length - 1;
    // A readout's sub-item ("faults on loop: …", "note: …") is an entry of its own, and the lines
    // indented under it continue it: how far its clauses run decides where they wrap.
    if (SUB_ITEM.test(raw)) {
      joined.push(raw);
      inSubItem = true;
      continue;
    }
    if (inSubItem && /^ {4,}\S/.test(raw) && !/[│┃|]/.test(raw)) {
      joined[last] = `${joined[last]} ${raw.trim()}`;
      continue;
    }
    inSubItem = false;
    // A continuation: two spaces then text, under a line that is prose (not a table's row).
    if (/^ {2}\S/.test(raw) && last >= 0 && !/[│┃|]/.test(raw) && joined[last] !== '' && !/^\s*$/.test(joined[last] ?? ''))
      joined[last] = `${joined[last]} ${raw.trim()}`;
    else joined.push(raw);
  }
  return joined.flatMap((line) => clauses(withoutRunsOwnSource(lineShape(line))));
}

// A readout's sub-items, two spaces in under the mode's sentence.
const SUB_ITEM = /^ {2}(?:note|faults on [^:]+):/;

/**
 * The table's legend without `recoveries`: the source it is listed under is the run's own (a move
 * no sweeper heard back puts it under the server's state against the sweepers' records,
 * src/audit/sources.ts), while every other figure's source is fixed.
 */
function withoutRunsOwnSource(shape: string): string {
  if (!shape.startsWith('From ')) return shape;
  return shape
    .replace(/; [^;()]*\(recover\)/, '')
    .replace(/\(recover, /, '(')
    .replace(/, recover(?=[,)])/, '');
}

// A readout sentence: a label (a mode, a queue) then its clauses.
function clauses(shape: string): string[] {
  const head = /^(.{1,120}?\): )(.*)$/.exec(shape);
  if (!head || !/, /.test(head[2] ?? '')) return [shape];
  const [label, body] = [head[1] ?? '', head[2] ?? ''];
  // Commas inside parentheses belong to their clause.
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of body) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (depth === 0 && (char === ',' || char === '.')) {
      if (current.trim()) parts.push(current.trim());
      current = '';
      continue;
    }
    current += char;
  }
  if (current.trim()) parts.push(current.trim());
  return parts.map((part) => `${label}${part}`);
}

/**
 * Where two shapes differ, as lines for a failure message; none when they match. An entry present
 * on one side only is allowed when the race decides whether it shows: a clause or line with a
 * count in it outside parentheses ("misplaced N jobs" shows only when some were), unless it is a table's row, or a row
 * whose label is in `optionalRows` (a figure the table shows only when it is not zero).
 */
export function shapeDifferences(sample: readonly string[], live: readonly string[], optionalRows: readonly string[] = []): string[] {
  const countsIn = (entries: readonly string[]) => {
    const counts = new Map<string, number>();
    for (const e of entries) counts.set(e, (counts.get(e) ?? 0) + 1);
    return counts;
  };
  const [inSample, inLive] = [countsIn(sample), countsIn(live)];
  const optionalShapes = optionalRows.map((label) => lineShape(label));
  const mayBeAbsent = (entry: string) => {
    if (optionalShapes.some((label) => entry.startsWith(`${label} N`))) return true;
    if (isTableRow(entry)) return false;
    // A count in parentheses is a detail of a sentence that always shows ("(N recoveries, N anomalies)").
    let outside = entry;
    while (/\([^()]*\)/.test(outside)) outside = outside.replace(/\([^()]*\)/g, '');
    return /\bN\b/.test(outside);
  };
  const differences: string[] = [];
  for (const [entry, count] of inSample) if ((inLive.get(entry) ?? 0) !== count && !mayBeAbsent(entry)) differences.push(`sample only: ${entry}`);
  for (const [entry, count] of inLive) if ((inSample.get(entry) ?? 0) !== count && !mayBeAbsent(entry)) differences.push(`live only:   ${entry}`);
  // The fixed lines in the same order.
  const fixed = (entries: readonly string[]) => [...new Set(entries.filter((e) => !mayBeAbsent(e)))];
  const [fixedSample, fixedLive] = [fixed(sample), fixed(live)];
  if (differences.length === 0 && fixedSample.join('\n') !== fixedLive.join('\n')) differences.push('the same lines, in another order');
  return differences;
}

// A row of a table: a label, then numbers in columns (a trials table's "N/N (N)" among them).
function isTableRow(entry: string): boolean {
  const cells = entry.replace(/ \(N\)/g, '');
  return /^[a-z][a-z /-]*? (?:N(?:\/N)?|—|-)(?: |$)/.test(cells) && !/[:(.,]/.test(cells);
}

/** The files the samples name, written into `dir`: sweep scripts that are wrong on purpose. */
export function writeSampleFiles(dir: string): void {
  // Does not compile: an assignment with nothing to assign.
  writeFileSync(join(dir, 'broken.lua'), 'local moved =\nreturn moved\n');
  writeFileSync(join(dir, 'forgets-removal.lua'), FORGETS_ZREM);
  writeFileSync(join(dir, 'ignores-deadline.lua'), IGNORES_DEADLINE);
  // A `--lib` sample runs as in a project that has the library installed: this project's node_modules stands for it.
  symlinkSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)), join(dir, 'node_modules'), 'dir');
}

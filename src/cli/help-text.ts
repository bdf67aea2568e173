/**
 * The help's own sections after the flags (the modes, the examples, the exit codes), fitted to a
 * width: shared by the command line's definition (help.ts, through commander) and by the help
 * printed without it (help-render.ts), so the two cannot differ. Loads nothing but shared/text.
 */
import { wrap, wrapLines } from '../shared/text.js';

/**
 * Text narrower than this is left as it is rather than wrapped: commander's rule, at a width of
 * our own (help.ts sets commander's `minWidthToWrap` to it), so that help fits a terminal of 40
 * columns too.
 */
export const MIN_WIDTH_TO_WRAP = 20;
/** A description given less room than this beside its flag goes under the flag instead. */
const MIN_ROOM_BESIDE = 40;
/** An item's indent, the space between its term and its description, and a description's indent under its term. */
const ITEM_INDENT = 2;
const SPACER = 2;
const UNDER_INDENT = 6;

/** `text` wrapped at whitespace to `width`, each of its own lines apart: runs of words that fit, the space at a break dropped. */
export function helpBoxWrap(text: string, width: number): string {
  if (width < MIN_WIDTH_TO_WRAP) return text;
  return text
    .split(/\r\n|\n/)
    .flatMap((line) => {
      const words = line.match(/\s*\S+/g);
      if (words === null) return [''];
      const lines: string[] = [];
      let current = words[0] ?? '';
      for (const word of words.slice(1)) {
        if (current.length + word.length <= width) current += word;
        else {
          lines.push(current);
          current = word.trimStart();
        }
      }
      lines.push(current);
      return lines;
    })
    .join('\n');
}

/**
 * A flag's or a command's line at `width`: the term padded to the column and the description
 * wrapped beside it, as commander lays it out; where the column leaves the description less than
 * MIN_ROOM_BESIDE, the description goes under the term, indented, wrapped to the width left.
 */
export function helpItem(term: string, termWidth: number, description: string, width: number): string {
  const indent = ' '.repeat(ITEM_INDENT);
  if (!description) return indent + term;
  const room = width - termWidth - SPACER - ITEM_INDENT;
  // A description with a line that starts with a space is laid out by hand: kept as written.
  const byHand = /\n[^\S\r\n]/.test(description);
  if (room < MIN_ROOM_BESIDE && !byHand) {
    const under = ' '.repeat(UNDER_INDENT);
    return `${indent}${term}\n${under}${helpBoxWrap(description, width - UNDER_INDENT).replace(/\n/g, `\n${under}`)}`;
  }
  const wrapped = byHand ? description : helpBoxWrap(description, room).replace(/\n/g, `\n${' '.repeat(termWidth + SPACER)}`);
  return `${indent}${term.padEnd(termWidth)}${' '.repeat(SPACER)}${wrapped.replace(/\n/g, `\n${indent}`)}`;
}

/** A name and what it is: a mode, or an example command and what it is for. */
export type HelpEntry = readonly [string, string];

/** What a command's help prints after its flags and subcommands, as data. */
export interface AfterHelp {
  /** The main command's layout (modes, examples and exit codes, each its own paragraph) or a subcommand's. */
  readonly root: boolean;
  /** The modes and mode sets, each with its line; the grid's help has them too. */
  readonly modes?: readonly HelpEntry[];
  readonly examples?: readonly HelpEntry[];
  /** The main command's exit codes, each with what it means. */
  readonly exitCodes?: readonly HelpEntry[];
  /** The last paragraph: after the exit codes, or where a subcommand's are told. */
  readonly closing: string;
  /** A subcommand's own paragraph, first (the grid's: what a cell is). */
  readonly note?: string;
}

/** "  name   text" lines, the text wrapped under itself. */
function list(entries: readonly HelpEntry[], width: number, nameWidth: number): string[] {
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

function modesText(modes: readonly HelpEntry[], width: number): string {
  return ['Modes (--mode, or a comma list):', ...list(modes, width, 8)].join('\n');
}

function examplesText(examples: readonly HelpEntry[], width: number): string {
  // Commands print whole (they are to be copied); what each is for goes on the next line.
  return ['Examples:', ...examples.flatMap(([command, what]) => [`  ${command}`, ...wrap(what, width - 6, '').map((line) => `      ${line}`)])].join('\n');
}

/** The text after a command's flags at `width`, as commander is handed it. */
export function afterHelpText(after: AfterHelp, width: number): string {
  if (after.root) {
    const codes = ['Exit codes:', ...list(after.exitCodes ?? [], width, 3)].join('\n');
    return `\n${modesText(after.modes ?? [], width)}\n\n${examplesText(after.examples ?? [], width)}\n\n${codes}\n${wrapLines(after.closing, width)}`;
  }
  const note = after.note ? `\n${wrap(after.note, width, '').join('\n')}\n` : '';
  const modes = after.modes ? `\n${modesText(after.modes, width)}\n` : '';
  const examples = after.examples ? `\n${examplesText(after.examples, width)}\n` : '';
  return `${note}${modes}${examples}\n${wrapLines(after.closing, width)}`;
}

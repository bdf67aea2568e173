/**
 * The help's own sections after the flags (the modes, the examples, the exit codes), fitted to a
 * width: shared by the command line's definition (help.ts, through commander) and by the help
 * printed without it (help-render.ts), so the two cannot differ. Loads nothing but shared/text.
 */
import { wrap } from '../shared/text.js';

/** A name and what it is: a mode, or an example command and what it is for. */
export type HelpEntry = readonly [string, string];

/** What a command's help prints after its flags and subcommands, as data. */
export interface AfterHelp {
  /** The main command's layout (modes, examples and exit codes, each its own paragraph) or a subcommand's. */
  readonly root: boolean;
  /** The modes and mode sets, each with its line; the grid's help has them too. */
  readonly modes?: readonly HelpEntry[];
  readonly examples?: readonly HelpEntry[];
  /** The last paragraph: the exit codes, or where a subcommand's are told. */
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
  if (after.root) return `\n${modesText(after.modes ?? [], width)}\n\n${examplesText(after.examples ?? [], width)}\n\n${after.closing}`;
  const note = after.note ? `\n${wrap(after.note, width, '').join('\n')}\n` : '';
  const modes = after.modes ? `\n${modesText(after.modes, width)}\n` : '';
  const examples = after.examples ? `\n${examplesText(after.examples, width)}\n` : '';
  return `${note}${modes}${examples}\n${after.closing}`;
}

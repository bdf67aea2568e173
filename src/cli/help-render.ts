/**
 * The help printed without the command line's definition: a request for help and nothing else
 * (bin/emq-race.js) reads the pages the build wrote (help-pages.ts) and fits them to the
 * terminal here, with no commander, no flag parsers and no other module of the tool loaded. What
 * varies with the width is done here as commander does it (its items, its wrapping); a test holds
 * every page at every width equal to what the command line itself prints.
 */
import { readFileSync } from 'node:fs';
import { afterHelpText, helpBoxWrap, helpItem, type AfterHelp } from './help-text.js';

/** One place in a page's text that depends on the width: a flag's (or command's) line, or a paragraph. */
export type HelpPiece =
  | { readonly kind: 'item'; readonly term: string; readonly termWidth: number; readonly description: string }
  | { readonly kind: 'paragraph'; readonly text: string };

/** One command's help: its text with a marker where each piece goes, and what follows the flags. */
export interface HelpPage {
  readonly template: string;
  readonly pieces: readonly HelpPiece[];
  readonly after?: AfterHelp;
}

/** Every command's page by name; the main command's is ''. */
export type HelpPages = Readonly<Record<string, HelpPage>>;

/** Where piece `index` goes in a template: a character no help text holds, then its index. */
export const pieceMarker = (index: number): string => `\u0000${index}\u0000`;

/** A command's help at `width`, exactly as the command line prints it. */
function renderHelpPage(page: HelpPage, width: number): string {
  const text = page.template.replace(/\u0000(\d+)\u0000/g, (_, at: string) => {
    const piece = page.pieces[Number(at)];
    if (piece === undefined) throw new Error(`help page: no piece ${at}`);
    return piece.kind === 'item' ? helpItem(piece.term, piece.termWidth, piece.description, width) : helpBoxWrap(piece.text, width);
  });
  return page.after ? `${text}${afterHelpText(page.after, width)}\n` : text;
}

/**
 * The page a request for help and nothing else asks for: '' for the main command's (`--help`, `-h`,
 * `help`, `help help`), a command's name (`help WORD`, `WORD --help`, `WORD -h`), or undefined for
 * anything else, which the command line itself answers.
 */
export function pageAsked(words: readonly string[]): string | undefined {
  const [first, second] = words;
  const asksHelp = (word: string | undefined): boolean => word === '--help' || word === '-h';
  // Not the empty word either: '' is the main command's page, and `help ''` is refused as no command.
  const isWord = (word: string | undefined): word is string => word !== undefined && word !== '' && !word.startsWith('-');
  if (words.length === 1) return asksHelp(first) || first === 'help' ? '' : undefined;
  if (words.length !== 2) return undefined;
  if (first === 'help' && isWord(second)) return second === 'help' ? '' : second;
  if (isWord(first) && asksHelp(second)) return first;
  return undefined;
}

/**
 * The pages the build wrote beside this module (help-pages.ts), or none where they cannot be read
 * (a build stopped before it wrote them): the command line itself then answers.
 */
function readPages(): HelpPages {
  try {
    return JSON.parse(readFileSync(new URL('./help-pages.json', import.meta.url), 'utf8')) as HelpPages;
  } catch {
    return {};
  }
}

/** The help `words` ask for, fitted to `width`; undefined when no page answers them (a word that is no command). */
export function helpFromPages(words: readonly string[], width: number, pages: HelpPages = readPages()): string | undefined {
  const name = pageAsked(words);
  // Own pages only: a word such as `constructor` names no page, whatever an object inherits.
  const page = name !== undefined && Object.hasOwn(pages, name) ? pages[name] : undefined;
  return page && renderHelpPage(page, width);
}

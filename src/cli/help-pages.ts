/**
 * The help pages, made from the command line's own definition when the tool is built, so that a
 * request for help prints without loading it (help-render.ts; bin/emq-race.js). Commander lays each
 * page out as it would print it; the places that depend on the terminal's width (each flag's line,
 * each paragraph) are left as markers, with what fills them, and the sections after the flags as
 * the data help.ts prints them from.
 */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { afterHelpOf } from './help.js';
import { type HelpPage, type HelpPages, type HelpPiece, pieceMarker } from './help-render.js';
import { assembleProgram } from './program.js';
import type { Io } from '../shared/model.js';

/** The page of one command: commander's own layout, with markers for its pieces. */
function pageOf(command: Command): HelpPage {
  const helper = command.createHelp();
  // Any width: every place that depends on it is a marker.
  helper.prepareContext({ helpWidth: 80, outputHasColors: false });
  const pieces: HelpPiece[] = [];
  const mark = (piece: HelpPiece): string => {
    pieces.push(piece);
    return pieceMarker(pieces.length - 1);
  };
  helper.formatItem = (term, termWidth, description) => mark({ kind: 'item', term, termWidth, description });
  helper.boxWrap = (text) => mark({ kind: 'paragraph', text });
  const template = helper.formatHelp(command, helper);
  const after = afterHelpOf(command);
  return { template, pieces, ...(after ? { after } : {}) };
}

/** Every command's page ('' the main command's); commander's own `help` command has none. */
export function helpPages(program: Command): HelpPages {
  const pages: Record<string, HelpPage> = { '': pageOf(program) };
  for (const command of program.commands) if (command.name() !== 'help') pages[command.name()] = pageOf(command);
  return pages;
}

/** Nothing is written or asked while the pages are made. */
const SILENT: Io = { out: () => undefined, err: () => undefined, env: {}, stdoutIsTty: false };

/** Writes the pages as JSON to `path` (the build, scripts/build.mjs). */
export function writeHelpPages(path: string): void {
  writeFileSync(path, `${JSON.stringify(helpPages(assembleProgram(SILENT, { code: 0 }, ['node', 'emq-race'])))}\n`);
}

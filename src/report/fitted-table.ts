/**
 * A table laid out for a terminal of a given width: one column per run (or mode), one row per
 * figure, numbers right-aligned, a rule under the heads and none between rows. Figures read down a
 * column, so adding a figure costs a line rather than width. When the columns do not all fit, the
 * table goes on below with the next ones, each part headed again.
 */
import { visibleLength } from '../shared/text.js';

export interface FittedRow {
  readonly label: string;
  /** One cell per column, already formatted (and coloured); right-aligned. */
  readonly cells: readonly string[];
}

const GAP = 2;

function padStart(text: string, width: number): string {
  return ' '.repeat(Math.max(0, width - visibleLength(text))) + text;
}

export function renderFittedTable(heads: readonly string[], rows: readonly FittedRow[], width: number): string {
  const labelWidth = Math.max(0, ...rows.map((row) => visibleLength(row.label)));
  // One width for every column, so that the parts of a table split in two line up.
  const columnWidth = Math.max(...heads.map(visibleLength), ...rows.flatMap((row) => row.cells.map(visibleLength)));
  // Not even one column beside the labels (a trials spread on a narrow terminal): each label on a
  // line of its own, its cell under it, a column at a time.
  if (labelWidth + GAP + columnWidth > width) return stacked(heads, rows, columnWidth);
  const perPart = Math.floor((width - labelWidth) / (GAP + columnWidth));
  const parts: string[] = [];
  for (let first = 0; first < heads.length; first += perPart) {
    const shown = (cells: readonly string[]): string =>
      cells
        .slice(first, first + perPart)
        .map((cell) => ' '.repeat(GAP) + padStart(cell, columnWidth))
        .join('');
    const headLine = ' '.repeat(labelWidth) + shown(heads);
    const lines = [headLine, '─'.repeat(visibleLength(headLine)), ...rows.map((row) => row.label.padEnd(labelWidth) + shown(row.cells))];
    parts.push(lines.join('\n'));
  }
  return parts.join('\n\n');
}

function stacked(heads: readonly string[], rows: readonly FittedRow[], columnWidth: number): string {
  return heads
    .map((head, column) => {
      const headLine = ' '.repeat(GAP) + padStart(head, columnWidth);
      const lines = rows.flatMap((row) => [row.label, ' '.repeat(GAP) + padStart(row.cells[column] ?? '', columnWidth)]);
      return [headLine, '─'.repeat(visibleLength(headLine)), ...lines].join('\n');
    })
    .join('\n\n');
}

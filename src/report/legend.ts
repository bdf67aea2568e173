/**
 * The line under the race table that says where each figure in it comes from: the server's state,
 * the sweepers' own records, or one set against the other (see src/audit/sources.ts), and what —
 * means. Grouped by source, in the table's order, wrapped to 80 columns.
 */
import { SOURCE_WORDS } from '../audit/sources.js';
import { wrap } from '../shared/text.js';
import type { FigureSource, FigureSources, SourcedFigure } from '../shared/model.js';

const ORDER: readonly FigureSource[] = ['server', 'sweepers', 'server+sweepers', 'server+releaser', 'observer', 'workers'];

const LEGEND_WIDTH = 80;

/** What the table shows for a value the run did not measure. */
export const NOT_MEASURED = '—';

/** A column head as one line of words: "double\nrecoveries" → "double recoveries". */
export function headWords(head: string): string {
  return head.replace(/-\n/g, '').replace(/\n/g, ' ');
}

/**
 * `columns`: the figures the table shows, with their heads. A figure whose source differs between
 * runs (recoveries reconciled from the server under faults, say) is listed under the combined one.
 */
export function sourceLegend(
  columns: readonly { head: string; figure: SourcedFigure }[],
  runs: readonly { readonly sources?: FigureSources | undefined }[],
  unmeasured: boolean,
  width = LEGEND_WIDTH,
): string[] {
  const groups = new Map<FigureSource, string[]>();
  for (const { head, figure } of columns) {
    const found = [...new Set(runs.map((run) => run.sources?.[figure] ?? null).filter((s): s is FigureSource => s !== null))];
    const source = found.length > 1 ? (found.find((s) => s.includes('+')) ?? found[0]) : found[0];
    if (source === undefined) continue;
    const group = groups.get(source) ?? [];
    group.push(headWords(head));
    groups.set(source, group);
  }
  const parts = ORDER.filter((source) => groups.has(source)).map((source) => `${SOURCE_WORDS[source]} (${(groups.get(source) ?? []).join(', ')})`);
  if (parts.length === 0) return [];
  const dash = unmeasured ? ' — : not measured in this run.' : '';
  return wrap(`From ${parts.join('; ')}.${dash}`, width, '  ');
}

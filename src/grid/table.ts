/**
 * The grid on a terminal: per mode a table whose rows are the first axis's values and whose
 * columns are the second's, each cell the headline anomaly rate (double recoveries per 1,000 jobs)
 * and the jobs per second, then a line per mode saying where it raced. Columns that do not fit the
 * width go on to a second block under the first, with the row names repeated. Pure.
 */
import { groupThousands, plural, rangeText, wrapLines } from '../shared/text.js';
import type { Mode } from '../shared/model.js';
import type { GridCellJson, GridJson, GridModeCellJson } from './json.js';
import { cellLabel, gridCells, type CellAt, type GridAxis } from './plan.js';

const GAP = '  ';

/** A rate per 1,000 as the table shows it: whole from 100 up, one decimal below, 0 as 0. */
export function formatRate(perThousand: number): string {
  if (perThousand === 0) return '0';
  if (perThousand >= 100) return groupThousands(Math.round(perThousand));
  // A rate too small for one decimal still shows that it is not 0.
  return perThousand < 0.05 ? '<0.1' : perThousand.toFixed(1);
}

/** Jobs per second, short: 950, 12.3k, 1.2M. */
export function formatJobsPerSec(jobsPerSec: number): string {
  if (jobsPerSec < 10_000) return groupThousands(Math.round(jobsPerSec));
  if (jobsPerSec < 1_000_000) return `${(jobsPerSec / 1000).toFixed(jobsPerSec < 100_000 ? 1 : 0)}k`;
  return `${(jobsPerSec / 1_000_000).toFixed(1)}M`;
}

/** One cell's parts: the rate, the jobs/s, and the raced trials (`2/2`) when there were several. */
export function cellParts(figures: GridModeCellJson | undefined): readonly [string, string, string] {
  if (!figures) return ['–', '', ''];
  return [
    formatRate(figures.doubleRecoveriesPer1000),
    `${formatJobsPerSec(figures.jobsPerSec)}/s`,
    figures.trials > 1 ? `${figures.racedTrials}/${figures.trials}` : '',
  ];
}

/** Cells' parts joined with each part padded to its widest in the table, so the figures line up. */
export function alignParts(rows: readonly (readonly (readonly [string, string, string])[])[]): string[][] {
  const all = rows.flat();
  const widest = (i: 0 | 1 | 2): number => Math.max(0, ...all.map((parts) => [...parts[i]].length));
  const [rate, speed, raced] = [widest(0), widest(1), widest(2)];
  return rows.map((row) => row.map(([r, s, t]) => (s === '' ? r : `${r.padStart(rate)} · ${s.padStart(speed)}${raced > 0 ? ` ${t.padStart(raced)}` : ''}`)));
}

function axisValueLabel(axis: GridAxis, value: number): string {
  return axis.flag === 'latency' || axis.flag === 'latency-jitter' ? `${axis.flag} ${value} ms` : `${axis.flag} ${value}`;
}

function sameAt(a: CellAt, b: CellAt): boolean {
  return Object.keys(a).every((flag) => a[flag] === b[flag]);
}

/** Lays rows × columns of text out in blocks of columns that fit `width`, row names repeated. */
export function layOut(rowNames: readonly string[], columnNames: readonly string[], cells: readonly (readonly string[])[], width: number): string[] {
  const nameWidth = Math.max(0, ...rowNames.map((name) => [...name].length));
  const columnWidths = columnNames.map((name, c) => Math.max([...name].length, ...cells.map((row) => [...(row[c] ?? '')].length)));
  const blocks: number[][] = [];
  let used = nameWidth;
  for (let c = 0; c < columnNames.length; c++) {
    const need = GAP.length + (columnWidths[c] ?? 0);
    const last = blocks[blocks.length - 1];
    if (!last || used + need > width) {
      blocks.push([c]);
      used = nameWidth + need;
    } else {
      last.push(c);
      used += need;
    }
  }
  const lines: string[] = [];
  for (const [b, block] of blocks.entries()) {
    if (b > 0) lines.push('');
    const row = (name: string, texts: readonly string[]): string =>
      (name.padEnd(nameWidth) + block.map((c) => GAP + (texts[c] ?? '').padStart(columnWidths[c] ?? 0)).join('')).trimEnd();
    // One axis leaves one column with no name: no header line of blanks above it.
    if (columnNames.some((name) => name !== '')) lines.push(row('', columnNames));
    for (const [r, name] of rowNames.entries()) lines.push(row(name, cells[r] ?? []));
  }
  return lines;
}

/** Where a mode raced, in one line: in how many cells, and the first cell (in the grid's order) that did. */
function racedLine(mode: Mode, cells: readonly GridCellJson[], axes: readonly GridAxis[]): string {
  const mine = cells.flatMap((cell) => {
    const figures = cell.modes.find((m) => m.mode === mode);
    return figures ? [{ cell, figures }] : [];
  });
  const raced = mine.filter(({ figures }) => figures.anomalies > 0);
  if (mine.length === 0) return `${mode}: no cell finished`;
  if (raced.length === 0)
    return `${mode}: clean in every cell (${plural(mine.length, 'cell')}, ${plural(
      mine.reduce((n, { figures }) => n + figures.trials, 0),
      'run',
    )})`;
  const first = raced[0];
  const where = first && axes.length > 0 ? `; first at ${cellLabel(axes, first.cell.at)}` : '';
  // A run its sweep limit stopped leaves leases unreclaimed, an anomaly of the limit, not of a race.
  const cut = raced.filter(({ cell }) => cell.runs.some((run) => run.mode === mode && run.cutShort)).length;
  const cutWords = cut > 0 ? ` (${cut === raced.length ? (cut === 1 ? 'it was' : 'all were') : `${cut} of them were`} cut short by --max-sweeps)` : '';
  return `${mode}: anomalies in ${raced.length} of ${plural(mine.length, 'cell')}${cutWords}${where}`;
}

/** The whole grid for a terminal of `width` columns. */
export function renderGridTables(grid: GridJson, width: number): string {
  const axes = grid.axes;
  const [rowAxis, columnAxis, ...rest] = axes;
  const out: string[] = [];
  const trials = grid.trials > 1 ? `; k/n: trials with any anomaly, of ${grid.trials}` : '';
  out.push(...wrapLines(`each cell: double recoveries per 1,000 jobs · jobs/s${trials}`, width).split('\n'));
  // Tables for every combination of the axes after the second, each titled with its values.
  const restCombos = gridCells(rest);
  for (const mode of grid.modes) {
    for (const combo of restCombos) {
      const title = rest.length > 0 ? `${mode}, ${cellLabel(rest, combo)}` : mode;
      const rowValues = rowAxis?.values ?? [Number.NaN];
      const columnValues = columnAxis?.values ?? [Number.NaN];
      const find = (rowValue: number, columnValue: number): GridCellJson | undefined =>
        grid.cells.find((cell) =>
          sameAt(cell.at, { ...combo, ...(rowAxis ? { [rowAxis.flag]: rowValue } : {}), ...(columnAxis ? { [columnAxis.flag]: columnValue } : {}) }),
        );
      const texts = alignParts(rowValues.map((r) => columnValues.map((c) => cellParts(find(r, c)?.modes.find((m) => m.mode === mode)))));
      out.push('', title);
      out.push(
        ...layOut(
          rowValues.map((v) => (rowAxis ? axisValueLabel(rowAxis, v) : '')),
          columnValues.map((v) => (columnAxis ? axisValueLabel(columnAxis, v) : '')),
          texts,
          width,
        ),
      );
    }
  }
  out.push('');
  for (const mode of grid.modes) out.push(...wrapLines(racedLine(mode, grid.cells, axes), width).split('\n'));
  const measured = grid.cells.filter((cell) => cell.latency !== null);
  if (measured.length > 0) {
    const byAsked = new Map<number, number[]>();
    for (const cell of measured)
      if (cell.latency) byAsked.set(cell.latency.requestedMs, [...(byAsked.get(cell.latency.requestedMs) ?? []), cell.latency.measuredRttMs.median]);
    const parts = [...byAsked].map(([asked, medians]) => `${asked} ms → ${rangeText(medians, (ms) => ms.toFixed(2))} ms`);
    out.push(...wrapLines(`round trip measured through the proxy (median PING, over its cells): ${parts.join(', ')}`, width).split('\n'));
  }
  if (!grid.complete)
    out.push(...wrapLines(`stopped after ${grid.cells.length} of ${plural(grid.plannedCells, 'cell')}: – marks a cell that did not run`, width).split('\n'));
  return `${out.join('\n')}\n`;
}

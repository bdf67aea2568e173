/**
 * The grid page (`emq-race grid --html`): one self-contained file that carries the grid's JSON in a
 * `<script type="application/json" id="emq-grid">` block and draws its charts from that block with
 * one small inline script (grid-charts.ts). The Content-Security-Policy fetches nothing and allows
 * that one script by its SHA-256 hash, computed here from the very text the page carries, so no
 * other script (no 'unsafe-inline') can ever run. The table, the facts and the banner are markup
 * written here, every string from the data escaped; a page with no finished cell still renders.
 */
import { createHash } from 'node:crypto';
import { escapeMarkup as esc } from './escape.js';
import { commandBlock, factList, htmlDocument, passwordClause, serverFacts } from './document.js';
import { ANOMALY_HOST_ID, chartScript, GRID_DATA_ID, pointFigures, REPRODUCTION_HOST_ID, SPEED_HOST_ID, valueLabel } from './grid-charts.js';
import { GRID_PAGE_STYLE, GRID_SVG_STYLE } from './grid-style.js';
import { PAGE_STYLE } from './page-style.js';
import { SVG_STYLE } from './svg-style.js';
import type { GridAxisJson, GridCellJson, GridJson } from '../grid/json.js';
import { groupThousands } from '../shared/text.js';

/** A figure with its thousands grouped, as the terminal's table prints it; its decimals as the JSON has them. */
function grouped(value: number): string {
  const [whole = '', fraction] = String(value).split('.');
  return fraction === undefined ? groupThousands(whole) : `${groupThousands(whole)}.${fraction}`;
}

export interface GridPageContext {
  /** The command line that reproduces the grid, password redacted. */
  readonly command: string;
  /** When the page was written, ISO 8601. */
  readonly generatedAt: string;
}

/** The CSP source that allows exactly `script`: 'sha256-…' of its UTF-8 text, base64. */
export function scriptHashSource(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
}

export function gridCsp(script: string): string {
  return `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src ${scriptHashSource(script)}`;
}

/** What an interrupted grid's banner says; empty for a complete grid. */
export function incompleteWords(grid: Pick<GridJson, 'complete' | 'cells' | 'plannedCells'>): string {
  if (grid.complete) return '';
  return `stopped after ${grid.cells.length} of ${grid.plannedCells} cells: the figures below are those of the cells that finished`;
}

const axisName = (axis: GridAxisJson | undefined): string => (axis === undefined ? '' : axis.flag === 'latency' ? 'latency' : axis.flag);

/** The axis chart 2 runs along: latency where it is varied, else the second axis, else the first. */
function speedAxis(axes: readonly GridAxisJson[]): GridAxisJson | undefined {
  return axes.find((axis) => axis.flag === 'latency') ?? axes[1] ?? axes[0];
}

const NOT_RUN = '—';

/** Every cell, a row each: the axes' values, the measured RTT where any cell has one, then per mode rate, jobs/s and raced trials. */
function cellsTable(grid: GridJson): string {
  const withRtt = grid.cells.some((cell) => cell.latency !== null);
  const headTop = [
    '<th rowspan="2">#</th>',
    ...grid.axes.map((axis) => `<th rowspan="2" data-axis="${esc(axis.flag)}">${esc(axis.flag)}</th>`),
    ...(withRtt ? ['<th rowspan="2">RTT measured (median ms)</th>'] : []),
    ...grid.modes.map((mode) => `<th colspan="3" class="mode" data-mode="${esc(mode)}">${esc(mode)}</th>`),
  ].join('');
  const headBottom = grid.modes.map(() => '<th class="num first">per 1,000</th><th class="num">jobs/s</th><th class="num">raced</th>').join('');
  const row = (cell: GridCellJson): string => {
    const tds = [
      // Counted from 1, as the progress lines count the cells (the JSON's index counts from 0).
      `<td class="num">${esc(cell.index + 1)}</td>`,
      ...grid.axes.map((axis) => `<td class="num" data-field="${esc(axis.flag)}">${esc(String(cell.at[axis.flag] ?? NOT_RUN))}</td>`),
      ...(withRtt ? [`<td class="num" data-field="rtt">${cell.latency ? esc(cell.latency.measuredRttMs.median.toFixed(2)) : NOT_RUN}</td>`] : []),
      ...grid.modes.map((mode) => {
        const m = cell.modes.find((item) => item.mode === mode);
        const td = (field: string, text: string | number, first = false): string =>
          `<td class="num${first ? ' first' : ''}${field === 'doubleRecoveriesPer1000' && m ? (m.doubleRecoveriesPer1000 > 0 ? ' anomaly bad' : ' anomaly ok') : ''}" data-cell="${esc(cell.index)}" data-mode="${esc(mode)}" data-field="${field}">${esc(text)}</td>`;
        if (!m) return td('doubleRecoveriesPer1000', NOT_RUN, true) + td('jobsPerSec', NOT_RUN) + td('racedTrials', NOT_RUN);
        return (
          td('doubleRecoveriesPer1000', grouped(m.doubleRecoveriesPer1000), true) +
          td('jobsPerSec', grouped(m.jobsPerSec)) +
          td('racedTrials', `${m.racedTrials}/${m.trials}`)
        );
      }),
    ];
    return `<tr data-cell="${esc(cell.index)}">${tds.join('')}</tr>`;
  };
  const body =
    grid.cells.length > 0
      ? grid.cells.map(row).join('\n')
      : `<tr><td colspan="${1 + grid.axes.length + 3 * grid.modes.length}" class="note">no cell finished</td></tr>`;
  return `<div class="scroll"><table id="cells-table"><thead><tr>${headTop}</tr><tr>${headBottom}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

/**
 * Every chart point's figures as text, the very lines of its hover note: a hover needs a mouse and
 * the charts need the page's script, while this list opens from the keyboard and with scripts off.
 */
function pointList(grid: GridJson): string {
  const items = grid.cells.flatMap((cell) =>
    grid.modes.flatMap((mode) => {
      const m = cell.modes.find((item) => item.mode === mode);
      return m
        ? [`<li data-cell="${esc(cell.index)}" data-mode="${esc(mode)}">${pointFigures(grid.axes, cell, m, valueLabel).map(esc).join('<br>')}</li>`]
        : [];
    }),
  );
  if (items.length === 0) return '';
  return `<details class="points"><summary>Every point's figures in full, as the charts' hover notes give them</summary><ul>${items.join('')}</ul></details>`;
}

function runSection(grid: GridJson, ctx: GridPageContext): string {
  const rows: [string, string][] = [
    ...serverFacts(grid.server),
    ['modes', grid.modes.join(', ')],
    ...grid.axes.map((axis): [string, string] => [`axis ${axis.flag}`, axis.values.join(', ')]),
    ['trials per cell', String(grid.trials)],
    ['cells', `${grid.cells.length} of ${grid.plannedCells}${grid.complete ? '' : ' (stopped)'}`],
    ['elapsed', `${(grid.elapsedMs / 1000).toFixed(1)} s`],
    ['generated', ctx.generatedAt],
    ['emq-race', grid.version],
  ];
  return [
    '<section id="run">',
    '<h2>The grid</h2>',
    factList(rows),
    `<p class="note">To run it again${passwordClause(ctx.command)}:</p>`,
    commandBlock(ctx.command),
    '</section>',
  ].join('\n');
}

/** The page for `emq-race grid --html`. Pure but for the hash. */
export function gridPage(grid: GridJson, ctx: GridPageContext): string {
  const script = chartScript();
  // The script is compiled code, not data; still, a `</script` in it would end it early.
  if (/<\/script|<!--/i.test(script)) throw new Error('the chart script cannot be inlined as it is');
  const first = grid.axes[0];
  const second = grid.axes[1];
  const speed = speedAxis(grid.axes);
  const lineWords = second
    ? `${second.flag === 'latency' ? 'one line per added round trip' : `one line per value of ${second.flag}`}, each its own colour and dash pattern`
    : 'one line';
  const banner = incompleteWords(grid);
  const sections = [
    '<header>',
    '<h1>emq-race grid: the race over a grid of settings</h1>',
    '<p class="lede">The same race (expired leases seeded on a live server, swept by concurrent sweepers, then audited) run once per combination of the settings below, each mode on fresh queues, and set side by side.</p>',
    '</header>',
    ...(banner === '' ? [] : [`<p class="banner" id="incomplete" role="alert">${esc(banner)}</p>`]),
    runSection(grid, ctx),
    '<section id="cells">',
    '<h2>Every cell</h2>',
    '<p class="note">Per mode: double recoveries per 1,000 jobs seeded over all trials (green at 0), jobs per second over all trials, and trials with any anomaly / trials.</p>',
    cellsTable(grid),
    pointList(grid),
    '</section>',
    // Before the first chart, where a reader without scripts meets its empty place.
    "<noscript><p class=\"note\">The charts below are drawn by the page's one small script from the JSON embedded in it; with scripts off, the table above has each cell's figures, the list under it every point's, and the JSON every one.</p></noscript>",
    '<section id="anomaly">',
    `<h2>Anomaly rate against ${esc(axisName(first))}</h2>`,
    `<p class="note">One chart per mode${
      grid.axes.length > 2
        ? ` and per combination of ${esc(
            grid.axes
              .slice(2)
              .map((a) => a.flag)
              .join(', '),
          )} (its title says which)`
        : ''
    }: ${esc(axisName(first))} along the bottom, evenly spaced; up, double recoveries per 1,000 jobs; ${esc(lineWords)}. A line on 0 is a mode that never recovered a job twice. Hover a point for its figures; the list under the table above gives every point's, from the keyboard too, and the page's JSON every figure.</p>`,
    `<div class="charts" id="${ANOMALY_HOST_ID}"></div>`,
    '</section>',
    '<section id="speed">',
    `<h2>Jobs per second against ${esc(axisName(speed))}</h2>`,
    `<p class="note">Every mode on one chart, a colour per mode${grid.axes.length > 1 ? ' and a dash pattern per value of the other axes' : ''}; ${esc(axisName(speed))} along the bottom. The vertical axis turns logarithmic (ticks 10, 100, 1k…) when the fastest point is more than 20 times the slowest, and says so. Hover a point for its figures; the list under the table above gives every point's, from the keyboard too, and the page's JSON every figure.</p>`,
    `<div class="charts" id="${SPEED_HOST_ID}"></div>`,
    '</section>',
    ...(grid.trials > 1
      ? [
          '<section id="reproduction">',
          '<h2>Reproduction rate per cell</h2>',
          `<p class="note">Per mode, one square per cell (rows ${esc(axisName(first))}${second ? `, columns ${esc(axisName(second))}` : ''}): k/n is the trials with at least one anomaly out of the trials run; the redder, the more often the race showed. Green: never.</p>`,
          `<div class="charts" id="${REPRODUCTION_HOST_ID}"></div>`,
          '</section>',
        ]
      : []),
    '<section id="data">',
    '<h2>The data</h2>',
    `<p class="note">Every figure and chart on this page comes from the JSON object embedded in this file as <code>&lt;script type="application/json" id="${GRID_DATA_ID}"&gt;</code>, which is what <code>emq-race grid --json</code> prints: each cell carries its runs as the race's own <code>--json</code> has them. View the page source to read it.</p>`,
    '</section>',
  ];
  const title = `emq-race grid: ${grid.axes.map((axis) => axis.flag).join(' × ')} on ${grid.server.kind} ${grid.server.version}`;
  return htmlDocument({
    title,
    csp: gridCsp(script),
    style: `${PAGE_STYLE}\n${GRID_PAGE_STYLE}\n${SVG_STYLE}\n${GRID_SVG_STYLE}`,
    sections,
    dataId: GRID_DATA_ID,
    data: grid,
    script,
  });
}

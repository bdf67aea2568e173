/**
 * The grid page's charts, drawn in the browser from the GridJson embedded in the page, so what a
 * reader sees cannot drift from the data block beside it (change a figure there and the chart
 * follows). No charting library: one would add 50–200 KB to every page, all of it to inline, for
 * what is a few lines and a heatmap, so the SVG is drawn by hand in the project's own SVG style.
 *
 * Everything here that runs in the page is a plain function that uses only DOM APIs and its
 * argument: grid-page.ts inlines each one with Function.prototype.toString(), so the page runs
 * exactly the code tsc compiled and type-checked. Hence no imports are used at run time inside
 * them (types only), no closure over anything of this module, and the pure helpers reach the
 * drawing function through its argument (ChartKit.math) rather than by name.
 */
import type { GridAxisJson, GridCellJson, GridJson, GridModeCellJson } from '../grid/json.js';

/** How the y axis maps values: linear from 0, or logarithmic between powers of ten. */
export type YScale = 'linear' | 'log';

/**
 * Log when the plotted values spread over more than a factor of 20 (a loop at 1 ms RTT next to
 * the atomic script: a linear axis would flatten the slow lines onto 0); linear otherwise, and
 * always where a value is 0 or below, which a log axis cannot place.
 */
export function yScaleFor(values: readonly number[]): YScale {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return 'linear';
  const min = Math.min(...finite);
  const max = Math.max(...finite);
  if (min <= 0) return 'linear';
  return max / min > 20 ? 'log' : 'linear';
}

/** A linear axis from 0: about five steps of 1, 2, 2.5 or 5 × 10^k, the last at or above `max`. */
export function linearTicks(max: number): number[] {
  if (!Number.isFinite(max) || max <= 0) return [0, 1];
  const raw = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const count = Math.max(1, Math.ceil(max / step - 1e-9));
  const ticks: number[] = [];
  // toPrecision: 3 × 0.1 must read 0.3, not 0.30000000000000004.
  for (let i = 0; i <= count; i++) ticks.push(Number((i * step).toPrecision(12)));
  return ticks;
}

/** A log axis: every power of ten from the one at or below `min` to the one at or above `max`. */
export function logTicks(min: number, max: number): number[] {
  const low = Math.floor(Math.log10(min));
  let high = Math.ceil(Math.log10(max));
  if (high <= low) high = low + 1;
  const ticks: number[] = [];
  // Parsed rather than computed, so 1e-2 is exactly 0.01.
  for (let k = low; k <= high; k++) ticks.push(Number(`1e${k}`));
  return ticks;
}

/** A tick's label: 10, 100, 1k, 10k, 2.5k, 1M; small values to three significant digits. */
export function tickLabel(value: number): string {
  const units: readonly (readonly [number, string])[] = [
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [size, suffix] of units) {
    if (Math.abs(value) >= size) return `${Number((value / size).toPrecision(3))}${suffix}`;
  }
  return String(Number(value.toPrecision(3)));
}

/** An axis's value as the charts' legends and notes name it: `2 ms RTT`, `sweepers=8`. */
export function valueLabel(flag: string, value: number | undefined): string {
  return flag === 'latency' ? `${String(value)} ms RTT` : `${flag}=${String(value)}`;
}

/**
 * A point's figures, one line each: its hover note in the charts, and the page's list of every
 * point, which the keyboard and a screen reader reach (grid-page.ts), so the two cannot differ.
 * Inlined into the page with the other helpers, it names none of them: `label` is valueLabel.
 */
export function pointFigures(axes: readonly GridAxisJson[], cell: GridCellJson, m: GridModeCellJson, label: typeof valueLabel): string[] {
  // Thousands grouped, as the terminal's table prints them.
  const grouped = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 2 });
  const trials = `${m.trials} trial${m.trials === 1 ? '' : 's'}`;
  const lines = [
    // Cells counted from 1, as the table's # column and the progress lines count them.
    `${m.mode} · ${axes.map((axis) => label(axis.flag, cell.at[axis.flag])).join(' · ')} (cell ${cell.index + 1})`,
    `${grouped(m.doubleRecoveriesPer1000)} double recoveries per 1,000 jobs (${grouped(m.doubleRecoveries)} over ${trials} of ${grouped(m.jobs)} jobs)`,
    `${grouped(m.jobsPerSec)} jobs/s`,
    `anomalies in ${m.racedTrials} of ${trials}`,
  ];
  const rtt = cell.latency?.measuredRttMs;
  if (rtt) lines.push(`measured round trip: median ${rtt.median} ms, p99 ${rtt.p99} ms`);
  return lines;
}

/** The pure helpers, handed to the drawing function (which may not name them: see the header). */
export interface ChartMath {
  readonly yScaleFor: typeof yScaleFor;
  readonly linearTicks: typeof linearTicks;
  readonly logTicks: typeof logTicks;
  readonly tickLabel: typeof tickLabel;
  readonly pointFigures: typeof pointFigures;
  readonly valueLabel: typeof valueLabel;
}

/** The drawing function's one argument: the page's document and the helpers. */
export interface ChartKit {
  readonly doc: Document;
  readonly math: ChartMath;
}

/** Where the page expects the charts: the data block and the three chart hosts. */
export const GRID_DATA_ID = 'emq-grid';
export const ANOMALY_HOST_ID = 'anomaly-charts';
export const SPEED_HOST_ID = 'speed-chart';
export const REPRODUCTION_HOST_ID = 'reproduction-charts';

/**
 * Reads the GridJson from `#emq-grid` and draws, as SVG: the anomaly rate against the first axis
 * (one chart per mode and per combination of the axes past the second), jobs/s against latency
 * (all modes on one chart), and with trials the reproduction rate per cell as a heatmap per mode.
 * Every point and heatmap cell carries data-mode, data-cell (the cell's index) and data-value (the
 * figure it stands for) and a <title> tooltip. Data reaches the DOM only through setAttribute and
 * textContent, never as markup. Runs in the page: see the header for what it may use.
 */
export function drawGridCharts(kit: ChartKit): void {
  const doc = kit.doc;
  const math = kit.math;
  const NS = 'http://www.w3.org/2000/svg';
  // Kept in step with the ids above by the page test (the function may not read them).
  const source = doc.getElementById('emq-grid');
  const anomalyHost = doc.getElementById('anomaly-charts');
  const speedHost = doc.getElementById('speed-chart');
  const reproductionHost = doc.getElementById('reproduction-charts');
  const grid = JSON.parse(source?.textContent ?? 'null') as GridJson | null;
  if (grid === null || typeof grid !== 'object') return;
  const axes: readonly GridAxisJson[] = Array.isArray(grid.axes) ? grid.axes : [];
  const cells: readonly GridCellJson[] = Array.isArray(grid.cells) ? grid.cells : [];
  const modes: readonly string[] = Array.isArray(grid.modes) ? grid.modes : [];
  const DASHES = ['', '7 4', '2 3', '10 3 2 3', '4 2 1 2', '1 5'];

  interface Point {
    readonly x: number;
    readonly y: number;
    readonly cell: number;
    readonly mode: string;
    readonly title: string;
  }
  interface Line {
    readonly label: string;
    readonly colour: number;
    readonly dash: string;
    readonly points: readonly Point[];
  }
  interface Plot {
    readonly chart: string;
    readonly title: string;
    readonly xTitle: string;
    readonly xValues: readonly string[];
    readonly yTitle: string;
    readonly scale: 'linear' | 'log';
    readonly lines: readonly Line[];
    readonly width: number;
  }

  function svgNode(name: string, attrs: Readonly<Record<string, string | number>>, parent: Element | null): SVGElement {
    const node = doc.createElementNS(NS, name);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    if (parent) parent.appendChild(node);
    return node;
  }
  function svgText(parent: Element, x: number, y: number, content: string, cls: string, anchor = 'start'): SVGElement {
    const node = svgNode('text', { x, y, class: cls, 'text-anchor': anchor }, parent);
    node.textContent = content;
    return node;
  }
  function note(host: Element | null, words: string): void {
    if (!host) return;
    const p = doc.createElement('p');
    p.className = 'note empty';
    p.textContent = words;
    host.appendChild(p);
  }
  const valueLabel = math.valueLabel;
  function axisTitle(flag: string): string {
    return flag === 'latency' ? 'round trip added (ms)' : flag;
  }
  /** Every combination of the axes' values, in the grid's order; [{}] for no axis. */
  function combinations(list: readonly GridAxisJson[]): Record<string, number>[] {
    let out: Record<string, number>[] = [{}];
    for (const axis of list) out = out.flatMap((combo) => axis.values.map((value) => ({ ...combo, [axis.flag]: value })));
    return out;
  }
  function matches(cell: GridCellJson, combo: Readonly<Record<string, number>>): boolean {
    return Object.entries(combo).every(([flag, value]) => cell.at[flag] === value);
  }
  function comboText(combo: Readonly<Record<string, number>>): string {
    return Object.entries(combo)
      .map(([flag, value]) => valueLabel(flag, value))
      .join(' · ');
  }
  function modeOf(cell: GridCellJson, mode: string): GridModeCellJson | undefined {
    return Array.isArray(cell.modes) ? cell.modes.find((m) => m.mode === mode) : undefined;
  }
  function tooltip(cell: GridCellJson, m: GridModeCellJson): string {
    return math.pointFigures(axes, cell, m, valueLabel).join('\n');
  }
  function figure(host: Element, svg: SVGElement): void {
    const fig = doc.createElement('figure');
    fig.appendChild(svg);
    host.appendChild(fig);
  }

  /** A line chart: categories along x (the axis's values, evenly spaced), the lines' points, a legend. */
  function plot(host: Element, p: Plot): void {
    const left = 64;
    const right = 16;
    // Room above the plot for the title and the y axis's name, clear of the top tick's label.
    const top = 54;
    const plotHeight = 200;
    const bottom = top + plotHeight;
    const plotWidth = p.width - left - right;
    const values = p.lines.flatMap((line) => line.points.map((point) => point.y)).filter((v) => Number.isFinite(v));
    const ticks = p.scale === 'log' && values.length > 0 ? math.logTicks(Math.min(...values), Math.max(...values)) : math.linearTicks(Math.max(0, ...values));
    const low = ticks[0] ?? 0;
    const high = ticks[ticks.length - 1] ?? 1;
    const yOf = (value: number): number => {
      const share = p.scale === 'log' ? (Math.log10(value) - Math.log10(low)) / (Math.log10(high) - Math.log10(low)) : (value - low) / (high - low || 1);
      return Math.round((bottom - share * plotHeight) * 10) / 10;
    };
    const slot = plotWidth / Math.max(1, p.xValues.length);
    const xOf = (index: number): number => Math.round((left + (index + 0.5) * slot) * 10) / 10;

    // The legend below the plot, wrapped into rows: its height sets the drawing's.
    const legendTop = bottom + 52;
    const entries: { line: Line; x: number; y: number }[] = [];
    let lx = left;
    let ly = legendTop;
    for (const line of p.lines) {
      const width = 34 + line.label.length * 7.3 + 18;
      if (lx + width > p.width - right && lx > left) {
        lx = left;
        ly += 18;
      }
      entries.push({ line, x: lx, y: ly });
      lx += width;
    }
    const height = (p.lines.length > 0 ? ly : bottom + 40) + 16;

    const svg = svgNode(
      'svg',
      {
        class: `emq grid-chart ${p.chart}`,
        width: p.width,
        height,
        viewBox: `0 0 ${p.width} ${height}`,
        role: 'img',
        'aria-label': p.title,
        'data-chart': p.chart,
        'data-scale': p.scale,
      },
      null,
    );
    svgNode('rect', { x: 0, y: 0, width: p.width, height, class: 'backdrop' }, svg);
    svgText(svg, 8, 18, p.title, 'title');
    svgText(svg, left - 52, 36, `${p.yTitle}${p.scale === 'log' ? ' (log scale)' : ''}`, 'axis-label');
    for (const tick of ticks) {
      const y = yOf(tick);
      svgNode('line', { x1: left, y1: y, x2: p.width - right, y2: y, class: 'gridline' }, svg);
      svgText(svg, left - 6, y + 4, math.tickLabel(tick), 'tick', 'end');
    }
    svgNode('line', { x1: left, y1: top, x2: left, y2: bottom, class: 'axis' }, svg);
    svgNode('line', { x1: left, y1: bottom, x2: p.width - right, y2: bottom, class: 'axis' }, svg);
    p.xValues.forEach((value, i) => svgText(svg, xOf(i), bottom + 16, value, 'tick', 'middle'));
    svgText(svg, left + plotWidth / 2, bottom + 34, p.xTitle, 'axis-label', 'middle');

    p.lines.forEach((line, i) => {
      const group = svgNode('g', { class: 'line', 'data-line': i }, svg);
      const points = [...line.points].sort((a, b) => a.x - b.x);
      if (points.length > 1) {
        const path = svgNode(
          'polyline',
          { points: points.map((point) => `${xOf(point.x)},${yOf(point.y)}`).join(' '), class: `series c${line.colour % 6}` },
          group,
        );
        if (line.dash !== '') path.setAttribute('stroke-dasharray', line.dash);
      }
      for (const point of points) {
        const circle = svgNode(
          'circle',
          {
            cx: xOf(point.x),
            cy: yOf(point.y),
            r: 4.5,
            class: `point c${line.colour % 6}`,
            'data-mode': point.mode,
            'data-cell': point.cell,
            'data-value': String(point.y),
          },
          group,
        );
        svgNode('title', {}, circle).textContent = point.title;
      }
    });
    for (const entry of entries) {
      const swatch = svgNode('line', { x1: entry.x, y1: entry.y - 4, x2: entry.x + 26, y2: entry.y - 4, class: `swatch c${entry.line.colour % 6}` }, svg);
      if (entry.line.dash !== '') swatch.setAttribute('stroke-dasharray', entry.line.dash);
      svgNode('circle', { cx: entry.x + 13, cy: entry.y - 4, r: 3.5, class: `point c${entry.line.colour % 6}` }, svg);
      svgText(svg, entry.x + 34, entry.y, entry.line.label, 'label');
    }
    figure(host, svg);
  }

  /** The points of one mode: the cells that match `combo`, placed along `xAxis`, y from `pick`. */
  function pointsOf(mode: string, xAxis: GridAxisJson, combo: Readonly<Record<string, number>>, pick: (m: GridModeCellJson) => number): Point[] {
    const points: Point[] = [];
    for (const cell of cells) {
      const m = modeOf(cell, mode);
      const x = xAxis.values.indexOf(cell.at[xAxis.flag] ?? Number.NaN);
      if (!m || x < 0 || !matches(cell, combo)) continue;
      points.push({ x, y: pick(m), cell: cell.index, mode, title: tooltip(cell, m) });
    }
    return points;
  }

  const first = axes[0];
  if (cells.length === 0 || !first) {
    const why = cells.length === 0 ? 'No cell finished: there is nothing to draw.' : 'The grid varies no axis: there is nothing to draw along.';
    for (const host of [anomalyHost, speedHost, reproductionHost]) note(host, why);
    return;
  }
  const second = axes[1];
  const rest = axes.slice(2);
  const hasCell = (combo: Readonly<Record<string, number>>): boolean => cells.some((cell) => matches(cell, combo));

  // 1. The anomaly rate against the first axis: per mode (and combination of the axes past the
  //    second), one line per value of the second axis.
  if (anomalyHost) {
    for (const mode of modes) {
      for (const combo of combinations(rest).filter(hasCell)) {
        const lineCombos = second
          ? second.values.map((value) => ({ label: valueLabel(second.flag, value), combo: { ...combo, [second.flag]: value } }))
          : [{ label: mode, combo }];
        const lines = lineCombos
          // A colour and a dash pattern per line: told apart without telling colours apart.
          .map((item, i) => ({
            label: item.label,
            colour: i,
            dash: DASHES[i % DASHES.length] ?? '',
            points: pointsOf(mode, first, item.combo, (m) => m.doubleRecoveriesPer1000),
          }))
          .filter((line) => line.points.length > 0);
        if (lines.length === 0) continue;
        const where = comboText(combo);
        plot(anomalyHost, {
          chart: 'anomaly',
          title: `${mode}${where === '' ? '' : ` · ${where}`}`,
          xTitle: axisTitle(first.flag),
          xValues: first.values.map(String),
          yTitle: 'double recoveries per 1,000 jobs',
          scale: 'linear',
          lines,
          width: 520,
        });
      }
    }
  }

  // 2. Jobs/s against latency (or the axis standing in for it): every mode on one chart, a colour
  //    per mode and a dash pattern per combination of the other axes.
  if (speedHost) {
    const latencyIndex = axes.findIndex((axis) => axis.flag === 'latency');
    const xIndex = latencyIndex >= 0 ? latencyIndex : axes.length > 1 ? 1 : 0;
    const xAxis = axes[xIndex] ?? first;
    const others = axes.filter((_, i) => i !== xIndex);
    const combos = combinations(others).filter(hasCell);
    const lines: Line[] = [];
    modes.forEach((mode, mi) => {
      combos.forEach((combo, ci) => {
        const where = comboText(combo);
        const points = pointsOf(mode, xAxis, combo, (m) => m.jobsPerSec);
        if (points.length > 0) lines.push({ label: `${mode}${where === '' ? '' : ` · ${where}`}`, colour: mi, dash: DASHES[ci % DASHES.length] ?? '', points });
      });
    });
    plot(speedHost, {
      chart: 'speed',
      title: `jobs per second against ${axisTitle(xAxis.flag)}`,
      xTitle: axisTitle(xAxis.flag),
      xValues: xAxis.values.map(String),
      yTitle: 'jobs/s',
      scale: math.yScaleFor(lines.flatMap((line) => line.points.map((point) => point.y))),
      lines,
      width: 1040,
    });
  }

  // 3. With trials: the share of trials that raced, per cell, as a heatmap per mode.
  if (reproductionHost && grid.trials > 1) {
    const columns: readonly (number | undefined)[] = second ? second.values : [undefined];
    const cellWidth = 78;
    const cellHeight = 32;
    const left = 110;
    const top = 58;
    for (const mode of modes) {
      for (const combo of combinations(rest).filter(hasCell)) {
        const width = Math.max(320, left + columns.length * cellWidth + 16);
        const height = top + first.values.length * cellHeight + 36;
        const where = comboText(combo);
        const title = `${mode}${where === '' ? '' : ` · ${where}`}`;
        const svg = svgNode(
          'svg',
          {
            class: 'emq grid-chart reproduction',
            width,
            height,
            viewBox: `0 0 ${width} ${height}`,
            role: 'img',
            'aria-label': `${title}: reproduction rate`,
            'data-chart': 'reproduction',
            'data-mode': mode,
          },
          null,
        );
        svgNode('rect', { x: 0, y: 0, width, height, class: 'backdrop' }, svg);
        svgText(svg, 8, 18, title, 'title');
        svgText(svg, left, 36, second ? axisTitle(second.flag) : '', 'axis-label');
        svgText(svg, 8, top - 8, `${axisTitle(first.flag)} ↓`, 'axis-label');
        columns.forEach((column, ci) =>
          svgText(svg, left + ci * cellWidth + cellWidth / 2, top - 8, column === undefined ? '' : String(column), 'tick', 'middle'),
        );
        first.values.forEach((row, ri) => {
          const y = top + ri * cellHeight;
          svgText(svg, left - 10, y + cellHeight / 2 + 4, String(row), 'tick', 'end');
          columns.forEach((column, ci) => {
            const x = left + ci * cellWidth;
            const at = second && column !== undefined ? { ...combo, [first.flag]: row, [second.flag]: column } : { ...combo, [first.flag]: row };
            const cell = cells.find((c) => matches(c, at));
            const m = cell ? modeOf(cell, mode) : undefined;
            if (!cell || !m) {
              svgNode('rect', { x: x + 1, y: y + 1, width: cellWidth - 2, height: cellHeight - 2, class: 'heat missing' }, svg);
              svgText(svg, x + cellWidth / 2, y + cellHeight / 2 + 4, '—', 'tick', 'middle');
              return;
            }
            const rate = m.reproductionRate;
            const rect = svgNode(
              'rect',
              {
                x: x + 1,
                y: y + 1,
                width: cellWidth - 2,
                height: cellHeight - 2,
                class: `heat ${rate > 0 ? 'raced' : 'clean'}`,
                'data-mode': mode,
                'data-cell': cell.index,
                'data-value': String(rate),
              },
              svg,
            );
            // Shade by the share of trials that raced: faint at one in many, solid at all of them.
            if (rate > 0) rect.setAttribute('fill-opacity', String(Math.round((0.2 + 0.8 * Math.min(1, rate)) * 100) / 100));
            svgNode('title', {}, rect).textContent = tooltip(cell, m);
            svgText(svg, x + cellWidth / 2, y + cellHeight / 2 + 4, `${m.racedTrials}/${m.trials}`, `heat-label${rate >= 0.6 ? ' strong' : ''}`, 'middle');
          });
        });
        svgText(svg, 8, height - 12, 'k/n: trials with an anomaly / trials', 'label');
        figure(reproductionHost, svg);
      }
    }
  }
}

/**
 * The page's one script: the drawing function and its helpers, each inlined from its compiled
 * source, called on the page's document. grid-page.ts allows exactly this text by its hash.
 */
export function chartScript(): string {
  const math = `{ yScaleFor: ${yScaleFor.toString()},\nlinearTicks: ${linearTicks.toString()},\nlogTicks: ${logTicks.toString()},\ntickLabel: ${tickLabel.toString()},\npointFigures: ${pointFigures.toString()},\nvalueLabel: ${valueLabel.toString()} }`;
  return `"use strict";\n(${drawGridCharts.toString()})({ doc: document, math: ${math} });\n`;
}

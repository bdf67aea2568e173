/**
 * The anomaly counts per mode as horizontal bars, in SVG. With a trials summary, each count is
 * drawn as its spread over the trials (min to max, median marked) beside the mode's reproduction
 * rate. One linear scale for the whole chart, so modes compare at a glance.
 */
import { escapeMarkup as esc } from './escape.js';
import type { Spread } from '../audit/trials.js';
import { anomalyOf, isSpread, reportedAnomalies, type RunJson, type TrialSummaryJson } from './report-data.js';
import type { Drawing } from './sequence-diagram.js';
import type { Anomaly } from '../shared/model.js';
import { headWords } from '../report/legend.js';
import { headingOf } from '../report/figure-heading.js';
import { groupFigure, percent } from '../shared/text.js';

/**
 * A figure's label: the words of its heading in FIGURES ("double\nrecoveries" → "double recoveries"),
 * in the words of the queue of `modes` where it names one of its parts (report/figure-heading.ts).
 */
export function figureLabel(name: string, modes: readonly string[]): string {
  return headWords(headingOf(name, modes));
}

const BARS_WIDTH = 920;
const LABEL_X = 24;
const BAR_X = 190;
const BAR_SPAN = 420;
const ROW = 20;

const text = (x: number, y: number, content: string, cls: string): string => `<text x="${x}" y="${y}" class="${cls}">${esc(content)}</text>`;

const axis = (from: number, to: number): string => `<line x1="${BAR_X}" y1="${from}" x2="${BAR_X}" y2="${to}" class="axis"/>`;

/** Where a count lands on the bar axis: 0 at the axis, the chart's largest count at its end. */
function barLength(value: number, largest: number, span = BAR_SPAN): number {
  if (largest <= 0 || value <= 0) return 0;
  return Math.max(1, Math.round((value / largest) * span));
}

/** The share of trials as a count: "20 of 20 (100%)". */
export function rateShare(rate: number, trials: number): string {
  return `${Math.round(rate * trials)} of ${trials} (${percent(rate)})`;
}

/** The share of trials as the chart prints it: "anomalies in 20 of 20 trials (100%)". */
function describeRate(rate: number, trials: number): string {
  return `anomalies in ${rateShare(rate, trials).replace(/ \(/, ` trial${trials === 1 ? '' : 's'} (`)}`;
}

/** A count's spread over the trials; null where the trials did not measure it. */
export function spreadOf(summary: TrialSummaryJson, anomaly: Anomaly): Spread | null {
  const value = summary[anomaly];
  return isSpread(value) ? value : null;
}

/** What the chart prints for a count not measured. */
const NOT_MEASURED = 'not measured';

function runTitle(run: RunJson): string {
  const trial = run.trial === undefined ? '' : ` · trial ${run.trial}`;
  return `${run.mode}${trial} · ${run.sweepers} sweeper${run.sweepers === 1 ? '' : 's'} · ${groupFigure(run.jobs)} jobs`;
}

function barsOfRuns(runs: readonly RunJson[]): { rows: string[]; height: number } {
  const anomalies = reportedAnomalies(runs);
  const largest = Math.max(0, ...runs.flatMap((run) => anomalies.map((name) => anomalyOf(run, name) ?? 0)));
  const rows: string[] = [];
  let y = 0;
  for (const run of runs) {
    y += ROW + 6;
    rows.push(text(8, y, runTitle(run), 'group-title'));
    rows.push(axis(y + 6, y + anomalies.length * ROW + 4));
    for (const name of anomalies) {
      y += ROW;
      const value = anomalyOf(run, name);
      const length = barLength(value ?? 0, largest);
      rows.push(
        `<g class="bar-row" data-mode="${esc(run.mode)}" data-anomaly="${name}" data-value="${value ?? ''}">` +
          text(LABEL_X, y, figureLabel(name, [run.mode]), 'label') +
          (length > 0 ? `<rect x="${BAR_X}" y="${y - 11}" width="${length}" height="13" class="bar"/>` : '') +
          text(BAR_X + length + 8, y, value === null ? NOT_MEASURED : groupFigure(value), `value ${value === null ? 'na' : value === 0 ? 'ok' : 'bad'}`) +
          '</g>',
      );
    }
    y += 6;
  }
  return { rows, height: y };
}

function barsOfTrials(summaries: readonly TrialSummaryJson[]): { rows: string[]; height: number } {
  const anomalies = reportedAnomalies(summaries);
  const largest = Math.max(0, ...summaries.flatMap((s) => anomalies.map((name) => spreadOf(s, name)?.max ?? 0)));
  const rows: string[] = [];
  let y = 0;
  for (const summary of summaries) {
    y += ROW + 6;
    rows.push(
      `<g class="trial-head" data-mode="${esc(summary.mode)}" data-rate="${summary.reproductionRate}" data-trials="${summary.trials}">` +
        text(8, y, `${summary.mode} · ${summary.trials} trial${summary.trials === 1 ? '' : 's'}`, 'group-title') +
        text(
          BAR_X,
          y,
          `${describeRate(summary.reproductionRate, summary.trials)} · jobs/s ${groupFigure(summary.jobsPerSec.min)}–${groupFigure(summary.jobsPerSec.max)}`,
          'rate',
        ) +
        '</g>',
    );
    rows.push(axis(y + 6, y + anomalies.length * ROW + 4));
    for (const name of anomalies) {
      y += ROW;
      const spread = spreadOf(summary, name);
      if (spread === null) {
        rows.push(
          `<g class="spread-row" data-mode="${esc(summary.mode)}" data-anomaly="${name}">${text(LABEL_X, y, figureLabel(name, [summary.mode]), 'label')}${text(BAR_X + 10, y, NOT_MEASURED, 'value na')}</g>`,
        );
        continue;
      }
      const [min, median, max] = [spread.min, spread.median, spread.max].map((v) => BAR_X + barLength(v, largest));
      const mid = y - 4.5;
      const drawn =
        spread.max > 0
          ? `<rect x="${BAR_X}" y="${y - 11}" width="${(median ?? BAR_X) - BAR_X}" height="13" class="bar" opacity="0.35"/>` +
            `<line x1="${min}" y1="${mid}" x2="${max}" y2="${mid}" class="spread"/>` +
            `<circle cx="${min}" cy="${mid}" r="3.5" class="dot"/><circle cx="${max}" cy="${mid}" r="3.5" class="dot"/>` +
            `<rect x="${(median ?? BAR_X) - 2}" y="${y - 12}" width="4" height="15" class="median"/>`
          : '';
      rows.push(
        `<g class="spread-row" data-mode="${esc(summary.mode)}" data-anomaly="${name}" data-min="${spread.min}" data-median="${spread.median}" data-max="${spread.max}">` +
          text(LABEL_X, y, figureLabel(name, [summary.mode]), 'label') +
          drawn +
          text(
            (max ?? BAR_X) + 10,
            y,
            `min ${groupFigure(spread.min)} · median ${groupFigure(spread.median)} · max ${groupFigure(spread.max)}`,
            `value ${spread.max === 0 ? 'ok' : 'bad'}`,
          ) +
          '</g>',
      );
    }
    y += 6;
  }
  return { rows, height: y };
}

/** The chart: per mode, one row per anomaly count (or its spread over the trials). */
export function anomalyBars(runs: readonly RunJson[], trials?: readonly TrialSummaryJson[]): Drawing {
  const { rows, height } = trials && trials.length > 0 ? barsOfTrials(trials) : barsOfRuns(runs);
  const total = height + 12;
  return { width: BARS_WIDTH, height: total, body: `<rect x="0" y="0" width="${BARS_WIDTH}" height="${total}" class="backdrop"/>${rows.join('')}` };
}

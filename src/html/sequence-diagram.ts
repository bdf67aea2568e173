/**
 * A replay as a sequence diagram in SVG: three lanes (sweep A, the server, sweep B), one step
 * element per replay step in the order the server saw it, each command as an arrow to the server
 * and each reply as an arrow back, the step where the second sweep slips in marked, and the readout
 * underneath. Drawn from the replay's JSON alone; every string is escaped.
 */
import { READOUT_LEGEND, noteFor } from '../explain/render.js';
import type { WireStep } from '../explain/wire.js';
import { formatArgs, formatReply } from '../server/command-text.js';
import { wrap } from '../shared/text.js';
import { escapeMarkup as esc } from './escape.js';
import type { StepJson } from './report-data.js';
import { SVG_STYLE } from './svg-style.js';
import type { Reply } from '../shared/model.js';

const DIAGRAM_WIDTH = 1040;
const LANE = { A: 130, server: 520, B: 910 } as const;
/** The font sizes of svg-style.ts: every text 12px, the title 13px. */
const FONT_PX = 12;
const TITLE_PX = 13;
/** Where the heading's lines start, and the room kept on the right. */
const MARGIN = 12;
/**
 * A monospace character's advance, in ems: DejaVu Sans Mono's is 0.602 (Menlo's and Consolas's
 * about the same), rounded up a little. It gives the 52 columns the arrow labels have always had.
 */
const CHAR_EM = 0.605;
/** A line's width in px as the diagram estimates it: one advance per character (bold is no wider in a monospace face). */
export function textWidth(line: string, fontPx = FONT_PX): number {
  return line.length * CHAR_EM * fontPx;
}
/** The characters of a line that fit `px` at `fontPx`, by that estimate. */
const columnsIn = (px: number, fontPx = FONT_PX): number => Math.floor(px / (CHAR_EM * fontPx));
/** Characters per line between a sweep's lane and the server's: the text starts 12px off the lane (52 at 12px). */
const TEXT_COLUMNS = columnsIn(LANE.server - LANE.A - 12);
const LINE = 15;
const HEAD = 64;

export interface ReadoutRow {
  readonly field: string;
  readonly label: string;
  readonly value: string;
  readonly meaning: string;
}

export interface DiagramInput {
  readonly title: string;
  readonly subtitle: string;
  /** The server lane's head, e.g. "redis 7.0.15". */
  readonly server: string;
  /** The queue's key prefix, left out of keys as the terminal does (the title names it). */
  readonly prefix: string;
  readonly jobId: string;
  /** A replay's max-stalled, for the note of a dead-letter step that had nothing to send; unset for the counter race. */
  readonly maxStalled?: number;
  /** Where the job stands at the end, read back from the server (see NoteContext); unset for the counter race. */
  readonly endedIn?: readonly string[];
  readonly steps: readonly StepJson[];
  readonly readout: readonly ReadoutRow[];
  readonly verdict: string;
  readonly anomaly: boolean;
}

export interface Drawing {
  readonly width: number;
  readonly height: number;
  /** SVG elements, to be placed inside an <svg> (see `svgDocument`). */
  readonly body: string;
}

/**
 * The index of the step at which one sweep acts while the other is between its first and its last
 * step: the moment the second sweep slips in. Undefined when the sweeps ran one after the other (a
 * script is a single step, so two scripts never overlap).
 */
export function slipInIndex(steps: readonly { readonly sweep: string }[]): number | undefined {
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  steps.forEach((step, i) => {
    if (!first.has(step.sweep)) first.set(step.sweep, i);
    last.set(step.sweep, i);
  });
  for (let i = 0; i < steps.length; i++) {
    const sweep = steps[i]?.sweep;
    for (const [other, start] of first) {
      if (other !== sweep && start < i && i < (last.get(other) ?? -1)) return i;
    }
  }
  return undefined;
}

const text = (x: number, y: number, content: string, cls: string, anchor: 'start' | 'middle' | 'end' = 'start'): string =>
  `<text x="${x}" y="${y}" class="${cls}"${anchor === 'start' ? '' : ` text-anchor="${anchor}"`}>${esc(content)}</text>`;

function arrow(from: number, to: number, y: number, cls: string): string {
  const dir = to > from ? 1 : -1;
  const tip = to - dir * 2;
  const head = `${tip},${y} ${tip - dir * 8},${y - 4} ${tip - dir * 8},${y + 4}`;
  return `<line x1="${from}" y1="${y}" x2="${tip - dir * 6}" y2="${y}" class="${cls}"/><polygon points="${head}" class="${cls}-head"/>`;
}

/** One step: its commands and replies as arrows with their text, and what they mean for the job. */
function drawStep(step: StepJson, index: number, y0: number, input: DiagramInput, slipIn: boolean): { svg: string; height: number } {
  const lane = step.sweep === 'B' ? LANE.B : LANE.A;
  const toServer = lane < LANE.server ? 1 : -1;
  const textX = lane + toServer * 12;
  const anchor = toServer > 0 ? 'start' : 'end';
  const parts: string[] = [];
  let y = y0 + 8;
  const lines = (content: string, cls: string, indent = '  ') => {
    for (const line of wrap(content, TEXT_COLUMNS, indent)) {
      y += LINE;
      parts.push(text(textX, y, line, cls, anchor));
    }
  };

  step.commands.forEach((command, i) => {
    lines(formatArgs(command, input.prefix), 'command');
    y += 7;
    parts.push(`<g class="send"><title>${esc(command.join(' '))}</title>${arrow(lane, LANE.server, y, 'arrow')}</g>`);
    const reply: Reply | undefined = step.replies[i];
    if (reply !== undefined) {
      const scriptRan = step.step === 'sweep' || (command[0] ?? '').startsWith('EVAL');
      if (scriptRan)
        parts.push(
          `<rect x="${LANE.server - 6}" y="${y}" width="12" height="${LINE + 10}" class="activation"><title>the script runs to its end before any other command</title></rect>`,
        );
      lines(formatReply(reply), 'reply');
      y += 7;
      parts.push(arrow(LANE.server, lane, y, 'return'));
    }
  });
  const note = noteFor(step as WireStep, input.jobId, {
    steps: input.steps,
    ...(input.maxStalled !== undefined ? { maxStalled: input.maxStalled } : {}),
    ...(input.endedIn !== undefined ? { endedIn: input.endedIn } : {}),
  });
  if (note) {
    y += 4;
    lines(`= ${note}`, 'note', '    ');
  }
  y += 10;
  const height = y - y0;

  const sweepLabel =
    step.sweep === 'B'
      ? text(LANE.B + 14, y0 + 8 + LINE, `${index + 1} ${step.step}`, 'step-label')
      : text(LANE.A - 14, y0 + 8 + LINE, `${index + 1} ${step.step}`, 'step-label', 'end');
  const marker: string[] = [];
  if (slipIn) {
    const other = step.sweep === 'B' ? 'A' : 'B';
    const side = step.sweep === 'B' ? LANE.A + 12 : LANE.server + 12;
    marker.push(
      `<rect x="0" y="${y0}" width="5" height="${height}" class="slip-bar"/>`,
      text(side, y0 + 8 + LINE, `${step.sweep} slips in here:`, 'slip-text'),
      text(side, y0 + 8 + 2 * LINE, `${other} has not finished its sweep`, 'slip-text'),
    );
  }
  const cls = `step${slipIn ? ' slip' : ''}${index % 2 === 1 ? ' odd' : ''}`;
  const svg = `<g class="${cls}" data-step="${index + 1}" data-sweep="${esc(step.sweep)}" data-name="${esc(step.step)}"><rect x="0" y="${y0}" width="${DIAGRAM_WIDTH}" height="${height}" class="step-band"/>${marker.join('')}${sweepLabel}${parts.join('')}</g>`;
  return { svg, height };
}

function laneHead(x: number, label: string, sub: string, cls: string): string {
  return `<g class="lane-head ${cls}"><rect x="${x - 85}" y="${HEAD - 44}" width="170" height="36" rx="6"/>${text(x, HEAD - 29, label, 'lane-name', 'middle')}${sub ? text(x, HEAD - 14, sub, 'lane-sub', 'middle') : ''}</g>`;
}

/**
 * The title and the subtitle, each wrapped to the drawing's width (a long queue name in the keys'
 * prefix, a long schedule) rather than cut off at its edge: one line each, more as they need.
 */
function heading(input: DiagramInput): { svg: string[]; lines: number } {
  const room = DIAGRAM_WIDTH - 2 * MARGIN;
  const lines = [
    ...wrap(input.title, columnsIn(room, TITLE_PX), '  ').map((line) => ({ line, cls: 'title' })),
    ...wrap(input.subtitle, columnsIn(room), '  ').map((line) => ({ line, cls: 'subtitle' })),
  ];
  return { svg: lines.map(({ line, cls }, i) => text(MARGIN, (i + 1) * (LINE + 2), line, cls)), lines: lines.length };
}

export function sequenceDiagram(input: DiagramInput): Drawing {
  const head = heading(input);
  const top = head.lines * (LINE + 2) + 8;
  const slip = slipInIndex(input.steps);
  const header = head.svg;
  let y = top + HEAD + 6;
  const steps: string[] = [];
  input.steps.forEach((step, i) => {
    const drawn = drawStep(step, i, y, input, i === slip);
    steps.push(drawn.svg);
    y += drawn.height;
  });
  const lifelinesEnd = y;
  const lifelines = [LANE.A, LANE.server, LANE.B].map(
    (x) => `<line x1="${x}" y1="${top + HEAD - 8}" x2="${x}" y2="${lifelinesEnd}" class="lifeline${x === LANE.server ? ' server' : ''}"/>`,
  );
  const heads = [
    laneHead(LANE.A, 'sweep A', 'own connection', 'sweep'),
    laneHead(LANE.server, 'server', input.server, 'server'),
    laneHead(LANE.B, 'sweep B', 'own connection', 'sweep'),
  ].map((head) => `<g transform="translate(0,${top})">${head}</g>`);

  y += 14;
  const readout: string[] = [text(12, (y += LINE), `readout (${READOUT_LEGEND}):`, 'readout-head')];
  for (const row of input.readout) {
    y += LINE + 2;
    readout.push(
      `<g class="readout-row" data-readout="${esc(row.field)}">${text(30, y, row.label, 'readout-label')}${text(200, y, row.value, 'readout-value')}${text(260, y, row.meaning, 'readout-meaning')}</g>`,
    );
  }
  for (const line of wrap(input.verdict, 120, '  ')) readout.push(text(12, (y += LINE + 4), line, input.anomaly ? 'verdict bad' : 'verdict ok'));
  const height = y + 16;
  const body = [
    `<rect x="0" y="0" width="${DIAGRAM_WIDTH}" height="${height}" class="backdrop"/>`,
    ...header,
    `<g class="steps">${steps.join('')}</g>`,
    ...lifelines,
    ...heads,
    ...readout,
  ].join('');
  return { width: DIAGRAM_WIDTH, height, body };
}

/** Stacks drawings into one standalone SVG document with its own light and dark styles. */
export function svgDocument(drawings: readonly Drawing[], title: string, gap = 24): string {
  const width = Math.max(0, ...drawings.map((d) => d.width));
  let y = 0;
  const placed = drawings.map((d) => {
    const g = `<g transform="translate(0,${y})">${d.body}</g>`;
    y += d.height + gap;
    return g;
  });
  const height = Math.max(0, y - gap);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="emq" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img">`,
    `<title>${esc(title)}</title>`,
    `<style>${SVG_STYLE}</style>`,
    ...placed,
    '</svg>',
  ].join('');
}

/**
 * `emq-race explore --html`: one self-contained page drawn from the object `explore --json`
 * prints. Per mode, the outcome matrix (schedules, share and executions per class, and the fewest
 * switches that reach it) and each class's witness as a sequence diagram: a lane per sweep and one
 * for the server, each round trip an arrow to the server in the order the server ran them, and
 * every switch of sweep marked. Every string is escaped.
 */
import type { ExplorationJson, ExploreReportJson } from '../explore/render.js';
import { groupThousands, plural } from '../shared/text.js';
import { commandBlock, factList, htmlDocument, passwordClause, serverFacts } from './document.js';
import { escapeMarkup as esc } from './escape.js';
import { PAGE_STYLE } from './page-style.js';
import { SVG_STYLE } from './svg-style.js';

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
const LANE_GAP = 170;
const FIRST_LANE = 90;
const ROW = 22;
const HEAD = 58;

export interface ExplorePageContext {
  readonly command: string;
  readonly generatedAt: string;
}

interface Turn {
  readonly sweep: string;
  readonly command: string;
}

/** A witness's `schedule` (`A:zrangebyscore,B:zrangebyscore,…`) as its turns. Pure. */
export function witnessTurns(schedule: string): Turn[] {
  return schedule
    .split(',')
    .filter((item) => item !== '')
    .map((item) => {
      const [sweep = '', command = ''] = item.split(':');
      return { sweep, command };
    });
}

/** The share of a class, as the terminal table prints it. */
function share(part: number, whole: number): string {
  if (whole === 0) return '-';
  const value = (100 * part) / whole;
  return `${value >= 10 || value === 0 ? value.toFixed(0) : value.toFixed(1)}%`;
}

/** One witness as a sequence diagram: lanes A, B (and C), then the server's; a row per round trip. */
function witnessDiagram(witness: ExplorationJson['witnesses'][number], sweeps: readonly string[], label: string): string {
  const turns = witnessTurns(witness.schedule);
  const laneX = new Map(sweeps.map((sweep, i) => [sweep, FIRST_LANE + i * LANE_GAP]));
  const serverX = FIRST_LANE + sweeps.length * LANE_GAP + 40;
  const width = serverX + 110;
  const height = HEAD + turns.length * ROW + 24;
  const parts: string[] = [`<rect class="backdrop" x="0" y="0" width="${width}" height="${height}"/>`];
  const head = (x: number, name: string, cls: string) =>
    `<g class="lane-head"><rect x="${x - 50}" y="12" width="100" height="26" rx="4"/><text class="lane-name" x="${x}" y="30" text-anchor="middle">${esc(name)}</text></g>` +
    `<line class="lifeline${cls}" x1="${x}" y1="38" x2="${x}" y2="${height - 10}"/>`;
  for (const sweep of sweeps) parts.push(head(laneX.get(sweep) ?? 0, `sweep ${sweep}`, ''));
  parts.push(head(serverX, 'server', ' server'));
  turns.forEach((turn, i) => {
    const y = HEAD + i * ROW + ROW / 2;
    const x = laneX.get(turn.sweep) ?? FIRST_LANE;
    const switched = i > 0 && turns[i - 1]?.sweep !== turn.sweep;
    const band = `<rect class="step-band" x="4" y="${y - ROW / 2}" width="${width - 8}" height="${ROW}"/>`;
    parts.push(
      `<g class="step turn${switched ? ' slip switch' : i % 2 === 1 ? ' odd' : ''}" data-sweep="${esc(turn.sweep)}" data-command="${esc(turn.command)}">${band}` +
        `<text class="step-label" x="12" y="${y + 4}">${i + 1}</text>` +
        `<line class="arrow" x1="${x}" y1="${y}" x2="${serverX - 7}" y2="${y}"/>` +
        `<path class="arrow-head" d="M${serverX} ${y} l-8 -4 v8 z"/>` +
        `<text class="command" x="${x + 8}" y="${y - 4}">${esc(turn.command.toUpperCase())}</text>` +
        (switched ? `<text class="slip-text" x="${serverX + 10}" y="${y + 4}">switch</text>` : '') +
        '</g>',
    );
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" class="emq witness" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(label)}">${parts.join('')}</svg>`;
}

/**
 * A witness's round trips as a list, in the order the server ran them, each switch named: what
 * the drawing shows, for the keyboard, a screen reader or a copy (the drawing is one image).
 */
function turnList(witness: ExplorationJson['witnesses'][number]): string {
  const turns = witnessTurns(witness.schedule);
  const items = turns.map((turn, i) => {
    const switched = i > 0 && turns[i - 1]?.sweep !== turn.sweep;
    return `<li data-turn="${i + 1}">sweep ${esc(turn.sweep)}: ${esc(turn.command.toUpperCase())}${switched ? ' <span class="muted">(a switch)</span>' : ''}</li>`;
  });
  return `<details class="turns"><summary>The round trips in order, as text</summary><ol>${items.join('')}</ol></details>`;
}

/** What was explored, in words: every schedule, or how many of them the bound covers. */
function coverage(mode: ExplorationJson): string {
  const turns = Object.entries(mode.turns)
    .map(([sweep, n]) => `${sweep}'s ${n}`)
    .join(', ');
  const covered =
    mode.maxSwitches === null
      ? `${groupThousands(mode.schedules)} schedules`
      : `${groupThousands(mode.schedules)} of ${groupThousands(mode.allSchedules)} schedules (those with at most ${plural(mode.maxSwitches, 'preemption')})`;
  return `${covered} of ${turns} round trips, ${groupThousands(mode.executions)} distinct executions${mode.complete ? '' : ' (incomplete: stopped before the end)'}`;
}

function modeSection(mode: ExplorationJson): string {
  const name = esc(mode.mode);
  const rows = Object.entries(mode.outcomes).map(([outcome, schedules]) => {
    const witness = mode.witnesses.find((w) => w.outcome === outcome);
    const cls = outcome === 'clean' ? 'ok' : 'bad';
    const cell = (field: string, value: string) => `<td class="num" data-field="${field}">${esc(value)}</td>`;
    return [
      `<tr data-outcome="${esc(outcome)}">`,
      `<th scope="row" class="anomaly ${cls}">${esc(outcome)}</th>`,
      cell('schedules', groupThousands(schedules)),
      cell('share', share(schedules, mode.schedules)),
      cell('executions', groupThousands(mode.outcomeExecutions[outcome] ?? 0)),
      cell('switches', witness === undefined ? '-' : String(witness.switches)),
      '</tr>',
    ].join('');
  });
  const sweeps = Object.keys(mode.turns);
  const figures = mode.witnesses.map((witness) => {
    const label = `${mode.mode}: ${witness.outcome} in ${witness.switches} switch${witness.switches === 1 ? '' : 'es'}`;
    const replay = witness.command === null ? '' : `<pre class="witness-command"><code>${esc(witness.command)}</code></pre>`;
    return [
      `<figure class="witness" data-mode="${name}" data-outcome="${esc(witness.outcome)}" data-switches="${witness.switches}">`,
      witnessDiagram(witness, sweeps, label),
      `<figcaption>${esc(witness.outcome)}: the fewest switches (${witness.switches}) that reach it, each round trip in the order the server ran it.${witness.command === null ? '' : ' To replay it step by step:'}</figcaption>`,
      replay,
      turnList(witness),
      '</figure>',
    ].join('\n');
  });
  return [
    `<section class="mode" id="mode-${name}" data-mode="${name}">`,
    `<h2>${name}</h2>`,
    `<p class="lede">${esc(coverage(mode))}</p>`,
    '<div class="scroll">',
    `<table class="outcomes" data-mode="${name}"><thead><tr><th>outcome</th><th>schedules</th><th>share</th><th>executions</th><th>fewest switches</th></tr></thead>`,
    `<tbody>${rows.join('')}</tbody></table>`,
    '</div>',
    `<p class="note">${mode.modelAgrees ? "Every execution sent the commands the strategy's model predicts and ended as it predicts." : "Some executions did not end as the strategy's model predicts: see the JSON."}</p>`,
    ...figures,
    '</section>',
  ].join('\n');
}

export function explorePage(report: ExploreReportJson, ctx: ExplorePageContext): string {
  const bound = report.maxSwitches === null ? 'none: every schedule' : `at most ${plural(report.maxSwitches, 'preemption')}`;
  const facts: [string, string][] = [
    ...serverFacts(report.server),
    ['sweeps', String(report.sweeps)],
    ['bound', bound],
    ['max-stalled', String(report.maxStalled)],
    ['stalled before', String(report.stalledBefore)],
    [
      'complete',
      report.complete
        ? 'yes'
        : `no${report.stopped ? `: ${report.stopped.message}` : ''}${report.notStarted?.length ? `; not started: ${report.notStarted.join(', ')}` : ''}`,
    ],
    ['finished', ctx.generatedAt],
  ];
  const sections = [
    '<header>',
    '<h1>emq-race explore</h1>',
    `<p class="lede">Every order of ${report.sweeps === 2 ? 'two' : 'three'} sweeps' round trips on one job${report.maxSwitches === null ? '' : ' within the bound'}, each run on the job seeded afresh in one queue of the server and its outcome read back and judged by the audit. A schedule gives each sweep as many turns as its longest execution took; schedules that differ only in where a stopped sweep's turns pass are one execution.</p>`,
    '</header>',
    '<section id="run">',
    '<h2>The exploration</h2>',
    factList(facts),
    `<p class="note">To run it again${passwordClause(ctx.command)}:</p>`,
    commandBlock(ctx.command),
    '</section>',
    ...report.modes.map(modeSection),
    '<section id="data">',
    '<h2>The data</h2>',
    '<p class="note">Every figure on this page comes from the JSON object embedded in it as <code>&lt;script type="application/json" id="emq-report"&gt;</code>, which is what <code>explore --json</code> prints.</p>',
    '</section>',
  ];
  return htmlDocument({ title: 'emq-race explore', csp: CSP, style: `${PAGE_STYLE}\n${SVG_STYLE}`, sections, dataId: 'emq-report', data: report });
}

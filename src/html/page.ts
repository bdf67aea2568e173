/**
 * The HTML report: one self-contained file (inline CSS and SVG, no script, nothing fetched) drawn
 * from the run's own JSON, which it also carries in a `<script type="application/json">` block so a
 * reader can check every figure. A Content-Security-Policy forbids any fetch or script outright.
 */
import { counterVerdict, replayOrder, replayTitle, verdict } from '../explain/render.js';
import { isCleanReadout, readoutRows, type Readout } from '../explain/readout.js';
import { anomalyBars, figureLabel, rateShare, spreadOf } from './bars.js';
import { escapeMarkup as esc } from './escape.js';
import { commandBlock, factList, htmlDocument, passwordClause, serverFacts } from './document.js';
import { PAGE_STYLE } from './page-style.js';
import {
  reportedAnomalies,
  type CounterJson,
  type ExplainReportJson,
  type RaceReportJson,
  type ReplayJson,
  type RunJson,
  type TrialSummaryJson,
} from './report-data.js';
import type { ServerJson } from '../report/json.js';
import { sequenceDiagram, slipInIndex, svgDocument, type DiagramInput, type Drawing } from './sequence-diagram.js';
import { SVG_STYLE } from './svg-style.js';
import { exampleHeading, exampleProof } from '../report/example.js';
import { sourceLegend } from '../report/legend.js';
import { formatArgs, formatReply } from '../server/command-text.js';
import { ANOMALIES, FIGURES, type InterleavingExample, type ShrunkWitness, type SourcedFigure } from '../shared/model.js';
import { shrinkLines } from '../report/shrink.js';
import { figureShown, latencyWords } from '../report/report.js';
import { inFlightNote, waitRepliesPhrase } from '../report/consequences.js';
import { queueWords } from '../sweepers/strategies.js';
import { groupFigure, groupThousands } from '../shared/text.js';

export interface PageContext {
  /** The command line that reproduces the run, password redacted. */
  readonly command: string;
  /** When the run ended, ISO 8601. */
  readonly generatedAt: string;
  /** emq-race's own version. */
  readonly version: string;
  /** The terminal's plain-words readout, one line per run. */
  readonly readouts?: readonly string[];
}

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

function document(title: string, sections: readonly string[], data: unknown): string {
  return htmlDocument({ title, csp: CSP, style: `${PAGE_STYLE}\n${SVG_STYLE}`, sections, dataId: 'emq-report', data });
}

function inlineSvg(drawing: Drawing, label: string, cls: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" class="emq ${cls}" width="${drawing.width}" height="${drawing.height}" viewBox="0 0 ${drawing.width} ${drawing.height}" role="img" aria-label="${esc(label)}">${drawing.body}</svg>`;
}

function runSection(server: ServerJson, ctx: PageContext, facts: readonly [string, string][]): string {
  const rows: [string, string][] = [...serverFacts(server), ...facts, ['finished', ctx.generatedAt], ['emq-race', ctx.version]];
  return [
    '<section id="run">',
    '<h2>The run</h2>',
    factList(rows),
    ctx.command.includes(' --url ')
      ? `<p class="note">To run it again (on the same server, or drop <code>--url</code> for a private one)${passwordClause(ctx.command)}:</p>`
      : '<p class="note">To run it again (on a private server of its own, as this run did):</p>',
    commandBlock(ctx.command),
    '</section>',
  ].join('\n');
}

function dataSection(): string {
  return [
    '<section id="data">',
    '<h2>The data</h2>',
    '<p class="note">Every figure on this page comes from the JSON object below, which is what <code>--json</code> prints for this run. It is embedded in this file as <code>&lt;script type="application/json" id="emq-report"&gt;</code>: view the page source to read it.</p>',
    '</section>',
  ].join('\n');
}

interface Column {
  readonly head: string;
  readonly field: keyof RunJson;
  readonly anomaly?: boolean;
  /** A figure that is no anomaly and no recovery: shown only where some run has it. */
  readonly other?: boolean;
  /** The figure whose source the legend under the table names. */
  readonly figure?: SourcedFigure;
}

/**
 * The page's table over runs of `modes`: the recoveries, every anomaly of FIGURES, then the other
 * figures (retries, unacknowledged moves, …), between the run's size and its pace.
 */
function tableColumns(modes: readonly string[]): readonly Column[] {
  const others = FIGURES.filter((figure) => !figure.anomaly && figure.field !== 'recoveries');
  return [
    { head: 'sweepers', field: 'sweepers' },
    { head: 'jobs', field: 'jobs' },
    { head: figureLabel('recoveries', modes), field: 'recoveries', figure: 'recoveries' },
    ...ANOMALIES.map((name): Column => ({ head: figureLabel(name, modes), field: name, anomaly: true, figure: name })),
    ...others.map((figure): Column => ({ head: figureLabel(figure.field, modes), field: figure.field as keyof RunJson, other: true })),
    { head: 'wall ms', field: 'wallMs' },
    { head: 'jobs/s', field: 'jobsPerSec' },
  ];
}

/**
 * Columns for these runs: counts that no run of this report measured (no workers, say) get none,
 * and the other figures show where some run has one, or by the terminal table's own rule
 * (figureShown): where a run's flags or mode always show it (unacknowledged moves under --fault, a
 * watch run's retries), at 0 too.
 */
function columnsFor(runs: readonly RunJson[]): readonly Column[] {
  const reported: readonly string[] = reportedAnomalies(runs);
  const shown = (column: Column): boolean => {
    const figure = FIGURES.find((f) => f.field === column.field);
    return runs.some((run) => {
      const value = run[column.field];
      const facts = {
        mode: run.mode,
        cycles: (run.cycles ?? 1) > 1,
        workers: (run.workers ?? 0) > 0,
        observed: run.samples !== null,
        faults: (run.faults?.length ?? 0) > 0,
        value: typeof value === 'number' ? value : null,
      };
      return (typeof value === 'number' && value > 0) || (figure !== undefined && figureShown(figure, facts));
    });
  };
  return tableColumns(runs.map((run) => run.mode)).filter((column) => (column.anomaly ? reported.includes(column.field) : column.other ? shown(column) : true));
}

/** What a cell shows for a count the run did not measure. */
const NOT_MEASURED = '—';

/**
 * The race table: a column per run and a row per figure, as in the terminal, so that it fits the
 * page however many figures a run carries; anomaly cells marked ok (0) or bad, — where a run did
 * not measure a count. With several queues per mode (`totals` given) each column names its queue
 * and node, and each mode's summed column follows. Every cell carries its run (data-run, or
 * data-total) and its field.
 */
function raceTable(runs: readonly RunJson[], totals?: readonly RunJson[]): string {
  const withTrials = runs.some((run) => run.trial !== undefined);
  const perQueue = totals !== undefined && totals.length > 0;
  const figures = columnsFor(runs);
  const columns = [
    ...runs.map((run, i) => ({ run, key: `data-run="${i}"`, mode: run.mode, total: false })),
    ...(totals ?? []).map((run, i) => ({ run, key: `data-total="${i}"`, mode: `${run.mode} total`, total: true })),
  ];
  const cell =
    (field: string, text: string, cls: string) =>
    (column: (typeof columns)[number]): string =>
      `<td class="${cls}${column.total ? ' total' : ''}" ${column.key} data-field="${field}">${esc(text)}</td>`;
  const row = (label: string, cells: readonly string[]): string => `<tr><th scope="row">${esc(label)}</th>${cells.join('')}</tr>`;
  const body = [
    ...(withTrials
      ? [
          row(
            'trial',
            columns.map((c) => cell('trial', String(c.run.trial ?? ''), 'num')(c)),
          ),
        ]
      : []),
    ...(perQueue
      ? [
          row(
            'queue',
            columns.map((c) => cell('queue', c.run.queue, 'mono')(c)),
          ),
          row(
            'node',
            columns.map((c) => cell('node', c.run.node ?? '', 'mono')(c)),
          ),
        ]
      : []),
    ...figures.map((figure) =>
      row(
        figure.head,
        columns.map((c) => {
          const value = c.run[figure.field];
          // A figure the run did not measure is a dash, never 0.
          const unmeasured = value === null || value === undefined;
          const state = figure.anomaly ? ` anomaly ${unmeasured ? 'na' : value === 0 ? 'ok' : 'bad'}` : '';
          // Grouped (30,335; wall ms, to its tenth, 2,136.7), the JSON beside it holding the plain number.
          return cell(figure.field, unmeasured ? NOT_MEASURED : typeof value === 'number' ? groupFigure(value) : String(value), `num${state}`)(c);
        }),
      ),
    ),
  ];
  const head = `<tr><th></th>${columns.map((c) => `<th class="num${c.total ? ' total' : ''}" ${c.key} data-field="mode">${esc(c.mode)}</th>`).join('')}</tr>`;
  return `<div class="scroll"><table id="race-table"><thead>${head}</thead><tbody>\n${body.join('\n')}\n</tbody></table></div>`;
}

/** With trials: one column per mode; rows for the reproduction rate, jobs/s and each count's spread. */
function trialsTable(summaries: readonly TrialSummaryJson[]): string {
  const spreadText = (spread: { min: number; median: number; max: number }) =>
    `${groupFigure(spread.min)} / ${groupFigure(spread.median)} / ${groupFigure(spread.max)}`;
  const modes = summaries.map((s) => s.mode);
  const row = (label: string, cell: (s: TrialSummaryJson) => string) => `<tr><th scope="row">${esc(label)}</th>${summaries.map(cell).join('')}</tr>`;
  const rows = [
    row('trials', (s) => `<td class="num" data-mode="${esc(s.mode)}" data-field="trials">${esc(s.trials)}</td>`),
    row(
      'with anomalies',
      (s) =>
        `<td class="num" data-mode="${esc(s.mode)}" data-field="reproductionRate" data-value="${esc(s.reproductionRate)}">${esc(rateShare(s.reproductionRate, s.trials))}</td>`,
    ),
    row('jobs/s', (s) => `<td class="num" data-mode="${esc(s.mode)}" data-field="jobsPerSec">${esc(spreadText(s.jobsPerSec))}</td>`),
    ...reportedAnomalies(summaries).map((name) =>
      row(figureLabel(name, modes), (s) => {
        const spread = spreadOf(s, name);
        if (spread === null) return `<td class="num anomaly na" data-mode="${esc(s.mode)}" data-field="${name}">${NOT_MEASURED}</td>`;
        return `<td class="num anomaly ${spread.max === 0 ? 'ok' : 'bad'}" data-mode="${esc(s.mode)}" data-field="${name}">${esc(spreadText(spread))}</td>`;
      }),
    ),
  ];
  return `<div class="scroll"><table id="trials-table"><thead><tr><th></th>${summaries.map((s) => `<th>${esc(s.mode)}</th>`).join('')}</tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div>`;
}

/**
 * --fault failover: each run's drill as the moments it went through, in order, the failover
 * marked among them, with what the promoted replica showed after it. Nothing without the drill.
 */
function failoverSection(runs: readonly RunJson[]): string[] {
  const drilled = runs.flatMap((run) => (run.failover ? [{ run, f: run.failover }] : []));
  if (drilled.length === 0) return [];
  const items = drilled.map(({ run, f }) => {
    const lag = f.replicaLagMs > 0 ? `, the link held ${f.replicaLagMs} ms each way` : '';
    const predicted = f.predictedLoss === null ? '' : ` (predicted: ${f.predictedLoss})`;
    const wait = f.waitReplicas
      ? `<li>WAIT ${esc(f.waitReplicas.replicas)} ${esc(f.waitReplicas.timeoutMs)} after each call that moved jobs, ${esc(waitRepliesPhrase(f.waitReplies))}; ${esc(f.waitTimeouts)} timed out, ${esc(f.unconfirmedMoves)} moves unconfirmed${
          f.withoutWait
            ? `; the same schedule without WAIT, run just ${esc(f.withoutWait.order)}: ${esc(f.withoutWait.jobsPerSec)} jobs/s against ${esc(run.jobsPerSec)}, ${esc(f.withoutWait.ackedMovesLost)} acknowledged moves lost`
            : ''
        }.</li>`
      : '';
    return [
      `<li class="drill" data-mode="${esc(run.mode)}" data-trial="${esc(run.trial ?? 1)}"><strong>${esc(run.mode)}${run.trial !== undefined ? `, trial ${esc(run.trial)}` : ''}</strong><ol>`,
      `<li>${esc(f.callsBeforeCut)} sweep calls acknowledged and replicated${esc(lag)}${f.callsBeforeCut < f.after ? esc(` (fewer than --failover-after ${f.after}: the sweeps ran dry first)`) : f.callsBeforeCut > f.after ? esc(` ${inFlightNote(f)}`) : ''}.</li>`,
      `<li>The replication link cut, once the replica had caught up.</li>`,
      `<li>${esc(f.callsAfterCut)} more calls acknowledged by the primary, never replicated${f.callsAfterCut < f.calls ? esc(` (fewer than --failover-calls ${f.calls}: the sweeps ran dry first)`) : ''}.</li>`,
      `<li class="failover-moment" data-field="promotedBy" data-value="${esc(f.promotedBy)}"><strong>Failover:</strong> the primary killed (SIGKILL), the replica promoted by ${f.promotedBy === 'sentinel' ? 'Sentinel' : 'the tool'}, every connection carried over.</li>`,
      `<li>On the promoted replica: <span data-field="ackedMovesLost">${esc(f.ackedMovesLost)}</span> acknowledged moves lost${esc(predicted)}, ${esc(f.jobsRecoveredTwice)} jobs recovered twice, ${esc(f.counterIncrementsLost)} counter increments lost.</li>`,
      f.jobsRunTwice === null
        ? ''
        : `<li>By the workers' own records: <span data-field="jobsRunTwice">${esc(f.jobsRunTwice)}</span> jobs run twice, taken before the failover and again after it.</li>`,
      wait,
      '</ol></li>',
    ].join('');
  });
  return [
    '<section id="failover">',
    '<h2>The failover drill</h2>',
    `<ol class="drills">${items.join('\n')}</ol>`,
    '<p class="note">What each figure counts, and where it comes from: docs/failover.md.</p>',
    '</section>',
  ];
}

/** Under the race table: where each of its figures comes from, and what — means. */
function tableLegend(runs: readonly RunJson[]): string {
  const columns = columnsFor(runs);
  const shown = columns.flatMap((c) => (c.figure ? [{ head: c.head, figure: c.figure }] : []));
  const unmeasured = runs.some((run) => columns.some((c) => run[c.field] === null));
  const lines = sourceLegend(shown, runs, unmeasured, Number.POSITIVE_INFINITY);
  return lines.length > 0 ? `<p class="note" id="sources">${esc(lines.join(' '))} Docs: docs/columns.md.</p>` : '';
}

/**
 * A loop run's example job: every command its sweepers sent, with the reply, in the order the
 * replies prove the server ran them — the race caught in the run itself, beside the replay that
 * `emq-race explain` stages.
 */
function exampleSection(run: RunJson & { readonly example: InterleavingExample }): string {
  const prefix = `emq:{${run.queue}}:`;
  const rows = run.example.commands.map(
    (c, i) =>
      `<tr data-step="${i + 1}"><td class="num">${i + 1}</td><td>s${esc(c.sweeper)}</td><td class="mono">${esc(formatArgs(c.command, prefix))}</td><td class="mono">${esc(c.reply === undefined ? '(no reply)' : formatReply(c.reply))}</td></tr>`,
  );
  return [
    `<section id="example" data-job="${esc(run.example.job)}" data-proven="${run.example.proven}">`,
    '<h2>One job, as the server ran it</h2>',
    `<p class="note">${esc(exampleHeading(run))}</p>`,
    `<div class="scroll"><table id="example-table"><thead><tr><th>#</th><th>sweeper</th><th>command</th><th>reply</th></tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div>`,
    `<p class="note" id="example-proof">${esc(exampleProof(run.example))} The same race, staged step by step on one job: <code>emq-race explain</code>.</p>`,
    '</section>',
  ].join('\n');
}

function uniqueValues(runs: readonly RunJson[], pick: (run: RunJson) => string | number): string {
  return [...new Set(runs.map(pick))].join(', ');
}

/** A setting as a fact, from the runs that used it (a library's run may read no batch, keep no stall limit): none if no run did. */
function usedSetting(name: string, runs: readonly RunJson[], pick: (run: RunJson) => number | null): [string, string][] {
  const used = [...new Set(runs.map(pick).filter((value) => value !== null))];
  return used.length > 0 ? [[name, used.join(', ')]] : [];
}

/** The settings beyond the plain race that the runs used, as facts: only those some run used. */
function consequenceFacts(runs: readonly RunJson[]): [string, string][] {
  const facts: [string, string][] = [];
  const values = <T>(pick: (run: RunJson) => T | undefined, used: (value: T) => boolean): T[] => [
    ...new Set(runs.map(pick).filter((value): value is T => value !== undefined && used(value))),
  ];
  const pending = values(
    (r) => r.pending,
    (p) => p !== 'list',
  );
  if (pending.length > 0) facts.push(['pending', `${pending.join(', ')} (a sorted set: an id stands in it once, however often it is pushed)`]);
  const workers = values(
    (r) => r.workers,
    (w) => w > 0,
  );
  if (workers.length > 0) facts.push(['workers', workers.join(', ')]);
  const cycles = values(
    (r) => r.cycles,
    (c) => c > 1,
  );
  if (cycles.length > 0) facts.push(['cycles', cycles.join(', ')]);
  const faults = values(
    (r) => r.faults?.join(', '),
    (f) => f !== '',
  );
  if (faults.length > 0) facts.push(['faults', faults.join('; ')]);
  if (runs.some((r) => r.samples !== undefined && r.samples !== null)) facts.push(['observer', 'on (--observe)']);
  return facts;
}

/** The library raced and its version (`bullmq 6.7.0`), as a fact, for runs that carry one. */
function libraryFact(runs: readonly RunJson[]): [string, string][] {
  const found = [...new Set(runs.flatMap((r) => (r.library ? [`${r.library.name} ${r.library.version}`] : [])))];
  return found.length > 0 ? [['library', found.join(', ')]] : [];
}

function exampleOf(runs: readonly RunJson[]): string[] {
  const run = runs.find((r): r is RunJson & { example: InterleavingExample } => r.example !== undefined && r.example !== null);
  return run ? [exampleSection(run)] : [];
}

/** What the runs raced, in their queues' words (the model queue's, a library's, or both side by side), as the lede's start. */
function raced(runs: readonly RunJson[]): string {
  const races = [...new Set(runs.map((run) => queueWords(run.mode).race))].join('; and ');
  return `${races.charAt(0).toUpperCase()}${races.slice(1)}`;
}

/** The page for the main command: parameters, the race table, the bars (or spreads), the data. */
export function racePage(report: RaceReportJson, ctx: PageContext): string {
  const { runs } = report;
  const trials = report.trials && report.trials.length > 0 ? report.trials : undefined;
  const totals = report.totals && report.totals.length > 0 ? report.totals : undefined;
  const facts: [string, string][] = [
    ['modes', uniqueValues(runs, (r) => r.mode)],
    // A library's runs (--lib): the package and the version of it found in the user's project.
    ...libraryFact(runs),
    ['sweepers', uniqueValues(runs, (r) => r.sweepers)],
    ['jobs', uniqueValues(runs, (r) => groupThousands(r.jobs))],
    ...usedSetting('batch', runs, (r) => r.batch),
    ...usedSetting('max-stalled', runs, (r) => r.maxStalled),
    // A library's run seeds its own jobs with its own counts: --stalled-before is the model queue's alone.
    ...usedSetting('stalled-before', runs, (r) => (r.library ? null : r.stalledBefore)),
    // What changes how the table reads: a sorted-set pending, the workers, re-leases, faults, the observer.
    ...consequenceFacts(runs),
    ...(trials ? [['trials per mode', [...new Set(trials.map((s) => s.trials))].join(', ')] as [string, string]] : []),
    ...(totals ? [['queues per mode', String(runs.length / totals.length)] as [string, string]] : []),
    ...(report.server.primaries ? [['cluster primaries', report.server.primaries.join(', ')] as [string, string]] : []),
    ...(report.latency ? [['latency', latencyWords(report.latency)] as [string, string]] : []),
  ];
  const readouts = ctx.readouts && ctx.readouts.length > 0 ? `<ul class="readouts">${ctx.readouts.map((line) => `<li>${esc(line)}</li>`).join('')}</ul>` : '';
  const chartCaption = trials
    ? 'Each count over the trials: dots at the minimum and maximum, a bar to the median. One scale for all modes.'
    : totals
      ? 'Each anomaly count of each mode, summed over its queues, on one scale. A clean run has no bars.'
      : 'Each anomaly count of each mode, on one scale. A clean run has no bars.';
  const sections = [
    '<header>',
    '<h1>emq-race: stalled-job recovery under concurrent sweeps</h1>',
    `<p class="lede">${esc(raced(runs))}, then audited: the server's state read back, set against the sweepers' own records of what they moved.</p>`,
    '</header>',
    runSection(report.server, ctx, facts),
    '<section id="table">',
    '<h2>Race table</h2>',
    '<p class="note">Anomaly counts are green at 0 and red otherwise.</p>',
    raceTable(runs, totals),
    tableLegend(runs),
    readouts,
    '</section>',
    ...exampleOf(runs),
    ...(trials
      ? [
          '<section id="trials">',
          '<h2>Over the trials</h2>',
          '<p class="note">Each count: minimum / median / maximum over the mode\'s trials.</p>',
          trialsTable(trials),
          '</section>',
        ]
      : []),
    ...failoverSection(runs),
    ...shrinkSection(report.shrink),
    '<section id="bars">',
    '<h2>Anomalies per mode</h2>',
    `<figure>${inlineSvg(anomalyBars(totals ?? runs, trials), 'anomaly counts per mode', 'bars')}<figcaption>${esc(chartCaption)}</figcaption></figure>`,
    '</section>',
    dataSection(),
  ];
  return document(`emq-race: ${uniqueValues(runs, (r) => r.mode)} on ${report.server.kind} ${report.server.version}`, sections, report);
}

/** Each shrink step's stage, as the page's table names it. */
const STAGE_WORDS: Readonly<Record<ShrunkWitness['steps'][number]['stage'], string>> = {
  jobs: 'half the jobs',
  sweepers: 'a sweeper fewer',
  'one-job': 'one job, two sweeps',
};

/**
 * --shrink: the path from the seeded run to one job and two sweeps, in the report's own words
 * (report/shrink.ts), every seeded run it made, and the explain line that replays the witness.
 */
function shrinkSection(shrink: ShrunkWitness | undefined): string[] {
  if (!shrink) return [];
  const [path = '', said, replay] = shrinkLines(shrink, (line) => line);
  const rows = shrink.steps.map(
    (step, i) =>
      `<tr data-step="${i + 1}"><td class="num">${i + 1}</td><td data-field="stage">${STAGE_WORDS[step.stage]}</td><td class="num">${esc(groupFigure(step.jobs))}</td><td class="num">${esc(step.sweepers)}</td><td class="num">${esc(step.seed)}</td><td class="anomaly ${step.found ? 'bad' : 'ok'}" data-field="found">${step.found ? 'yes' : 'no'}</td></tr>`,
  );
  return [
    '<section id="shrink">',
    '<h2>The anomaly, shrunk</h2>',
    `<p>${esc(path)}</p>`,
    ...(said !== undefined && replay !== undefined ? [`<p>${esc(said)}</p>`, `<pre id="witness"><code>${esc(replay.trim())}</code></pre>`] : []),
    `<div class="scroll"><table id="shrink-table"><thead><tr><th>#</th><th>tried</th><th>jobs</th><th>sweepers</th><th>seed</th><th>${esc(figureLabel(shrink.anomaly, [shrink.mode]))} kept</th></tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div>`,
    '</section>',
  ];
}

function replayDiagramInput(replay: ReplayJson, server: ServerJson): DiagramInput {
  const prefix = `emq:{${replay.queue}}:`;
  const r = replay.readout as Readout;
  return {
    title: replayTitle(replay),
    subtitle: replayOrder(replay),
    maxStalled: replay.maxStalled,
    endedIn: r.endedIn,
    server: `${server.kind} ${server.version}`,
    prefix,
    jobId: replay.jobId,
    steps: replay.steps,
    readout: readoutRows(r, replay.jobId, replay.stalledBefore).map((row) => ({
      field: row.field,
      label: row.label,
      value: row.value,
      meaning: `${row.source} · ${row.meaning}`,
    })),
    verdict: verdict(r, replay.jobId, replay.maxStalled),
    anomaly: !isCleanReadout(r),
  };
}

function counterDiagramInput(race: CounterJson): DiagramInput {
  const prefix = `emq:{${race.queue}}:`;
  const how =
    race.counter === 'in-script' ? 'two HINCRBY inside scripts, sent at the same moment' : 'two client-side read-modify-write cycles, forced to interleave';
  const { expected, reached, lost, extra } = race.readout;
  const made = race.counter === 'in-script' ? 'HINCRBY' : 'write';
  return {
    title: `counter (${race.counter}): ${how}, on job ${race.jobId}'s stalled field (${race.before} before)`,
    subtitle: `keys below are under ${prefix}`,
    server: `${race.server.kind} ${race.server.version}`,
    prefix,
    jobId: race.jobId,
    steps: race.steps,
    readout: [
      { field: 'before', label: 'before', value: String(race.before), meaning: 'client · the value the field was seeded with' },
      { field: 'after', label: 'after', value: String(race.after), meaning: 'server · the field read back after the steps' },
      { field: 'expected', label: 'expected', value: `+${expected}`, meaning: `client · one per ${made} the steps made` },
      { field: 'reached', label: 'reached', value: `+${reached}`, meaning: 'client · what the field gained' },
      { field: 'lost', label: 'lost', value: String(lost), meaning: 'client · expected increments the field does not show' },
      ...(extra > 0 ? [{ field: 'extra', label: 'extra', value: String(extra), meaning: 'client · increments beyond those made' }] : []),
    ],
    verdict: counterVerdict(race.readout),
    anomaly: lost > 0 || extra > 0,
  };
}

function isCounter(report: ExplainReportJson): report is CounterJson {
  return 'counter' in report;
}

/** One diagram per replay (or one for the counter race). */
function explainDiagrams(report: ExplainReportJson): { name: string; input: DiagramInput; drawing: Drawing }[] {
  const inputs = isCounter(report)
    ? [{ name: `counter (${report.counter})`, input: counterDiagramInput(report) }]
    : report.replays.map((replay) => ({ name: replay.mode, input: replayDiagramInput(replay, report.server) }));
  return inputs.map((item) => ({ ...item, drawing: sequenceDiagram(item.input) }));
}

/** `explain --svg`: the diagrams alone, stacked in one standalone SVG. */
export function explainSvg(report: ExplainReportJson): string {
  const diagrams = explainDiagrams(report);
  return `${svgDocument(
    diagrams.map((d) => d.drawing),
    `emq-race explain: ${diagrams.map((d) => d.name).join(', ')} on ${report.server.kind} ${report.server.version}`,
  )}\n`;
}

/**
 * Every command of a replay in full (key prefix and SHA1 as sent) with its reply, as a list a
 * keyboard, a screen reader or a copy can reach: in the drawing the full command is only an
 * arrow's hover title, and the drawing is one image to assistive technology.
 */
function transcript(steps: DiagramInput['steps']): string {
  const items = steps.map((step, i) => {
    const commands = step.commands.map((command, k) => {
      const reply = step.replies[k];
      const answer = reply === undefined ? '' : ` <span class="reply">→ <code>${esc(formatReply(reply))}</code></span>`;
      return `<li data-command><code>${esc(command.join(' '))}</code>${answer}</li>`;
    });
    const sent = commands.length > 0 ? `<ol>${commands.join('')}</ol>` : ' <span class="muted">sends nothing</span>';
    return `<li data-transcript-step="${i + 1}">sweep ${esc(step.sweep)}, ${esc(step.step)}${sent}</li>`;
  });
  return `<details class="transcript"><summary>Every command in full, as sent, with its reply</summary><ol>${items.join('')}</ol></details>`;
}

/** The page for `explain`: the run, one sequence diagram per replay, the data. */
export function explainPage(report: ExplainReportJson, ctx: PageContext): string {
  const diagrams = explainDiagrams(report);
  const facts: [string, string][] = isCounter(report)
    ? [
        ['counter', report.counter],
        ['queue', report.queue],
      ]
    : [
        ['modes', report.replays.map((r) => r.mode).join(', ')],
        ['queues', report.replays.map((r) => r.queue).join(', ')],
        ['max-stalled', [...new Set(report.replays.map((r) => r.maxStalled))].join(', ')],
        ['stalled-before', [...new Set(report.replays.map((r) => r.stalledBefore))].join(', ')],
      ];
  const sections = [
    '<header>',
    '<h1>emq-race explain: two sweeps, one job, step by step</h1>',
    '<p class="lede">Every command each sweep sent and every reply the server gave, in the order the server saw them, then the job read back from the server.</p>',
    '</header>',
    runSection(report.server, ctx, facts),
    ...diagrams.map((d, i) =>
      [
        `<section class="replay" id="replay-${i + 1}" data-replay="${i}">`,
        `<h2>${esc(d.name)}</h2>`,
        `<figure>${inlineSvg(d.drawing, `${d.name}: sequence diagram`, 'sequence')}<figcaption>Solid arrows: commands sent; dashed: the server's replies. Hover an arrow for the full command, or open the list below it.${slipInIndex(d.input.steps) === undefined ? '' : ' A highlighted band marks the step where the second sweep slips in.'}</figcaption></figure>`,
        transcript(d.input.steps),
        '</section>',
      ].join('\n'),
    ),
    dataSection(),
  ];
  return document(`emq-race explain: ${diagrams.map((d) => d.name).join(', ')} on ${report.server.kind} ${report.server.version}`, sections, report);
}

/**
 * Two reporters of one report: a table with a plain-words readout for people, and one JSON object
 * for machines (nothing else on stdout). Both only format what the run measured.
 */
import { shrinkLines } from './shrink.js';
import { Chalk } from 'chalk';
import Table from 'cli-table3';
import { serverHeadline } from '../server/connection.js';
import { groupThousands, plural, wrapLines } from '../shared/text.js';
import { renderFittedTable } from './fitted-table.js';
import { consequenceLines, hasCycles, hasFaults, hasWorkers, observed } from './consequences.js';
import { exampleLines } from './example.js';
import type { RaceReport } from './json.js';
import { NOT_MEASURED, headWords, sourceLegend } from './legend.js';
import type { LatencyReport } from '../server/latency-proxy.js';
import { STRATEGIES, queueWords } from '../sweepers/strategies.js';
import { figureHeading, headingOf } from './figure-heading.js';
import { ANOMALIES, FIGURES, type Figure, type Mode, type PhasesMs, type RunResult, type SourcedFigure } from '../shared/model.js';

export interface Column {
  readonly head: string;
  /** The cell's value; null where the run did not measure it (— in the table, empty in CSV). */
  readonly value: (run: RunResult) => string | number | null;
  /** Anomaly columns are green at zero and red otherwise. */
  readonly anomaly?: true;
  /** The figure whose source the table's legend names. */
  readonly figure?: SourcedFigure;
  /** Columns that apply only to some runs show only when one of them is in the report. */
  readonly applies?: (run: RunResult) => boolean;
  /**
   * A row of the default (fitted) table. Other anomalies are summed there into "other anomalies"
   * and named under it when not zero; other figures show with --wide.
   */
  readonly headline?: true;
}

/** A figure's value in a run; null where the run did not measure it. */
function figureValue(run: RunResult, field: string): number | null {
  const value = (run as unknown as Readonly<Record<string, number | null | undefined>>)[field];
  return value ?? null;
}

/** What decides whether a run shows a figure that only some runs show: its flags, its mode and the figure's value. */
export interface ShownFacts {
  readonly mode: string;
  readonly cycles: boolean;
  readonly workers: boolean;
  readonly observed: boolean;
  readonly faults: boolean;
  /** The figure's value in the run; null where it was not measured. */
  readonly value: number | null;
}

/**
 * Whether a run shows a figure that only some runs show (see ShownWhen in model.ts): one rule for
 * the terminal's table (from the run) and the page's (from its JSON). Pure.
 */
export function figureShown(figure: Figure, facts: ShownFacts): boolean {
  const { value } = facts;
  return (figure.shownWhen ?? []).some((when) => {
    switch (when) {
      case 'cycles':
        return facts.cycles;
      case 'workers':
        return facts.workers;
      case 'observe':
        return facts.observed;
      case 'faults':
        return facts.faults;
      case 'measured':
        return value !== null;
      case 'not-zero':
        return value !== null && value > 0;
      case 'own-column':
        return STRATEGIES[facts.mode as Mode]?.ownColumn === figure.field;
    }
  });
}

function shows(figure: Figure, run: RunResult): boolean {
  return figureShown(figure, {
    mode: run.mode,
    cycles: hasCycles(run),
    workers: hasWorkers(run),
    observed: observed(run),
    faults: hasFaults(run),
    value: figureValue(run, figure.field),
  });
}

/** A figure's column over runs of `modes`: its heading in their queue's words (figure-heading.ts). */
function figureColumn(figure: Figure, modes: readonly string[]): Column {
  return {
    head: figureHeading(figure, modes),
    value: (run) => figureValue(run, figure.field),
    ...(figure.anomaly ? { anomaly: true as const } : {}),
    ...(figure.source ? { figure: figure.field as SourcedFigure } : {}),
    ...(figure.shownWhen ? { applies: (run: RunResult) => shows(figure, run) } : {}),
    ...(figure.headline ? { headline: true as const } : {}),
  };
}

const SECTIONS: readonly Figure['section'][] = ['race', 'mode', 'flag'];

/** The table's columns over runs of `modes` (none: the model queue's): who ran, every figure of FIGURES by section, then what it cost. */
export function tableColumns(modes: readonly string[] = []): readonly Column[] {
  return [
    { head: 'mode', value: (r) => r.mode },
    { head: 'sweepers', value: (r) => r.sweepers },
    { head: 'jobs', value: (r) => r.jobs, headline: true },
    ...SECTIONS.flatMap((section) => FIGURES.filter((figure) => figure.section === section)).map((figure) => figureColumn(figure, modes)),
    { head: 'round trips\nper job', value: (r) => roundTripsPerJob(r) },
    { head: 'wall ms', value: (r) => r.wallMs.toFixed(0) },
    { head: 'jobs/s', value: (r) => r.jobsPerSec, headline: true },
  ];
}

/**
 * Round trips per job the run seeded, to two decimals: what the sweepers spent on each job, the
 * extra recoveries of a race included. Per recovery would make a racing form look cheaper the more
 * it recovers twice (Bee-Queue's naive port: 1.06 per recovery, 4.24 per job).
 */
function roundTripsPerJob(run: Pick<RunResult, 'roundTrips' | 'jobs'>): string {
  return run.jobs > 0 ? (run.roundTrips / run.jobs).toFixed(2) : '-';
}

/**
 * The columns some run shows. The wide table adds every anomaly some run measured, at 0 as well
 * (dead-letter escapes are counted in every run, shown by default only with --cycles or when not 0).
 * A figure no run measured is left out, as the page leaves it out: a row of dashes alone (a queue
 * library that keeps no counter, say) tells nothing the table's absence of it does not.
 */
function columnsFor(runs: readonly RunResult[], wide = false): readonly Column[] {
  const measured = (column: Column): boolean => runs.some((run) => column.value(run) !== null);
  return tableColumns(runs.map((run) => run.mode)).filter(
    (column) => measured(column) && (!column.applies || runs.some(column.applies) || (wide && column.anomaly === true)),
  );
}

/** A run's readout; with several queues it says which queue on which node. */
export function runReadout(report: Pick<RaceReport, 'totals'>, run: RunResult): string {
  return report.totals ? `queue ${run.queue} on ${run.node ?? '?'}: ${readout(run)}` : readout(run);
}

export interface TableLayout {
  readonly color: boolean;
  /** The width to fit (see text.ts); the wide table ignores it, the sentences under it do not. */
  readonly width: number;
  /** Every column, one row per run, however wide. */
  readonly wide: boolean;
}

/** A count's cell: — where not measured, else grouped and, for an anomaly, green at 0 and red otherwise. */
function painter(color: boolean): (value: string | number | null, anomaly?: number | null) => string {
  const paint = new Chalk({ level: color ? 1 : 0 });
  return (value, anomaly) => {
    if (value === null) return NOT_MEASURED;
    const text = groupThousands(value);
    if (anomaly === undefined) return text;
    return anomaly === 0 ? paint.green(text) : paint.red(text);
  };
}

/** An anomaly column's count for the cell's colour (null: not measured); undefined for other columns. */
function anomalyCount(column: Column, run: RunResult): number | null | undefined {
  if (!column.anomaly) return undefined;
  const value = column.value(run);
  return value === null ? null : Number(value);
}

/** The anomalies the fitted table sums into one row: those with no row of their own (headed for runs of `modes`). */
function folded(modes: readonly string[] = []): readonly Column[] {
  return tableColumns(modes).filter((column) => column.anomaly && !column.headline);
}

/** Their sum for one run, the unmeasured ones left out. */
function otherAnomalies(run: RunResult): number {
  return folded().reduce((sum, column) => sum + Number(column.value(run) ?? 0), 0);
}

interface Laid {
  readonly before: readonly string[];
  readonly table: string;
  readonly after: readonly string[];
  /** The figures the table shows as columns or rows, for the legend of their sources. */
  readonly columns: readonly Column[];
  /** The figures the table sums into "other anomalies", whose sources the legend names too. */
  readonly summed: readonly Column[];
  readonly rows: readonly RunResult[];
}

/**
 * The default table: the headline figures as rows, one column per run (per mode's sum with
 * several queues, whose queues the readouts name), then what "other anomalies" holds.
 */
function fittedTable(report: RaceReport, layout: TableLayout): Laid {
  const cell = painter(layout.color);
  const runs = report.totals ?? report.runs;
  const columns = columnsFor(runs).filter((column) => column.headline);
  const rows = columns.map((column) => ({
    label: headWords(column.head),
    cells: runs.map((run) => cell(column.value(run), anomalyCount(column, run))),
  }));
  // With the anomalies, before jobs/s.
  rows.splice(rows.length - 1, 0, { label: 'other anomalies', cells: runs.map((run) => cell(otherAnomalies(run), otherAnomalies(run))) });
  const named = runs.flatMap((run) => {
    const counts = folded([run.mode]).flatMap((column) => {
      const count = Number(column.value(run) ?? 0);
      return count > 0 ? [`${groupThousands(count)} ${headWords(column.head)}`] : [];
    });
    return counts.length > 0 ? [`${run.mode} ${counts.join(', ')}`] : [];
  });
  return {
    before:
      report.totals && report.runs.length > report.totals.length
        ? [`each column sums its mode's queues (${plural(report.runs.length, 'queue')} in all; each queue's row: --wide or --json)`]
        : [],
    table: renderFittedTable(
      runs.map((run) => run.mode),
      rows,
      layout.width,
    ),
    after: named.length > 0 ? [`other anomalies: ${named.join('; ')} (each its own column with --wide)`] : [],
    columns,
    summed: folded(runs.map((run) => run.mode)).filter((column) => !column.applies || runs.some(column.applies)),
    rows: runs,
  };
}

/** Every column, one row per run (and per mode's sum), as the table always was. */
function wideTable(report: RaceReport, layout: TableLayout): Laid {
  const cell = painter(layout.color);
  const columns = columnsFor(report.runs, true);
  const table = new Table({
    head: columns.map((c) => c.head),
    style: { head: [], border: [] },
    // No rule between rows: a row's lines are held together by the cell borders.
    chars: { 'left-mid': '', mid: '', 'mid-mid': '', 'right-mid': '' },
    colAligns: columns.map((c) => (c.head === 'mode' ? 'left' : 'right')),
  });
  const rows = report.totals ? [...report.runs, ...report.totals.map((t) => ({ ...t, mode: `${t.mode} total` as Mode }))] : report.runs;
  for (const run of rows) {
    table.push(columns.map((column) => (column.head === 'mode' ? String(column.value(run)) : cell(column.value(run), anomalyCount(column, run)))));
  }
  return { before: [], table: table.toString(), after: [], columns, summed: [], rows };
}

/**
 * The table with its headline, legend, readouts and example; `notes` (the caller's own lines, such
 * as a round-trip mode run on fewer jobs) come after them, and where the time went last of all.
 */
export function renderTable(report: RaceReport, layout: TableLayout, notes: readonly string[] = []): string {
  const cluster = report.primaries ? [`cluster: ${plural(report.primaries.length, 'primary', 'primaries')} (${report.primaries.join(', ')})`] : [];
  const latency = report.latency ? [latencyLine(report.latency)] : [];
  const laid = layout.wide ? wideTable(report, layout) : fittedTable(report, layout);
  const readouts = report.runs.flatMap((run) => [runReadout(report, run), ...consequenceLines(run)]);
  // The legend names the source of every figure the table shows, and what — means.
  const shown = [...laid.columns, ...laid.summed].flatMap((c) => (c.figure ? [{ head: c.head, figure: c.figure }] : []));
  const unmeasured = laid.rows.some((run) => laid.columns.some((c) => c.value(run) === null));
  const legend = sourceLegend(shown, laid.rows, unmeasured, layout.width);
  const fallbacks = sweepersFallbacksNote(report.runs, laid.columns);
  const example = report.runs.find((run) => run.example !== null);
  // The table is laid out to fit; the sentences around it wrap at the same width.
  const fit = (lines: readonly string[]): string[] => lines.map((line) => wrapLines(line, layout.width));
  return [
    ...fit([serverHeadline(report.server, report.embedded), ...seedLine(report), ...cluster, ...latency, ...laid.before]),
    laid.table,
    ...fit(laid.after),
    ...fit(fallbacks),
    ...legend,
    ...fit(readouts),
    ...fit(whyAtomicClean(report.runs)),
    ...(example ? ['', ...exampleLines(example, layout.width)] : []),
    ...(report.shrink ? ['', ...shrinkLines(report.shrink, (line) => wrapLines(line, layout.width))] : []),
    ...fit(notes),
    ...fit(phasesLines(report.runs)),
  ].join('\n');
}

/**
 * The noscript fallbacks the table shows are the sweepers' alone (its `noscriptFallbacks`, summed
 * over a mode's queues like every row). Where the workers, the re-leaser or the observer fell back
 * too, the lines under the table give their counts and a total with the sweepers': this says why
 * the row's number is smaller than that total, rather than leave the two to disagree.
 */
function sweepersFallbacksNote(runs: readonly RunResult[], columns: readonly Column[]): string[] {
  const head = headingOf(
    'noscriptFallbacks',
    runs.map((run) => run.mode),
  );
  if (!columns.some((column) => column.head === head)) return [];
  const who = (
    [
      ['workerNoscriptFallbacks', "the workers'"],
      ['releaserNoscriptFallbacks', "the re-leaser's"],
      ['observerNoscriptFallbacks', "the observer's"],
    ] as const
  ).flatMap(([field, words]) => (runs.some((run) => (run[field] ?? 0) > 0) ? [words] : []));
  if (who.length === 0) return [];
  const listed = who.length === 1 ? who[0] : `${who.slice(0, -1).join(', ')} and ${who.at(-1)}`;
  return [`${headWords(head)}: the sweepers' alone; ${listed} are in the lines below`];
}

/** Above this many jobs a run takes seconds, and the readout's last line says where they went. */
export const PHASES_SHOWN_ABOVE = 100_000;

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

const PHASE_WORDS = { claim: 'claim', seed: 'seeding', race: 'race', audit: 'audit', clean: 'clean-up' } as const;

/** A PhasesMs whose every phase is `value` of that phase's name. */
const eachPhase = (value: (name: keyof PhasesMs) => number): PhasesMs => ({
  claim: value('claim'),
  seed: value('seed'),
  race: value('race'),
  audit: value('audit'),
  clean: value('clean'),
});

/** One run's (or one mode's) share of the line: the phases' sum, then each phase, the largest first. */
function phasesPart(label: string, phases: PhasesMs): string {
  const entries = (Object.keys(PHASE_WORDS) as (keyof typeof PHASE_WORDS)[]).map((name) => [name, phases[name]] as const).sort((a, b) => b[1] - a[1]);
  const total = entries.reduce((sum, [, ms]) => sum + ms, 0);
  return `${label} ${seconds(total)} (${entries.map(([name, ms]) => `${PHASE_WORDS[name]} ${seconds(ms)}`).join(', ')})`;
}

/** The runs that take seconds: over PHASES_SHOWN_ABOVE jobs, with phases (not a library run, nor a totals row). */
const timedRuns = (runs: readonly RunResult[]): RunResult[] => runs.filter((run) => run.jobs > PHASES_SHOWN_ABOVE && run.phasesMs);

/**
 * Where the time went, for runs over PHASES_SHOWN_ABOVE jobs: each phase of each such run in
 * seconds, the largest first, so a reader sees at once whether the race or the bookkeeping around
 * it took the time. Pure.
 */
export function phasesLines(runs: readonly RunResult[]): string[] {
  const timed = timedRuns(runs);
  if (timed.length === 0) return [];
  // Several runs of one mode (queues side by side) are told apart by queue, and by trial where there are several.
  const repeated = new Set(timed.map((run) => run.mode)).size < timed.length;
  const trials = new Set(timed.map((run) => run.trial)).size > 1;
  const label = (run: RunResult): string => (repeated ? `${run.mode} on ${run.queue}${trials ? `, trial ${run.trial}` : ''},` : run.mode);
  const parts = timed.map((run) => phasesPart(label(run), run.phasesMs as PhasesMs));
  return [`where the time went: ${parts.join('; ')}`];
}

/**
 * Where the time went under --trials, whose table shows each mode once: each mode's phases summed
 * over its trials, for modes whose runs are over PHASES_SHOWN_ABOVE jobs. A trial's queues (with
 * --queues, or a cluster's) run side by side, so a trial counts each phase at its longest queue's
 * time, not their sum, which would be more time than the command took. Pure.
 */
export function trialPhasesLines(runs: readonly RunResult[]): string[] {
  // Per mode, per trial: each phase's longest time over the trial's queues, and how many queues it had.
  const byMode = new Map<Mode, Map<number, { queues: number; phases: PhasesMs }>>();
  for (const run of timedRuns(runs)) {
    const phases = run.phasesMs as PhasesMs;
    const trials = byMode.get(run.mode) ?? new Map<number, { queues: number; phases: PhasesMs }>();
    byMode.set(run.mode, trials);
    const trial = run.trial ?? 1;
    const seen = trials.get(trial);
    trials.set(trial, { queues: (seen?.queues ?? 0) + 1, phases: eachPhase((name) => Math.max(seen?.phases[name] ?? 0, phases[name])) });
  }
  if (byMode.size === 0) return [];
  const parts = [...byMode].map(([mode, trials]) => {
    const each = [...trials.values()];
    const queues = Math.max(...each.map((trial) => trial.queues));
    const sideBySide = queues > 1 ? `, ${queues} queues side by side` : '';
    const phases = eachPhase((name) => each.reduce((total, trial) => total + trial.phases[name], 0));
    return phasesPart(`${mode}, ${plural(each.length, 'trial')}${sideBySide},`, phases);
  });
  return [`where the time went: ${parts.join('; ')}`];
}

/**
 * Why the atomic row is clean, and where to watch the loop fail, for a reader who sees the table
 * for the first time. Said only when every atomic run is clean: a run the server broke (keys
 * evicted or flushed) is not the script's doing, and the line would then be false.
 */
export function whyAtomicClean(runs: readonly RunResult[]): string[] {
  const atomic = runs.filter((run) => run.mode === 'atomic');
  if (atomic.length === 0 || atomic.some((run) => ANOMALIES.some((name) => (run[name] ?? 0) > 0))) return [];
  return [
    'atomic is clean because the server runs a script whole, on its one command thread: no second sweep can run between its steps. To watch the loop of round trips go wrong step by step, on one job: emq-race explain',
  ];
}

/** The latency a run raced under, asked for and measured, as the table's header says it. */
export function latencyLine(latency: LatencyReport): string {
  return `latency: ${latencyWords(latency)}`;
}

/** What --latency added, in words: shared by the table's header and the HTML page. */
export function latencyWords(latency: LatencyReport): string {
  const jitter = latency.jitterMs > 0 ? ` + up to ${latency.jitterMs} ms jitter` : '';
  const { median, p99 } = latency.measuredRttMs;
  const direct = `; straight to the server ${latency.directRttMs.median.toFixed(2)} ms`;
  return `${latency.requestedMs} ms${jitter} of round trip added to the race's connections; measured median ${median.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (${latency.pings} PINGs through the proxy${direct}; seeding and audit go direct)`;
}

/**
 * One line in plain words per run, from its own counts. A "lost increment" is the source page's:
 * a recovery the counter does not show; forgotten stalls (a counter below the stalls a job truly
 * had) are named only where the run measured them and found some. Where the extra recoveries are
 * more than the server's final state shows, the line says they are the sweepers' own record.
 */
export function readout(run: RunResult): string {
  const count = (name: (typeof ANOMALIES)[number]): number => run[name] ?? 0;
  // The queue's own words: a library's list, its stalled jobs and its counter (QueueWords in model.ts).
  const words = queueWords(run.mode);
  const counter = run.lostIncrements === null ? null : words.counter;
  const head = `${run.mode} (${plural(run.sweepers, 'sweeper')}, ${plural(run.jobs, 'job')}):`;
  const cut = run.cutShort ? ` The run was cut short: a sweeper stopped after ${plural(run.maxSweeps, 'sweep')} (--max-sweeps).` : '';
  if (ANOMALIES.every((name) => count(name) === 0)) {
    const recoveries = plural(run.recoveries, 'recovery', 'recoveries');
    // A queue that keeps no counter (Bee-Queue) has no count to vouch for, and nothing is said of
    // one. A clean run cut short says so all the same: its last sweep found jobs still to reclaim.
    return `${head} ${words.recoveredOnce}${counter ? ` and ${counter.counted}` : ''} (${recoveries}, 0 anomalies).${cut}`;
  }
  const forgotten = count('forgottenStalls') > 0;
  const parts: string[] = [];
  if (run.jobsRecoveredMoreThanOnce > 0) {
    parts.push(
      `recovered ${plural(run.jobsRecoveredMoreThanOnce, 'job')} more than once (${plural(run.doubleRecoveries, 'extra recovery', 'extra recoveries')}, by the sweepers' own records)`,
    );
  }
  if (run.duplicatePending > run.duplicatePendingAtEnd) {
    // The re-leaser took some out during the run: "left" would be false of the final state.
    const atEnd = run.duplicatePendingAtEnd === 0 ? 'none of them left at the end' : `${groupThousands(run.duplicatePendingAtEnd)} of them left at the end`;
    parts.push(
      `put ${plural(run.duplicatePending, 'duplicate entry', 'duplicate entries')} in ${words.pending} (jobs ${words.entriesAre ?? 'that would run up to'} ${run.mostPendingEntries} times; the re-leaser took ${groupThousands(run.duplicatePending - run.duplicatePendingAtEnd)} back out during the run, ${atEnd})`,
    );
  } else if (run.duplicatePending > 0)
    parts.push(
      `left ${plural(run.duplicatePending, 'duplicate entry', 'duplicate entries')} in ${words.pending} (jobs ${words.entriesAre ?? 'that would run up to'} ${run.mostPendingEntries} times)`,
    );
  if (count('lostIncrements') > 0) {
    // The cause is named only where the run shows it: a mode whose counter is read then written
    // back (the loop) and jobs that two sweeps recovered. Any other mode's losses (a --script that
    // never counts, say) are the page's measure alone.
    const raced = STRATEGIES[run.mode].racesByDesign && run.doubleRecoveries > 0;
    let meaning = forgotten
      ? ''
      : raced
        ? ' (recoveries the counter does not show: two sweeps read the same count and wrote back the same value)'
        : ' (recoveries the counter does not show)';
    // By the page's definition an increment is lost whenever two sweeps raise the counter once; the counters themselves may still end too high.
    if (count('overcountedStalls') > 0) meaning = " (by the page's measure: recoveries the counter does not show)";
    // A failover drill's losses are the old primary's writes the promoted replica never received,
    // wherever the mode keeps its counter whole on its own (every mode but the loop, which races).
    if (run.failover && !STRATEGIES[run.mode].racesByDesign) meaning = ' (recoveries the promoted replica never received: see the failover line below)';
    // A library's counter has one meaning of its own.
    if (counter?.lost) meaning = ` (${counter.lost})`;
    parts.push(`lost ${plural(count('lostIncrements'), counter?.increment ?? 'counter increment')}${meaning}`);
  }
  // "yet" sets it against increments lost beside it; a counter that only ran high (a library's
  // mode that races without losing one) has nothing to be set against.
  if (count('overcountedStalls') > 0)
    parts.push(
      `${count('lostIncrements') > 0 ? 'yet ' : ''}counted stalls more than once on ${plural(count('overcountedStalls'), 'job')} (counters above the stalls the jobs really had, ${plural(run.overcountedStallCount ?? 0, 'count')} too many in all)`,
    );
  if (forgotten)
    parts.push(
      `forgot ${plural(run.forgottenStallCount ?? 0, 'stall')} of ${plural(count('forgottenStalls'), 'job')} (counters below the times the jobs truly stalled)`,
    );
  const extra = counter?.extra ?? { one: 'count', many: 'counts', after: 'that no sweep recorded' };
  if (count('extraIncrements') > 0) parts.push(`counted ${plural(count('extraIncrements'), extra.one, extra.many)} ${extra.after}`);
  if (run.lostJobs > 0) parts.push(`lost ${plural(run.lostJobs, 'job')} (${words.nowhere})`);
  if (run.misplaced > 0) parts.push(`misplaced ${plural(run.misplaced, 'job')}`);
  if (count('doubleExecutions') > 0) parts.push(`executed jobs again ${plural(count('doubleExecutions'), 'time')} (double executions)`);
  if (count('deadLetterEscapes') > 0)
    parts.push(
      // With --cycles a job can stall again after its limit, and with --workers be run after it, and
      // still end in dead: it escaped all the same.
      `let ${plural(count('deadLetterEscapes'), 'job')} escape the dead letter (stalled ${run.maxStalled}+ times, ${run.consequences.cycles > 1 || run.consequences.workers > 0 ? 'then run again, or ' : ''}${words.deadLetter?.notIn ?? `not in ${words.dead}`})`,
    );
  if (count('deadLetteredEarly') > 0) {
    // Without --cycles every job really stalled once more than it was seeded with.
    const after = run.consequences.cycles > 1 ? `fewer than ${plural(run.maxStalled, 'stall')}` : plural(run.stalledBefore + 1, 'stall');
    parts.push(
      `${words.deadLetter?.verb ?? 'sent'} ${plural(count('deadLetteredEarly'), 'healthy job')} ${words.deadLetter?.to ?? `to ${words.dead}`} after ${after} (dead-lettered early: the counter ran ahead of the stalls)`,
    );
  }
  if (count('windowInNeither') > 0) parts.push(`was seen mid-sweep with a job in no place ${plural(count('windowInNeither'), 'time')}`);
  if (count('windowInBoth') > 0) parts.push(`was seen with a job in two places at once ${plural(count('windowInBoth'), 'time')}`);
  if (run.unreclaimed > 0)
    parts.push(`left ${plural(run.unreclaimed, words.unreclaimed.one, words.unreclaimed.many)}${run.cutShort ? ' (its sweepers hit their sweep limit)' : ''}`);
  if (count('stolenLeases') > 0) parts.push(`took ${plural(count('stolenLeases'), 'job')} whose lease was still valid (stolen from a busy worker)`);
  if (count('strayEntries') > 0) parts.push(`wrote ${plural(count('strayEntries'), 'entry', 'entries')} that name no job of the run (stray entries)`);
  if (count('misreported') > 0)
    parts.push(
      `returned moves that disagree with the server for ${plural(count('misreported'), 'job')} (returned yet still in active, gone from active yet never returned, returned more often than it stands in pending and dead, or naming no job of the run)`,
    );
  // An anomaly with no sentence above (one added to FIGURES alone) is still named, by its heading.
  for (const name of ANOMALIES) {
    if (!SAID_IN_READOUT.has(name) && count(name) > 0) {
      const figure = FIGURES.find((f) => f.field === name);
      parts.push(`showed ${groupThousands(count(name))} ${figure ? figureHeading(figure, [run.mode]).replace(/\n/g, ' ') : name}`);
    }
  }
  return `${head} ${parts.join(', ')}.${unseenByServer(run)}${cut}`;
}

/** The anomalies `readout` has a sentence of its own for (double recoveries: the jobs recovered more than once). */
const SAID_IN_READOUT: ReadonlySet<string> = new Set([
  'doubleRecoveries',
  'duplicatePending',
  'lostIncrements',
  'extraIncrements',
  'forgottenStalls',
  'overcountedStalls',
  'lostJobs',
  'misplaced',
  'unreclaimed',
  'strayEntries',
  'doubleExecutions',
  'deadLetterEscapes',
  'deadLetteredEarly',
  'windowInNeither',
  'windowInBoth',
  'stolenLeases',
  'misreported',
]);

/**
 * Where the server's final state shows fewer duplicates than the sweepers recorded extra
 * recoveries, a sentence that says so and why: those recoveries are known from the sweepers'
 * records alone.
 */
function unseenByServer(run: RunResult): string {
  // What the server's final state shows: under --cycles duplicatePending also counts the entries the re-leaser took out.
  const atEnd = run.duplicatePendingAtEnd;
  const { pending, dead } = queueWords(run.mode);
  if (run.doubleRecoveries === 0 || atEnd >= run.doubleRecoveries) return '';
  const why: string[] = [];
  if (run.pending === 'zset') why.push('a sorted set holds a job once');
  else if (run.consequences.workers > 0) why.push(`workers took entries from ${pending}`);
  // Took them, not ran them: BullMQ fails a job marked to fail at its take without running it.
  else if (run.lapsedLock) why.push(`the second worker took the entries from ${pending}`);
  if (run.consequences.cycles > 1) why.push(`re-leases took jobs back out of ${pending}`);
  // A failover drill: the first push of a job recovered twice died with the old primary.
  if (run.failover) why.push('the promoted replica never received the first recovery of a job recovered again after the failover');
  // Said only where jobs went to dead: some early, or every job at its first recovery.
  const deadLettered = (run.deadLetteredEarly ?? 0) > 0 || run.stalledBefore + 1 >= run.maxStalled;
  if (run.failover && STRATEGIES[run.mode].deadLettersAfterPush) {
    if (deadLettered) why.push(`dead-lettered jobs were taken back out of ${pending}`);
  } else if (deadLettered && !run.failover && !run.lapsedLock && run.pending === 'list' && run.consequences.workers === 0 && run.consequences.cycles === 1) {
    // The loop pushes first and dead-letters after; the other strategies send a job at max-stalled straight to dead.
    why.push(
      STRATEGIES[run.mode].deadLettersAfterPush
        ? `dead-lettered jobs were taken back out of ${pending}`
        : `moves of jobs at max-stalled went to ${dead}, not ${pending}`,
    );
  }
  // A user's script that returned moves the server does not show: the extra recoveries are its word alone.
  if ((run.misreported ?? 0) > 0) why.push("the script's returned values name moves the server does not show (misreported)");
  const shown = atEnd === 0 ? 'none' : `only ${groupThousands(atEnd)}`;
  const rest = atEnd === 0 ? 'they are' : 'the rest are';
  const taken = run.duplicatePending - atEnd;
  // Under --fault lapsed-lock a take of the second worker whose completion BullMQ refused leaves
  // its entry in active: the server shows those, in active, not in pending.
  const refusedTakes = run.lapsedLock?.secondRunsRefused ?? 0;
  const known =
    taken > 0
      ? `known from the sweepers' own records (the re-leaser found ${groupThousands(taken)} as duplicate entries when it took them out)`
      : refusedTakes > 0
        ? `known from the sweepers' own records (on the server, only as the entries that the second worker's refused takes of ${plural(refusedTakes, 'job')} left in active)`
        : "known from the sweepers' own records alone";
  const because = why.length > 0 ? ` (${why.join('; ')})` : '';
  return ` The server's final state shows ${shown} of the ${plural(run.doubleRecoveries, 'extra recovery', 'extra recoveries')} as duplicate entries${because}: ${rest} ${known}.`;
}

/** Under --seed, the line that says the run is one order of many, and how to have it again. */
function seedLine(report: RaceReport): string[] {
  if (report.seed === undefined) return [];
  return [`seed: ${report.seed} (one command at a time, turns drawn from the seed: the same flags replay this run)`];
}

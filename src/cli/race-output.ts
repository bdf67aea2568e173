/**
 * What the main command prints once its race is over: the report in the format asked for, and the
 * note on a round-trip mode run on fewer jobs (what --keep left: server/kept-server.ts). Loaded
 * with the race itself, so that the renderers (and the table and colour libraries under them) stay
 * out of a start-up that only asks for help.
 */
import { consequenceLines } from '../report/consequences.js';
import { renderCsv } from '../report/csv.js';
import { reportJson, type RaceReport } from '../report/json.js';
import { latencyLine, renderTable, trialPhasesLines, type TableLayout } from '../report/report.js';
import { renderTrialsTable } from '../report/trials-table.js';
import { serverHeadline } from '../server/connection.js';
import { groupFigure, outputWidth, wrapLines } from '../shared/text.js';
import type { MainFlags } from './race-flags.js';
import type { Io, RaceOptions, RunResult } from '../shared/model.js';

/** The report on stdout in the format asked for: JSON, CSV, the trials table, or the runs table. */
export function printReport(report: RaceReport, runs: readonly RunResult[], options: RaceOptions, flags: MainFlags, io: Io): void {
  const layout: TableLayout = { color: useColor(io), width: outputWidth(io), wide: flags.wide };
  if (options.json) io.out(`${JSON.stringify(reportJson(report))}\n`);
  else if (options.csv) io.out(`${renderCsv(runs)}\n`);
  else if (report.trials && (options.trials ?? 1) > 1) {
    // Lines fitted to the width, each ended.
    const block = (lines: readonly string[]): string => lines.map((line) => `${wrapLines(line, layout.width)}\n`).join('');
    const summed = flags.queues > 1 ? [`each trial counts the sum of its ${flags.queues} queues per mode (--json has every queue)`] : [];
    const header = block([serverHeadline(report.server, report.embedded), ...(report.latency ? [latencyLine(report.latency)] : [])]);
    // A failover drill's figures are each trial's own, which the table's spreads do not show.
    const drilled = block(runs.flatMap((run) => (run.failover ? consequenceLines(run, `${run.mode}, trial ${run.trial}`) : [])));
    // Under the table, as under a single run's: a round-trip mode run on fewer jobs, then where the time went.
    const closing = block([...summed, ...loopJobsNote(runs, options.jobs), ...trialPhasesLines(runs)]);
    io.out(`${header}${renderTrialsTable(report.trials, layout)}\n${drilled}${closing}`);
  } else io.out(`${renderTable(report, layout, loopJobsNote(runs, options.jobs))}\n`);
}

/** NO_COLOR set turns colour off; FORCE_COLOR turns it on in a pipe, and off as `0` or `false`, as other tools read it. */
export function useColor(io: Pick<Io, 'env' | 'stdoutIsTty'>): boolean {
  if (io.env.NO_COLOR) return false;
  const forced = io.env.FORCE_COLOR;
  if (forced === '0' || forced === 'false') return false;
  if (forced) return true;
  return io.stdoutIsTty;
}

/** The lines that say so under the table when a round-trip mode ran on fewer jobs than --jobs. */
export function loopJobsNote(runs: readonly RunResult[], jobs: number): string[] {
  const fewer = runs.filter((run) => run.jobs < jobs);
  // One line per mode, however many queues it ran on.
  const lines = fewer.map(
    (run) => `${run.mode} ran on ${groupFigure(run.jobs)} of the ${groupFigure(jobs)} jobs (--loop-jobs: a round trip per command is slow by nature)`,
  );
  return [...new Set(lines)];
}

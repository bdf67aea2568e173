/**
 * Writes the page (and the standalone SVG) a run asked for, from the same JSON object `--json`
 * prints, and says where it went — on stderr under --json, since stdout then carries the JSON alone.
 */
import { reportJson, type RaceReport } from '../report/json.js';
import { scrubUrlText } from '../server/connection.js';
import { consequenceLines } from '../report/consequences.js';
import { runReadout } from '../report/report.js';
import { trialsSummaryLines } from '../report/trials-table.js';
import { explorePage } from './explore-page.js';
import { gridPage } from './grid-page.js';
import { writeOrLost, writeWhole } from './output-file.js';
import { explainPage, explainSvg, racePage } from './page.js';
import type { ExplainReportJson, RaceReportJson } from './report-data.js';
import { explainCommandLine, raceCommandLine, type ExplainFlagsSeen, type RaceFlagsSeen } from './reproduce.js';
import type { GridJson } from '../grid/json.js';
import type { ExploreReportJson } from '../explore/render.js';
import type { Io, RunResult } from '../shared/model.js';

/** Where a file went (on stderr under --json), named as given but scrubbed: a URL with its password given as the file's name (a folder `redis:`) is not printed back. */
export function announce(io: Io, json: boolean, what: string, path: string): void {
  (json ? io.err : io.out)(`${what}: ${scrubUrlText(path)}\n`);
}

/**
 * The page's readout: each run's sentence, then the lines the terminal prints under it (what the
 * faults did, a note). With trials, first what the trials of each mode came to, as the terminal
 * says it under its trials table, and each run's sentence named by its trial.
 */
export function pageReadouts(report: RaceReport, runs: readonly RunResult[]): string[] {
  const trials = report.trials && report.trials.length > 0 ? report.trials : undefined;
  const perRun = runs.flatMap((run) => [
    `${trials ? `trial ${run.trial ?? 1}: ` : ''}${runReadout(report, run)}`,
    ...consequenceLines(run).map((line) => line.trim()),
  ]);
  return trials ? [...trialsSummaryLines(trials), ...perRun] : perRun;
}

export function writeRacePage(
  path: string,
  report: RaceReport,
  runs: readonly RunResult[],
  flags: RaceFlagsSeen & { url: string | undefined },
  version: string,
  io: Io,
  json: boolean,
): void {
  const data: RaceReportJson = reportJson(report);
  const page = racePage(data, {
    command: raceCommandLine(flags, flags.url),
    generatedAt: new Date().toISOString(),
    version,
    readouts: pageReadouts(report, runs),
  });
  writeWhole(path, page);
  announce(io, json, 'html report', path);
}

/** Writes explain's page and drawing; returns the lines for those it could not write (writeOrLost), each tried on its own. */
export function writeExplainFiles(data: ExplainReportJson, flags: ExplainFlagsSeen & { url: string | undefined }, version: string, io: Io): string[] {
  const { html, svg } = flags;
  const lost = [
    html === undefined
      ? undefined
      : writeOrLost('--html', () => {
          writeWhole(html, explainPage(data, { command: explainCommandLine(flags, flags.url), generatedAt: new Date().toISOString(), version }));
          announce(io, flags.json, 'html report', html);
        }),
    svg === undefined
      ? undefined
      : writeOrLost('--svg', () => {
          writeWhole(svg, explainSvg(data));
          announce(io, flags.json, 'svg diagram', svg);
        }),
  ];
  return lost.filter((line): line is string => line !== undefined);
}

/** `emq-race explore --html`: the exploration's page, from the same object `explore --json` prints. */
export function writeExplorePage(path: string, report: ExploreReportJson, command: string, io: Io, machineOutput: boolean): void {
  writeWhole(path, explorePage(report, { command, generatedAt: new Date().toISOString() }));
  announce(io, machineOutput, 'html report', path);
}

/** `emq-race grid --html`: the grid's page, from the same object `grid --json` prints. */
export function writeGridPage(path: string, grid: GridJson, context: { command: string }, io: Io, machineOutput: boolean): void {
  writeWhole(path, gridPage(grid, { command: context.command, generatedAt: new Date().toISOString() }));
  announce(io, machineOutput, 'html report', path);
}

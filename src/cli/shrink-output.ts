/**
 * `--shrink` and `--export-test` on the command line: the first seeded run of a loop-replayed mode
 * that found an anomaly shrunk (explore/shrink.ts) on the same session, its witness added to the
 * report, and the witness written as a test file that must not exist yet.
 */
import { shellQuote } from '../html/command-line.js';
import { writeWhole } from '../html/output-file.js';
import { exportedTest } from '../explore/export-test.js';
import { shrinkRun } from '../explore/shrink.js';
import type { Interrupts } from '../shared/interrupt.js';
import { VERSION, type Io, type ModeRun, type RaceOptions, type RunResult, type ShrunkWitness } from '../shared/model.js';
import { isClean } from '../audit/rules.js';
import type { RaceReport } from '../report/json.js';
import type { Session } from '../server/session.js';
import { scrubUrlText } from '../server/connection.js';
import { replayOf } from '../sweepers/strategies.js';

/** The report with the shrunk witness of its first raced loop run; the report as it was when no such run raced. */
export async function withShrink(
  session: Session,
  interrupts: Interrupts,
  report: RaceReport,
  options: RaceOptions,
  userScript: string | undefined,
  io: Io,
  exporting: boolean,
): Promise<RaceReport> {
  const seed = options.seed as number;
  const found = report.runs.find((run) => replayOf(run.mode) === 'loop' && !isClean(run));
  if (!found) {
    // --export-test ends with its own line, which says the same: one line, not two.
    if (!exporting) io.err(`emq-race: --shrink: ${nothingFound(seed)}\n`);
    return report;
  }
  const shrink = await shrinkRun(session, interrupts, { run: shrinkBase(options, found, userScript), seed, queue: `${found.queue}-s` }, found);
  return shrink ? { ...report, shrink } : report;
}

/** Why there is nothing to shrink. */
const nothingFound = (seed: number): string => `no loop run found an anomaly under seed ${seed}: nothing to shrink (try another seed)`;

/** The seeded run found, as the runs the shrinking makes from it start. */
function shrinkBase(options: RaceOptions, found: RunResult, userScript: string | undefined): ModeRun {
  return {
    mode: found.mode,
    queue: found.queue,
    jobs: found.jobs,
    sweepers: found.sweepers,
    batch: options.batch,
    maxStalled: options.maxStalled,
    stalledBefore: options.stalledBefore,
    probeDelayMs: options.probeDelayMs,
    keep: false,
    pending: options.pending ?? 'list',
    cadence: { intervalMs: options.intervalMs ?? 0, jitterMs: options.jitterMs ?? 0 },
    ...(options.maxSweeps !== undefined ? { maxSweeps: options.maxSweeps } : {}),
    ...(userScript !== undefined ? { userScript } : {}),
  };
}

/**
 * Writes the witness as a node:test file at `path`, which must not exist. `command` is the race's
 * own line (every flag that shaped the seeded run, the server left out), which the file names as
 * what made it. Without a witness explain replays, nothing is written, and the line that says why
 * is returned: the command then ends with exit 1 once its report is out.
 */
export function writeExportedTest(path: string, shrink: ShrunkWitness | undefined, command: string, seed: number): string | undefined {
  if (!shrink) return `--export-test: ${nothingFound(seed)}; nothing written to ${path}`;
  if (!shrink.command) return `--export-test: the seeded run gave no witness explain can replay; nothing written to ${path}`;
  // The file as the flag named it, so that the line run again from the same folder writes the same
  // file (a line break in the name is shown escaped in the file's comment: exportedTest), but
  // scrubbed like every name the tool prints: it may be a URL with its password.
  const made = `emq-race ${VERSION}: ${command} --export-test ${shellQuote(scrubUrlText(path))}`;
  // Whole or not at all: a full disk must not leave an empty test file, which node --test passes.
  writeWhole(path, exportedTest(shrink, shrink.command, made), 'fresh');
  return undefined;
}

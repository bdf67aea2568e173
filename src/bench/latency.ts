/**
 * The benchmark's latency part: what a round trip costs each mode, measured side by side. The
 * same race runs straight to the server and through the latency proxy (`--latency`), in pairs
 * whose order alternates (so a machine that warms up or slows down during the part favours
 * neither side), each run the tool itself in a child process, exactly as a user would start it. A
 * mode's slow-down is its best jobs/s direct over its best through the proxy, the benchmark's
 * usual best-of-N; every run's figure is kept in the JSON beside it.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ReportJson } from '../report/json.js';
import { ratio } from './measure.js';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../../bin/emq-race.js', import.meta.url));

/**
 * The races measured: the one a reader runs first (both modes, 8 sweepers, the default 1,000
 * jobs), where the atomic sweep's whole race is three round trips long; and the atomic sweep alone
 * on a long race with a batch of 1,000, where its one round trip per batch is a small share.
 * The loop is not run at that size: 100,000 of its jobs take ten minutes at 2 ms.
 */
export const LATENCY_CASES: readonly (readonly string[])[] = [
  ['--mode', 'both', '--sweepers', '8', '--jobs', '1000'],
  ['--mode', 'atomic', '--sweepers', '8', '--jobs', '100000', '--batch', '1000'],
];

/** What one mode of one run reported. */
export interface ModeSample {
  readonly mode: string;
  readonly jobsPerSec: number;
  readonly clean: boolean;
}

/** One run of a case: its modes, and the round trip measured through the proxy (delayed runs only). */
export interface RunSample {
  readonly modes: readonly ModeSample[];
  readonly rttMedianMs?: number;
}

export interface ModeSlowDown {
  readonly mode: string;
  /** jobs/s of every run, in the order they ran. */
  readonly directJobsPerSec: readonly number[];
  readonly delayedJobsPerSec: readonly number[];
  /** Best direct jobs/s ÷ best delayed, to 0.01: how many times slower the round trip made it. */
  readonly slowDown: number;
  /** Runs with any anomaly, of each side. */
  readonly racedDirect: number;
  readonly racedDelayed: number;
}

export interface LatencyCase {
  /** The race's flags, without --url, --json and --latency. */
  readonly args: readonly string[];
  readonly pairs: number;
  /** The median round trip through the proxy of every delayed run (ms). */
  readonly measuredRttMs: readonly number[];
  readonly modes: readonly ModeSlowDown[];
  /** The loop's slow-down ÷ the atomic sweep's, to 0.01, when the case ran both. */
  readonly loopOverAtomic: number | null;
}

export interface LatencyFigures {
  readonly requestedMs: number;
  readonly cases: readonly LatencyCase[];
}

/** The best (highest) of some jobs/s figures; 0 for none. Pure. */
export function bestOf(jobsPerSec: readonly number[]): number {
  return jobsPerSec.reduce((a, b) => Math.max(a, b), 0);
}

/** Best of `direct` ÷ best of `delayed`, to 0.01. Pure. */
export function slowDown(direct: readonly number[], delayed: readonly number[]): number {
  const through = bestOf(delayed);
  if (!(through > 0)) throw new RangeError('slowDown: no delayed run swept a job');
  return ratio(bestOf(direct), through);
}

/** A case's figures from its runs, each mode's slow-down and the loop's over the atomic's. Pure. */
export function latencyCase(args: readonly string[], direct: readonly RunSample[], delayed: readonly RunSample[]): LatencyCase {
  const modes = [...new Set([...direct, ...delayed].flatMap((r) => r.modes.map((m) => m.mode)))].map((mode): ModeSlowDown => {
    const of = (runs: readonly RunSample[]): ModeSample[] => runs.flatMap((r) => r.modes.filter((m) => m.mode === mode));
    const [d, l] = [of(direct), of(delayed)];
    return {
      mode,
      directJobsPerSec: d.map((m) => m.jobsPerSec),
      delayedJobsPerSec: l.map((m) => m.jobsPerSec),
      slowDown: slowDown(
        d.map((m) => m.jobsPerSec),
        l.map((m) => m.jobsPerSec),
      ),
      racedDirect: d.filter((m) => !m.clean).length,
      racedDelayed: l.filter((m) => !m.clean).length,
    };
  });
  const loop = modes.find((m) => m.mode === 'loop');
  const atomic = modes.find((m) => m.mode === 'atomic');
  return {
    args,
    pairs: Math.min(direct.length, delayed.length),
    measuredRttMs: delayed.flatMap((r) => (r.rttMedianMs !== undefined ? [r.rttMedianMs] : [])),
    modes,
    loopOverAtomic: loop && atomic ? ratio(loop.slowDown, atomic.slowDown) : null,
  };
}

/** The figures a run's JSON holds for the benchmark. Pure. */
export function runSample(report: Pick<ReportJson, 'runs' | 'latency'>): RunSample {
  return {
    modes: report.runs.map((r) => ({ mode: r.mode, jobsPerSec: r.jobsPerSec, clean: r.clean })),
    ...(report.latency ? { rttMedianMs: report.latency.measuredRttMs.median } : {}),
  };
}

/** One run of the tool on `url`: direct, or through the proxy with `latencyMs` of round trip. */
async function raceOnce(url: string, args: readonly string[], latencyMs: number | undefined): Promise<RunSample> {
  const argv = [BIN, '--url', url, ...args, '--json', ...(latencyMs !== undefined ? ['--latency', String(latencyMs)] : [])];
  const { stdout } = await run(process.execPath, argv, { maxBuffer: 64 << 20 });
  return runSample(JSON.parse(stdout) as ReportJson);
}

/** Every case, `pairs` alternating pairs each, on the server at `url`. */
export async function measureLatency(
  url: string,
  latencyMs: number,
  pairs: number,
  cases: readonly (readonly string[])[],
  log: (line: string) => void,
): Promise<LatencyFigures> {
  const measured: LatencyCase[] = [];
  for (const args of cases) {
    log(`bench: latency ${latencyMs} ms, ${args.join(' ')}…`);
    const direct: RunSample[] = [];
    const delayed: RunSample[] = [];
    for (let pair = 0; pair < pairs; pair++) {
      // Direct first in even pairs, through the proxy first in odd ones.
      for (const through of pair % 2 === 0 ? [false, true] : [true, false]) {
        if (through) delayed.push(await raceOnce(url, args, latencyMs));
        else direct.push(await raceOnce(url, args, undefined));
      }
    }
    measured.push(latencyCase(args, direct, delayed));
  }
  return { requestedMs: latencyMs, cases: measured };
}

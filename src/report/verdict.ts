/**
 * The verdict of --expect over a command's runs: per mode, whether every run came out as expected,
 * and the figures of the runs that did not. Pure functions over RunResult, tested directly; the
 * expectation itself is parsed and merged in cli/expect.ts.
 *
 * `clean` holds for a mode when none of its runs (every queue, every trial) shows an anomaly;
 * `race` when every one of them shows at least one. A mode the expectation names that did not run
 * (a server without Functions skips the function mode) misses.
 */
import { anomalyTotal } from '../audit/rules.js';
import { ANOMALIES, type Anomaly, type Expectation, type ExpectedOutcome, type Mode, type Outcome, type RunResult } from '../shared/model.js';

/** A run that did not come out as expected, with the figures that say so. */
export interface RunMiss {
  readonly queue: string;
  readonly trial: number;
  readonly anomalies: number;
  /** The anomaly figures above zero (none for a run expected to race). */
  readonly figures: Readonly<Partial<Record<Anomaly, number>>>;
}

export interface ModeVerdict {
  readonly mode: Mode;
  readonly expected: Outcome;
  readonly pass: boolean;
  /** Runs of the mode judged (queues × trials); 0 when it did not run. */
  readonly runs: number;
  readonly misses: readonly RunMiss[];
}

export interface Verdict {
  /** The expectation as one --expect argument. */
  readonly expect: string;
  readonly pass: boolean;
  /** Every mode judged, in the order the modes ran (modes named but not run last). */
  readonly modes: readonly ModeVerdict[];
}

/** What the expectation asks of `mode`'s runs, if anything. */
export function outcomeFor(expect: Expectation, mode: Mode): ExpectedOutcome | undefined {
  return expect.modes[mode] ?? expect.others;
}

/** The expectation as one --expect argument; it parses back to the same expectation. */
export function formatExpectation(expect: Expectation): string {
  return expect.terms.join(',');
}

function figuresOf(run: RunResult): Partial<Record<Anomaly, number>> {
  return Object.fromEntries(
    ANOMALIES.flatMap((name) => {
      const value = run[name] ?? 0;
      return value > 0 ? [[name, value]] : [];
    }),
  );
}

function judgeMode(mode: Mode, expected: Outcome, runs: readonly RunResult[]): ModeVerdict {
  const missed = runs.filter((run) => (expected === 'clean' ? anomalyTotal(run) > 0 : anomalyTotal(run) === 0));
  return {
    mode,
    expected,
    pass: runs.length > 0 && missed.length === 0,
    runs: runs.length,
    misses: missed.map((run) => ({ queue: run.queue, trial: run.trial, anomalies: anomalyTotal(run), figures: figuresOf(run) })),
  };
}

export function judge(expect: Expectation, runs: readonly RunResult[], asked: readonly Mode[] = []): Verdict {
  const ran = [...new Set(runs.map((run) => run.mode))];
  // A mode named by a term, or asked for with --mode and judged by `clean` or `race`'s "every other
  // mode", that did not run (function on a server without Functions) is judged too: it did not run.
  const named = [...new Set([...(Object.keys(expect.modes) as Mode[]), ...asked])].filter((mode) => !ran.includes(mode));
  const modes = [...ran, ...named].flatMap((mode) => {
    const expected = outcomeFor(expect, mode);
    return expected
      ? [
          judgeMode(
            mode,
            expected.outcome,
            runs.filter((run) => run.mode === mode),
          ),
        ]
      : [];
  });
  return { expect: formatExpectation(expect), pass: modes.every((verdict) => verdict.pass), modes };
}

/** `name value` pairs, largest first, summed over the runs given. */
function figureList(misses: readonly RunMiss[]): string {
  const sums = new Map<Anomaly, number>();
  for (const miss of misses) for (const [name, value] of Object.entries(miss.figures) as [Anomaly, number][]) sums.set(name, (sums.get(name) ?? 0) + value);
  return [...sums]
    .sort((a, b) => b[1] - a[1])
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
}

/** Why one mode missed, in a clause naming its figures. */
function whyMissed(verdict: ModeVerdict): string {
  const head = `${verdict.mode} expected ${verdict.expected === 'race' ? 'a race' : 'clean'}, but`;
  if (verdict.runs === 0) return `${head} did not run`;
  const some = verdict.runs === 1 ? '' : ` ${verdict.misses.length} of ${verdict.runs} runs`;
  if (verdict.expected === 'clean') {
    const summed = verdict.misses.length > 1 ? ' (summed over those runs)' : '';
    return `${head}${some} showed ${figureList(verdict.misses)}${summed}`;
  }
  return `${head}${some} showed no anomaly (every anomaly figure 0)`;
}

/**
 * The line a passed verdict prints, so that a CI log shows what was checked and held: each mode
 * judged with what it was expected to do, and how many runs held it where there were several.
 */
export function describeMet(verdict: Verdict): string {
  const held = verdict.modes.map((mode) => `${mode.mode}=${mode.expected}${mode.runs > 1 ? ` (${mode.runs} of ${mode.runs} runs)` : ''}`);
  return `expectation met: ${held.join(', ')}`;
}

/** The verdict's one line on stderr: what missed, or that it was met. */
export function verdictLine(verdict: Verdict): string {
  return describeMisses(verdict) ?? describeMet(verdict);
}

/** One line naming each mode that missed and its figures; undefined when the verdict passed. */
export function describeMisses(verdict: Verdict): string | undefined {
  if (verdict.pass) return undefined;
  const missed = verdict.modes.filter((mode) => !mode.pass);
  return `--expect ${verdict.expect} missed: ${missed.map(whyMissed).join('; ')}`;
}

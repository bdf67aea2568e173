/**
 * Progress for long runs, on stderr only: how many expired leases have left `active`, read from
 * the server once a second, with the rate, the time taken and an estimate of the time left.
 *
 * On a terminal, one line rewritten in place and cut to the terminal's width, quiet for the first
 * second so short runs print nothing. Elsewhere (a CI log, a pipe), a plain line at most every
 * five seconds, the first once the command has run five seconds, so short runs print nothing there
 * either; wrapped to the width (80 unless COLUMNS says otherwise), its continuation indented,
 * since a log viewer does not cut lines. Races that run side by side (--queues) share the line:
 * it sums them per mode.
 */
import type { ProgressBoard } from '../model.js';
import { groupThousands, plural, trimToWidth, wrap } from '../text.js';

export type ProgressWriter = (text: string) => void;

const EVERY_MS = 1000;
/** A CI log gets a line at most this often, and none before the command has run this long. */
const PLAIN_EVERY_MS = 5000;

/** "4s", "3m 05s", "1h 02m". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** The line for one race (or one mode's races summed), `elapsedMs` since its sweepers started. */
export function progressLine(label: string, left: number, jobs: number, elapsedMs?: number): string {
  const done = Math.max(0, jobs - left);
  const percent = jobs > 0 ? Math.floor((100 * done) / jobs) : 100;
  const line = `${label}: ${groupThousands(done)}/${groupThousands(jobs)} leases reclaimed (${percent}%)`;
  if (elapsedMs === undefined || elapsedMs <= 0) return line;
  const rate = done / (elapsedMs / 1000);
  const eta = left === 0 ? '' : rate > 0 ? `, about ${formatDuration((left / rate) * 1000)} left` : ', time left unknown';
  return `${line}, ${groupThousands(Math.round(rate))} jobs/s, ${formatDuration(elapsedMs)} elapsed${eta}`;
}

/** Where one race stands: its expired leases still in `active`, out of `jobs`. */
export interface ProgressEntry {
  readonly mode: string;
  readonly queue: string;
  readonly left: number;
  readonly jobs: number;
  /** Since the race's sweepers started; absent where the time is not told. */
  readonly elapsedMs?: number;
}

/**
 * The line for every race running now: one race with its queue's name; several of one mode summed
 * (timed from the first of them to start), since a line per queue would not fit and rewriting one
 * line per queue in turn is unreadable.
 */
export function progressSummary(entries: readonly ProgressEntry[]): string {
  const [only] = entries;
  // The queue's name last: on a narrow terminal it is what the cut takes.
  if (entries.length === 1 && only) return `${progressLine(only.mode, only.left, only.jobs, only.elapsedMs)} (queue ${only.queue})`;
  const byMode = new Map<string, { queues: number; left: number; jobs: number; elapsedMs?: number }>();
  for (const entry of entries) {
    const sum = byMode.get(entry.mode) ?? { queues: 0, left: 0, jobs: 0 };
    const elapsedMs = entry.elapsedMs === undefined ? sum.elapsedMs : Math.max(sum.elapsedMs ?? 0, entry.elapsedMs);
    byMode.set(entry.mode, { queues: sum.queues + 1, left: sum.left + entry.left, jobs: sum.jobs + entry.jobs, ...(elapsedMs === undefined ? {} : { elapsedMs }) });
  }
  return [...byMode].map(([mode, sum]) => progressLine(`${mode}, ${plural(sum.queues, 'queue')}`, sum.left, sum.jobs, sum.elapsedMs)).join('; ');
}

interface Watched {
  running: boolean;
  readonly started: number;
  /** The latest reading; none before the first. */
  entry?: ProgressEntry;
}

export interface ProgressDisplay {
  /** A terminal: one line rewritten in place, cut to `width()`. Else plain lines, now and then. */
  readonly terminal: boolean;
  readonly width: () => number;
  /** The clock, in ms (tests of the pacing pass their own). */
  readonly now?: () => number;
}

/**
 * A race that ends while others run keeps its place in the sum, with one last reading, so the
 * line goes on counting every queue; on a terminal the line is cleared once no race runs.
 */
export function progressBoard(write: ProgressWriter, display: ProgressDisplay): ProgressBoard {
  const now = display.now ?? Date.now;
  const watched = new Set<Watched>();
  let shown = false;
  // The command's start, for a CI log's first line: none in its first five seconds.
  let lastPlain = now();
  const render = (): void => {
    const entries = [...watched].map((w) => w.entry);
    const readings = entries.filter((entry): entry is ProgressEntry => entry !== undefined);
    // Only once every race has a reading: a sum that left one out would jump when it arrived.
    if (readings.length === 0 || readings.length < entries.length) return;
    const line = progressSummary(readings);
    if (display.terminal) {
      // One column short of the width: a line that fills it would wrap on some terminals.
      write(`\r\x1b[2K${trimToWidth(line, display.width() - 1)}`);
      shown = true;
    } else if (now() - lastPlain >= PLAIN_EVERY_MS) {
      write(`${wrap(`progress: ${line}`, display.width()).join('\n')}\n`);
      lastPlain = now();
    }
  };
  return {
    watch(redis, active, mode, queue, jobs, live) {
      const w: Watched = { running: true, started: now() };
      watched.add(w);
      const read = async (): Promise<void> => {
        const inActive = await redis.zcard(active);
        if (watched.has(w)) w.entry = { mode, queue, left: Math.max(0, inActive - live), jobs, elapsedMs: now() - w.started };
      };
      let busy = false;
      const timer = setInterval(() => {
        if (busy) return;
        busy = true;
        read()
          .then(() => {
            if (w.running) render();
          })
          .catch(() => {})
          .finally(() => (busy = false));
      }, EVERY_MS);
      return () => {
        clearInterval(timer);
        w.running = false;
        if (![...watched].some((other) => other.running)) {
          watched.clear();
          if (shown) write('\r\x1b[2K');
          shown = false;
          return;
        }
        read()
          .catch(() => watched.delete(w))
          .then(render, () => {});
      };
    },
  };
}

/**
 * Progress for long runs, on stderr and only on a terminal (a pipe or a CI log gets nothing): one
 * line rewritten in place, saying how many expired leases are still in `active`, read from the
 * server once a second. Quiet for the first second, so short runs print nothing. Races that run
 * side by side (--queues) share the one line: it sums them per mode.
 */
import type { ProgressBoard } from '../model.js';

export type ProgressWriter = (text: string) => void;

const EVERY_MS = 1000;

/** The line shown while a race runs. */
export function progressLine(label: string, left: number, jobs: number): string {
  const done = Math.max(0, jobs - left);
  const percent = jobs > 0 ? Math.floor((100 * done) / jobs) : 100;
  return `${label}: ${done}/${jobs} leases reclaimed (${percent}%)`;
}

/** Where one race stands: its expired leases still in `active`, out of `jobs`. */
export interface ProgressEntry {
  readonly mode: string;
  readonly queue: string;
  readonly left: number;
  readonly jobs: number;
}

/**
 * The line for every race running now: one race by its queue's name; several of one mode summed,
 * since a line per queue would not fit and rewriting one line per queue in turn is unreadable.
 */
export function progressSummary(entries: readonly ProgressEntry[]): string {
  const [only] = entries;
  if (entries.length === 1 && only) return progressLine(`${only.mode} ${only.queue}`, only.left, only.jobs);
  const byMode = new Map<string, { queues: number; left: number; jobs: number }>();
  for (const entry of entries) {
    const sum = byMode.get(entry.mode) ?? { queues: 0, left: 0, jobs: 0 };
    byMode.set(entry.mode, { queues: sum.queues + 1, left: sum.left + entry.left, jobs: sum.jobs + entry.jobs });
  }
  return [...byMode].map(([mode, sum]) => progressLine(`${mode}, ${sum.queues} queue${sum.queues === 1 ? '' : 's'}`, sum.left, sum.jobs)).join('; ');
}

interface Watched {
  running: boolean;
  /** The latest reading; none before the first. */
  entry?: ProgressEntry;
}

/**
 * A race that ends while others run keeps its place in the sum, with one last reading, so the
 * line goes on counting every queue; the line is cleared once no race runs.
 */
export function progressBoard(write: ProgressWriter): ProgressBoard {
  const watched = new Set<Watched>();
  let shown = false;
  const render = (): void => {
    const entries = [...watched].map((w) => w.entry);
    const readings = entries.filter((entry): entry is ProgressEntry => entry !== undefined);
    // Only once every race has a reading: a sum that left one out would jump when it arrived.
    if (readings.length === 0 || readings.length < entries.length) return;
    write(`\r\x1b[2K${progressSummary(readings)}`);
    shown = true;
  };
  return {
    watch(redis, active, mode, queue, jobs, live) {
      const w: Watched = { running: true };
      watched.add(w);
      const read = async (): Promise<void> => {
        const inActive = await redis.zcard(active);
        if (watched.has(w)) w.entry = { mode, queue, left: Math.max(0, inActive - live), jobs };
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

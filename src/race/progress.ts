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
import type { ProgressBoard } from '../shared/model.js';
import { groupThousands, plural, trimToWidth, visibleLength, wrap } from '../shared/text.js';

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

/**
 * A piece of a progress line. A terminal cuts the line to its width: the pieces with a `cut` rank
 * go first, lowest rank first, so what matters most (how far, and the time left) stays in view.
 */
export interface LinePiece {
  readonly text: string;
  readonly cut?: number;
}

/** Ranks of what a narrow terminal drops, first to last; the rest (label, count, share, time left) stays. */
const CUT = { queue: 1, elapsed: 2, rate: 3, noun: 4 } as const;

/**
 * The pieces of one race's line (or one mode's races summed), `elapsedMs` since its sweepers
 * started. `stage` says what the race waits on while it reclaims nothing (a failover drill's
 * steps, the workers once the sweeps are done): it takes the place of the rate and the time left,
 * which the rate so far cannot foretell then.
 */
function racePieces(label: string, left: number, jobs: number, elapsedMs?: number, stage?: string): LinePiece[] {
  const done = Math.max(0, jobs - left);
  const percent = jobs > 0 ? Math.floor((100 * done) / jobs) : 100;
  const pieces: LinePiece[] = [
    { text: `${label}: ${groupThousands(done)}/${groupThousands(jobs)}` },
    { text: ' leases reclaimed', cut: CUT.noun },
    { text: ` (${percent}%)` },
  ];
  if (stage) {
    // The rate so far would fall the whole time the race waits: the time taken says as much.
    if (elapsedMs !== undefined && elapsedMs > 0) pieces.push({ text: `, ${formatDuration(elapsedMs)} elapsed`, cut: CUT.elapsed });
    return [...pieces, { text: `, ${stage}` }];
  }
  if (elapsedMs === undefined || elapsedMs <= 0) return pieces;
  const rate = done / (elapsedMs / 1000);
  pieces.push({ text: `, ${groupThousands(Math.round(rate))} jobs/s`, cut: CUT.rate }, { text: `, ${formatDuration(elapsedMs)} elapsed`, cut: CUT.elapsed });
  if (left > 0) pieces.push({ text: rate > 0 ? `, about ${formatDuration((left / rate) * 1000)} left` : ', time left unknown' });
  return pieces;
}

/**
 * The pieces of a queue being seeded: the jobs written so far (a batch at a time, as each
 * server-side call returns) out of those the run seeds, expired and live.
 */
function seedingPieces(label: string, left: number, jobs: number, elapsedMs?: number): LinePiece[] {
  const done = Math.max(0, jobs - left);
  const percent = jobs > 0 ? Math.floor((100 * done) / jobs) : 100;
  const pieces: LinePiece[] = [
    { text: `${label}: seeding ${groupThousands(done)}/${groupThousands(jobs)}` },
    { text: ' jobs', cut: CUT.noun },
    { text: ` (${percent}%)` },
  ];
  if (elapsedMs === undefined || elapsedMs <= 0) return pieces;
  const rate = done / (elapsedMs / 1000);
  pieces.push({ text: `, ${formatDuration(elapsedMs)} elapsed`, cut: CUT.elapsed });
  if (left > 0 && rate > 0) pieces.push({ text: `, about ${formatDuration((left / rate) * 1000)} left` });
  return pieces;
}

const joined = (pieces: readonly LinePiece[]): string => pieces.map((piece) => piece.text).join('');

/** The line for one race (or one mode's races summed), `elapsedMs` since its sweepers started. */
export function progressLine(label: string, left: number, jobs: number, elapsedMs?: number): string {
  return joined(racePieces(label, left, jobs, elapsedMs));
}

/**
 * The pieces' line in at most `width` columns: the pieces that may go are dropped a rank at a
 * time until it fits; a line still too long is cut, ending in '…'.
 */
export function fitPieces(pieces: readonly LinePiece[], width: number): string {
  return droppedToFit(pieces, width) ?? trimToWidth(joined(pieces.filter((piece) => piece.cut === undefined)), width);
}

/** The pieces joined once those that matter least are dropped, as few as will do; undefined if even what must stay is wider. Pure. */
function droppedToFit(pieces: readonly LinePiece[], width: number): string | undefined {
  const ranks = [...new Set(pieces.flatMap((piece) => (piece.cut === undefined ? [] : [piece.cut])))].sort((a, b) => a - b);
  for (const rank of [0, ...ranks]) {
    const kept = joined(pieces.filter((piece) => piece.cut === undefined || piece.cut > rank));
    if (visibleLength(kept) <= width) return kept;
  }
  return undefined;
}

/**
 * The line after a label (`trial 2/5, `) where what must stay fits beside it; else without the
 * label, which matters less than the count and the time left (the trial's own line named it). Pure.
 */
export function fitLabelled(label: string, pieces: readonly LinePiece[], width: number): string {
  const beside = label ? droppedToFit(pieces, width - visibleLength(label)) : undefined;
  return beside !== undefined ? `${label}${beside}` : fitPieces(pieces, width);
}

/** Where one race stands: its expired leases still in `active`, out of `jobs`. */
export interface ProgressEntry {
  readonly mode: string;
  readonly queue: string;
  readonly left: number;
  readonly jobs: number;
  /** Since the race's sweepers started; absent where the time is not told. */
  readonly elapsedMs?: number;
  /** Seeding: `left` is then the jobs not yet written, out of `jobs` to write, timed from the first batch. */
  readonly seeding?: true;
  /** What the race waits on now, where it waits (a failover drill's step, the workers once the sweeps are done); said on a one-race line. */
  readonly stage?: string;
}

/**
 * The line for every race running now: one race with its queue's name; several of one mode summed
 * (timed from the first of them to start), since a line per queue would not fit and rewriting one
 * line per queue in turn is unreadable. Queues still seeding are summed apart from those racing.
 */
export function progressSummary(entries: readonly ProgressEntry[]): string {
  return joined(summaryPieces(entries));
}

function summaryPieces(entries: readonly ProgressEntry[]): LinePiece[] {
  const [only] = entries;
  const pieces = (entry: Pick<ProgressEntry, 'left' | 'jobs' | 'elapsedMs' | 'seeding' | 'stage'>, label: string): LinePiece[] =>
    entry.seeding ? seedingPieces(label, entry.left, entry.jobs, entry.elapsedMs) : racePieces(label, entry.left, entry.jobs, entry.elapsedMs, entry.stage);
  // The queue's name last: on a narrow terminal it is the first piece the cut takes.
  if (entries.length === 1 && only) return [...pieces(only, only.mode), { text: ` (queue ${only.queue})`, cut: CUT.queue }];
  const byMode = new Map<string, { mode: string; seeding?: true; queues: number; left: number; jobs: number; elapsedMs?: number }>();
  for (const entry of entries) {
    const key = `${entry.mode}${entry.seeding ? ' seeding' : ''}`;
    const sum = byMode.get(key) ?? { mode: entry.mode, ...(entry.seeding ? { seeding: true as const } : {}), queues: 0, left: 0, jobs: 0 };
    const elapsedMs = entry.elapsedMs === undefined ? sum.elapsedMs : Math.max(sum.elapsedMs ?? 0, entry.elapsedMs);
    byMode.set(key, {
      ...sum,
      queues: sum.queues + 1,
      left: sum.left + entry.left,
      jobs: sum.jobs + entry.jobs,
      ...(elapsedMs === undefined ? {} : { elapsedMs }),
    });
  }
  return [...byMode.values()].flatMap((sum, i) => [...(i > 0 ? [{ text: '; ' }] : []), ...pieces(sum, `${sum.mode}, ${plural(sum.queues, 'queue')}`)]);
}

/**
 * Stderr with the progress line kept apart from every other line: a line drawn in place (text
 * after a carriage return, with no newline after it) is ended before any text that does not
 * redraw it, so a message (a signal's, a warning) starts a line of its own instead of being glued
 * to the end of the progress.
 */
export function keepLinesApart(write: ProgressWriter): ProgressWriter {
  let open = false;
  return (text) => {
    const redraws = text.startsWith('\r');
    write(open && !redraws ? `\n${text}` : text);
    const at = text.lastIndexOf('\r');
    // Open while the last thing drawn in place is still on the line: an erased line is not.
    open = at >= 0 ? !text.endsWith('\n') && visibleLength(text.slice(at + 1)) > 0 : false;
  };
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
  /** What the terminal's line starts with (`trial 2/5, `), read at each drawing: under --trials, which trial runs. */
  readonly label?: () => string;
}

/**
 * A race that ends while others run keeps its place in the sum, with one last reading, so the
 * line goes on counting every queue; on a terminal the line is cleared once no race runs. A queue
 * being seeded shows as it is written, batch by batch, until its race takes its place.
 */
export function progressBoard(write: ProgressWriter, display: ProgressDisplay): ProgressBoard {
  const now = display.now ?? Date.now;
  const watched = new Set<Watched>();
  let shown = false;
  // The command's start, for a CI log's first line: none in its first five seconds.
  let lastPlain = now();
  let lastTerminal = Number.NEGATIVE_INFINITY;
  /** Takes a race or a seeding off the board; the terminal's line is cleared once nothing runs. */
  const leave = (w: Watched): boolean => {
    w.running = false;
    if ([...watched].some((other) => other.running)) return false;
    watched.clear();
    if (shown) write('\r\x1b[2K');
    shown = false;
    return true;
  };
  const render = (): void => {
    const entries = [...watched].map((w) => w.entry);
    const readings = entries.filter((entry): entry is ProgressEntry => entry !== undefined);
    // Only once every race has a reading: a sum that left one out would jump when it arrived.
    if (readings.length === 0 || readings.length < entries.length) return;
    const pieces = summaryPieces(readings);
    if (display.terminal) {
      // One column short of the width: a line that fills it would wrap on some terminals.
      write(`\r\x1b[2K${fitLabelled(display.label?.() ?? '', pieces, display.width() - 1)}`);
      shown = true;
      lastTerminal = now();
    } else if (now() - lastPlain >= PLAIN_EVERY_MS) {
      // A log viewer does not cut lines: the whole line, wrapped.
      write(`${wrap(`progress: ${joined(pieces)}`, display.width()).join('\n')}\n`);
      lastPlain = now();
    }
  };
  return {
    seeding(mode, queue, jobs) {
      const w: Watched = { running: true, started: now() };
      let left = jobs;
      w.entry = { mode, queue, left, jobs, seeding: true };
      watched.add(w);
      return {
        seeded(count) {
          left = Math.max(0, left - count);
          if (!watched.has(w)) return;
          const elapsedMs = now() - w.started;
          w.entry = { mode, queue, left, jobs, elapsedMs, seeding: true };
          // Batches land many times a second: quiet for the first second, as a race is, and then a
          // terminal's line is redrawn at most four times a second (a CI log keeps its own pace).
          if (elapsedMs >= EVERY_MS && (!display.terminal || now() - lastTerminal >= EVERY_MS / 4)) render();
        },
        stop() {
          // The race's own reading takes the seeding's place on the line.
          if (!leave(w)) watched.delete(w);
        },
      };
    },
    watch(redis, active, mode, queue, jobs, live, stage) {
      const w: Watched = { running: true, started: now() };
      watched.add(w);
      const read = async (): Promise<void> => {
        const inActive = await redis.zcard(active);
        const waiting = stage?.();
        if (watched.has(w))
          w.entry = { mode, queue, left: Math.max(0, inActive - live), jobs, elapsedMs: now() - w.started, ...(waiting ? { stage: waiting } : {}) };
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
        if (leave(w)) return;
        read()
          .catch(() => watched.delete(w))
          .then(render, () => {});
      };
    },
  };
}

/**
 * The grid's progress on stderr while its cells run: on a terminal one line rewritten in place,
 * elsewhere two lines as each cell ends, for a CI log. Loaded when a grid runs, not for its help.
 */
import type { GridCellJson, GridModeCellJson } from './json.js';
import { cellLabel, timeLeftMs, type CellAt, type GridAxis } from './plan.js';
import { formatRate } from './table.js';
import { formatDuration } from '../race/progress.js';
import type { Io } from '../shared/model.js';
import { errorWidth, trimToWidth, wrap } from '../shared/text.js';

/** "emq-race grid: cell 3/6 (sweepers=2 latency=1)": how both progress forms name a cell. */
function cellHeading(axes: readonly GridAxis[], total: number, index: number, at: CellAt): string {
  return `emq-race grid: cell ${index + 1}/${total} (${cellLabel(axes, at)})`;
}

/**
 * A CI log's lines for a finished cell, each wrapped to `width`: which cell and how long it took
 * with the grid's time so far and left, then its rate per mode on a line of its own, indented, so
 * that a grid of several modes and long axis names still reads within 80 columns. Pure.
 */
export function cellDoneLines(
  axes: readonly GridAxis[],
  total: number,
  cell: Pick<GridCellJson, 'index' | 'at' | 'wallMs'> & { readonly modes: readonly Pick<GridModeCellJson, 'mode' | 'doubleRecoveriesPer1000'>[] },
  timing: string,
  width: number,
): string[] {
  const figures = cell.modes.map((m) => `${m.mode} ${formatRate(m.doubleRecoveriesPer1000)}`).join(', ');
  const done = `${cellHeading(axes, total, cell.index, cell.at)} done in ${formatDuration(cell.wallMs)};`;
  // The time so far and the time left stay whole: on a line of their own when the cell's line has no room for them.
  const first = [...`${done} ${timing}`].length <= width ? [`${done} ${timing}`] : [...wrap(done, width), ...wrap(`  ${timing}`, width, '    ')];
  return [...first, ...wrap(`  double recoveries per 1,000 jobs: ${figures}`, width, '    ')];
}

/**
 * The grid's progress on stderr: on a terminal one line rewritten in place (every second, so the
 * clock moves during a long cell); elsewhere two lines as each cell ends, for a CI log (cellDoneLines).
 */
export function gridProgress(
  io: Io,
  axes: readonly GridAxis[],
  total: number,
  started: number,
): { start: (index: number, at: CellAt) => void; done: (cell: GridCellJson) => void; stop: () => void } {
  const terminal = Boolean(io.stderrIsTty);
  let finished = 0;
  // The grid's time when the last cell ended, and when the cell under way began.
  let doneMs = 0;
  let cellStartMs = 0;
  let running = false;
  let current: { index: number; at: CellAt } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const timing = (): string => {
    const elapsed = performance.now() - started;
    const left = timeLeftMs(doneMs, finished, total, running ? elapsed - cellStartMs : 0);
    return `${formatDuration(elapsed)} in${left !== undefined ? `, about ${formatDuration(left)} left` : ''}`;
  };
  const draw = (): void => {
    if (!current) return;
    // The cell's name gives way before the time left does.
    const clock = `, ${timing()}`;
    io.err(`\r\x1b[K${trimToWidth(cellHeading(axes, total, current.index, current.at), Math.max(20, errorWidth(io) - 1 - [...clock].length))}${clock}`);
  };
  return {
    start(index, at) {
      current = { index, at };
      cellStartMs = performance.now() - started;
      running = true;
      if (!terminal) return;
      draw();
      timer ??= setInterval(draw, 1000);
      timer.unref();
    },
    done(cell) {
      finished++;
      doneMs = performance.now() - started;
      running = false;
      if (terminal) return;
      io.err(`${cellDoneLines(axes, total, cell, timing(), errorWidth(io)).join('\n')}\n`);
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      if (terminal && current) io.err('\r\x1b[K');
      current = undefined;
    },
  };
}

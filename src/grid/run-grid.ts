/**
 * Runs a grid: one full race per cell, one cell after another (cells side by side would race each
 * other for the same two cores and skew every jobs/s figure), each on fresh queues that the race
 * claims, seeds, audits and deletes as a single run does. What races a cell is the caller's: the
 * grid knows its cells, their order and their sums, not the command line.
 */
import { gridCell, type CellRace, type GridCellJson } from './json.js';
import type { CellAt } from './plan.js';
import type { Mode } from '../shared/model.js';

export interface GridRun {
  readonly cells: readonly CellAt[];
  readonly modes: readonly Mode[];
  /** Races one cell: every mode and trial at these settings, cleaned up before it resolves. */
  raceCell(at: CellAt, index: number): Promise<CellRace>;
  /** Told as each cell starts and as it ends, for the progress line. */
  readonly onStart?: (index: number, at: CellAt) => void;
  readonly onDone?: (cell: GridCellJson) => void;
  /** Ticks of the clock the cells' wall times are read on (performance.now in the tool). */
  readonly now: () => number;
}

export interface GridOutcome {
  /** The cells that finished, in order. */
  readonly cells: readonly GridCellJson[];
  /** Set when a cell failed or was interrupted: the grid stopped there, and `cells` are those before it. */
  readonly stoppedBy?: unknown;
}

export async function runGrid(grid: GridRun): Promise<GridOutcome> {
  const done: GridCellJson[] = [];
  for (const [index, at] of grid.cells.entries()) {
    grid.onStart?.(index, at);
    const started = grid.now();
    let race: CellRace;
    try {
      race = await grid.raceCell(at, index);
    } catch (err) {
      return { cells: done, stoppedBy: err };
    }
    const cell = gridCell(index, at, grid.modes, race, grid.now() - started);
    done.push(cell);
    grid.onDone?.(cell);
  }
  return { cells: done };
}

/**
 * The grid's plan: its axes, every cell as the product of their values, and the arithmetic of its
 * progress line. Pure: the flags' own parsers have checked each value before anything here runs.
 */

/** One varied flag (its long name without the dashes) and its values, in the order given. */
export interface GridAxis {
  readonly flag: string;
  readonly values: readonly number[];
}

/** A cell's place in the grid: each axis's flag → the value it takes there. */
export type CellAt = Readonly<Record<string, number>>;

/**
 * Above this many cells a grid runs only with --yes: at the default sizes a cell takes seconds,
 * so 500 cells are an hour of a server's time, more than anyone types by accident.
 */
export const MAX_CELLS_WITHOUT_YES = 500;

/** How many cells the axes make: the product of their lengths (1 for no axis). */
export function cellCount(axes: readonly GridAxis[]): number {
  return axes.reduce((product, axis) => product * axis.values.length, 1);
}

/**
 * Every cell, the first axis slowest: row by row of the table the terminal shows (rows are the
 * first axis, columns the second), so a grid stopped early has whole rows first.
 */
export function gridCells(axes: readonly GridAxis[]): CellAt[] {
  let cells: CellAt[] = [{}];
  for (const axis of axes) cells = cells.flatMap((cell) => axis.values.map((value) => ({ ...cell, [axis.flag]: value })));
  return cells;
}

/** A cell as a progress line names it: `sweepers=8 latency=1`. */
export function cellLabel(axes: readonly GridAxis[], at: CellAt): string {
  return axes.map((axis) => `${axis.flag}=${at[axis.flag] ?? '?'}`).join(' ');
}

/**
 * Time left, from the mean time of the cells done so far (`doneMs`, the time when the last of them
 * ended); undefined before the first one ends. The cell under way, `inCellMs` into it, is expected
 * to take that mean too, and no less than nothing more once it has run past it: the time it has
 * run is not counted again as though it were finished cells' time. A rough figure (cells with
 * more latency or sweepers take longer), and the line says "about".
 */
export function timeLeftMs(doneMs: number, done: number, total: number, inCellMs = 0): number | undefined {
  if (done <= 0) return undefined;
  const mean = doneMs / done;
  const notStarted = Math.max(0, total - done - (inCellMs > 0 ? 1 : 0));
  return mean * notStarted + (inCellMs > 0 ? Math.max(0, mean - inCellMs) : 0);
}

/**
 * A figure's heading over the runs one table (or one row, or one column) shows: FIGURES' own, in
 * the model queue's words, or the words of the queue all those runs share where the figure names
 * one of its parts (a library's list: `duplicate in wait`). Pure.
 */
import { queueWords } from '../sweepers/strategies.js';
import { FIGURES, type Figure } from '../shared/model.js';

/**
 * Where the runs' queues name the part apart — the model queue beside a library
 * (`--lib bullmq --mode atomic`) — one row of the fitted table, one column of the wide one, holds
 * both, so its heading must be true of each: `duplicate entries`, the entries beyond one a job
 * has in whichever list its queue runs jobs from (the model's pending, BullMQ's wait…). The
 * readout under the table names each run's own list.
 */
const SHARED_HEADINGS: Readonly<Partial<Record<string, string>>> = { duplicatePending: 'duplicate\nentries' };

export function figureHeading(figure: Pick<Figure, 'field' | 'heading'>, modes: readonly string[]): string {
  const headings = [...new Set(modes.map((mode) => queueWords(mode).headings[figure.field] ?? figure.heading))];
  if (headings.length <= 1) return headings[0] ?? figure.heading;
  return SHARED_HEADINGS[figure.field] ?? figure.heading;
}

/** The heading of the figure FIGURES names `field` (the name itself if none), over the runs of `modes`. */
export function headingOf(field: string, modes: readonly string[]): string {
  const figure = FIGURES.find((f) => f.field === field);
  return figure ? figureHeading(figure, modes) : field;
}

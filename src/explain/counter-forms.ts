/**
 * The two forms of the counter race (`explain --counter`), apart from the race itself so that the
 * flag's parser and its help load no script and no replay.
 */
export const COUNTER_FORMS = ['in-script', 'client'] as const;
export type CounterForm = (typeof COUNTER_FORMS)[number];

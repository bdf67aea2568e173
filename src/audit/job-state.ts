/**
 * A job's state as the audit compares it: the hash's `state` field as a small code (the audit's
 * Lua returns the same codes, see instruments/audit-jobs.lua), and how many times beyond the first
 * something happened. The lowest piece of the audit: both rule modules build on it.
 */

export const STATE_CODES = { missing: 0, active: 1, pending: 2, dead: 3, other: 4, done: 5 } as const;
export type StateCode = (typeof STATE_CODES)[keyof typeof STATE_CODES];

export function stateCode(state: string | null | undefined): StateCode {
  switch (state) {
    case 'active':
      return STATE_CODES.active;
    case 'pending':
      return STATE_CODES.pending;
    case 'dead':
      return STATE_CODES.dead;
    case 'done':
      return STATE_CODES.done;
    case null:
    case undefined:
      return STATE_CODES.missing;
    default:
      return STATE_CODES.other;
  }
}

/**
 * The jobs whose `state` the audit found missing (a hash gone, or left without the field every run
 * writes into it): how many in all, and the ids (as the job hashes name them) of at most `limit`,
 * the lowest first. Pure.
 */
export function missingJobs(state: ArrayLike<number>, limit: number): { ids: string[]; count: number } {
  const ids: string[] = [];
  let count = 0;
  // Index 0 is no job: ids start at 1.
  for (let id = 1; id < state.length; id++) {
    if (state[id] !== STATE_CODES.missing) continue;
    count++;
    if (ids.length < limit) ids.push(String(id));
  }
  return { ids, count };
}

/** How many times beyond the first: a job moved 3 times has 2 extra moves. */
export function excess(count: number): number {
  return count > 1 ? count - 1 : 0;
}

/**
 * Bounded server calls over a range of indexes, several outstanding at once: the shape every bulk
 * step (seeding, the audit's reads) shares. Each call covers a slice small enough to hold the
 * server for milliseconds; keeping a few in flight lets the server work on the next slices while
 * the client handles the last reply.
 */

/** Calls outstanding at once: enough to keep the server busy, a few hundred kB of replies. */
const IN_FLIGHT = 16;

/**
 * Covers `count` indexes from `origin` in calls of `perCall`, keeping IN_FLIGHT calls outstanding
 * so the server works on the next slices while the client unpacks the last one. Replies are
 * handled in order, each with the first index of its slice.
 */
export async function inSlices<T>(
  count: number,
  origin: number,
  perCall: number,
  signal: AbortSignal | undefined,
  call: (first: number, last: number) => Promise<T>,
  onReply: (reply: T, first: number) => void,
): Promise<void> {
  const end = origin + count - 1;
  const inFlight: { first: number; reply: Promise<T> }[] = [];
  let next = origin;
  const issue = (): void => {
    while (inFlight.length < IN_FLIGHT && next <= end) {
      const first = next;
      const reply = call(first, Math.min(end, first + perCall - 1));
      // Handled when its turn comes; until then a rejection must not count as unhandled.
      reply.catch(() => {});
      inFlight.push({ first, reply });
      next += perCall;
    }
  };
  issue();
  while (inFlight.length > 0) {
    signal?.throwIfAborted();
    const head = inFlight.shift();
    if (!head) break;
    onReply(await head.reply, head.first);
    issue();
  }
}

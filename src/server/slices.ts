/**
 * Bounded server calls over a range of indexes, several outstanding at once: the shape every bulk
 * step (seeding, the audit's reads) shares. Each call covers a slice small enough to hold the
 * server for milliseconds; keeping a few in flight lets the server work on the next slices while
 * the client handles the last reply.
 */

/** Calls outstanding at once: enough to keep the server busy, a few hundred kB of replies. */
export const IN_FLIGHT = 16;

/**
 * Sends one call per task, in order, keeping IN_FLIGHT calls outstanding so the server works on
 * the next tasks while the client handles the last reply. Replies are handled in task order.
 */
export async function inCalls<Task, T>(
  tasks: Iterable<Task>,
  signal: AbortSignal | undefined,
  call: (task: Task) => Promise<T>,
  onReply: (reply: T, task: Task) => void,
): Promise<void> {
  const pending = tasks[Symbol.iterator]();
  const inFlight: { task: Task; reply: Promise<T> }[] = [];
  const issue = (): void => {
    // Once stopped, nothing more is sent: only the calls already in flight run.
    while (inFlight.length < IN_FLIGHT && !signal?.aborted) {
      const next = pending.next();
      if (next.done) return;
      const reply = call(next.value);
      // Handled when its turn comes; until then a rejection must not count as unhandled.
      reply.catch(() => {});
      inFlight.push({ task: next.value, reply });
    }
  };
  issue();
  while (inFlight.length > 0) {
    signal?.throwIfAborted();
    const head = inFlight.shift();
    if (!head) break;
    onReply(await head.reply, head.task);
    issue();
  }
  // Stopped before the first call or as the last reply came: tasks may be left unsent.
  signal?.throwIfAborted();
}

function* ranges(count: number, origin: number, perCall: number): Generator<{ first: number; last: number }> {
  const end = origin + count - 1;
  for (let first = origin; first <= end; first += perCall) yield { first, last: Math.min(end, first + perCall - 1) };
}

/**
 * Covers `count` indexes from `origin` in calls of `perCall`, several outstanding at once (see
 * inCalls). Replies are handled in order, each with the first index of its slice.
 */
export async function inSlices<T>(
  count: number,
  origin: number,
  perCall: number,
  signal: AbortSignal | undefined,
  call: (first: number, last: number) => Promise<T>,
  onReply: (reply: T, first: number) => void,
): Promise<void> {
  await inCalls(
    ranges(count, origin, perCall),
    signal,
    ({ first, last }) => call(first, last),
    (reply, { first }) => onReply(reply, first),
  );
}

/**
 * Opens `count` things (connections) into `into`, in index order, at most IN_FLIGHT at once: the
 * race's sweepers, one handshake after another, took 10-16 ms for 16 on a loopback server and a
 * round trip's worth more each behind --latency. Every one opened is in `into` once this settles,
 * whether it resolves or throws, so the caller can close them all; after the first failure, or
 * once stopped, no new one is begun. Throws the first failure, else the stop.
 */
export async function openEach<T>(count: number, open: () => Promise<T>, signal: AbortSignal, into: T[]): Promise<void> {
  const opened: (T | undefined)[] = [];
  let next = 0;
  let failure: { error: unknown } | undefined;
  const opener = async (): Promise<void> => {
    while (next < count && !failure && !signal.aborted) {
      const at = next++;
      try {
        opened[at] = await open();
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count) }, opener));
  for (const thing of opened) if (thing !== undefined) into.push(thing);
  if (failure) throw failure.error;
  signal.throwIfAborted();
}

/**
 * Server-side time per script call, from LATENCY HISTOGRAM (Redis 7+, Valkey): the server keeps,
 * per command, cumulative call counts in power-of-two microsecond buckets. Reading it before and
 * after a race and subtracting gives the distribution of that race's calls alone, without
 * resetting anybody's statistics.
 *
 * A difference of two readings measures the race only when both come from one server process, its
 * counters never set back between them: each reading is taken with the server's `run_id`, which
 * every start of a server draws anew, and readings from two processes (`--fault failover`: the
 * first on the primary, the last on the promoted replica behind the same proxy) or counters that
 * went down (CONFIG RESETSTAT) give no figure, not a wrong one.
 */
import type { Redis } from 'ioredis';

/** The commands a sweep call arrives as: EVALSHA, EVAL after a NOSCRIPT, and FCALL for the function mode. */
const SCRIPT_COMMANDS = ['evalsha', 'eval', 'fcall'] as const;

/** Bucket upper bound in µs → calls at or below it (cumulative, as the server reports). */
export type Histogram = Map<number, number>;
/** One cumulative histogram per command name. */
export type Histograms = Map<string, Histogram>;

/**
 * Parses a LATENCY HISTOGRAM reply (RESP2: name, [calls, n, histogram_usec, [bound, count, ...]]
 * per command) into one histogram per command.
 */
export function parseLatencyHistogram(reply: unknown): Histograms {
  const histograms: Histograms = new Map();
  if (!Array.isArray(reply)) return histograms;
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const fields = reply[i + 1];
    if (!Array.isArray(fields)) continue;
    for (let f = 0; f + 1 < fields.length; f += 2) {
      if (String(fields[f]) !== 'histogram_usec') continue;
      const buckets = fields[f + 1];
      if (!Array.isArray(buckets)) continue;
      const histogram: Histogram = new Map();
      for (let b = 0; b + 1 < buckets.length; b += 2) histogram.set(Number(buckets[b]), Number(buckets[b + 1]));
      histograms.set(String(reply[i]), histogram);
    }
  }
  return histograms;
}

/**
 * The calls of one command's cumulative `after` not already in `before`, as plain counts per bucket.
 * The server leaves out a bucket that adds nothing, so a missing bucket holds the count below it.
 */
function commandDelta(before: Histogram, after: Histogram): Map<number, number> {
  const bounds = [...new Set([...before.keys(), ...after.keys()])].sort((a, b) => a - b);
  const counts = new Map<number, number>();
  let lastBefore = 0;
  let lastAfter = 0;
  let previous = 0;
  for (const bound of bounds) {
    lastBefore = before.get(bound) ?? lastBefore;
    lastAfter = after.get(bound) ?? lastAfter;
    const delta = lastAfter - lastBefore;
    if (delta - previous > 0) counts.set(bound, delta - previous);
    previous = delta;
  }
  return counts;
}

/** The calls made between two readings, summed over the commands, per bucket, sorted by bound. */
export function histogramDelta(before: Histograms, after: Histograms): [bound: number, calls: number][] {
  const total = new Map<number, number>();
  for (const [command, histogram] of after) {
    for (const [bound, calls] of commandDelta(before.get(command) ?? new Map(), histogram)) {
      total.set(bound, (total.get(bound) ?? 0) + calls);
    }
  }
  return [...total].sort((a, b) => a[0] - b[0]);
}

/**
 * The p-th percentile from per-bucket counts, as the bucket's upper bound in ms (the histogram's
 * resolution: a power of two µs). Undefined with no calls.
 */
export function histogramPercentileMs(counts: readonly [number, number][], p: number): number | undefined {
  const total = counts.reduce((sum, [, calls]) => sum + calls, 0);
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const [bound, calls] of counts) {
    seen += calls;
    if (seen >= rank) return bound / 1000;
  }
  return (counts[counts.length - 1]?.[0] ?? 0) / 1000;
}

/** A command's calls in all, from its cumulative histogram: the count of its highest bucket. */
function totalCalls(histogram: Histogram): number {
  let total = 0;
  for (const calls of histogram.values()) total = Math.max(total, calls);
  return total;
}

/**
 * Whether `after` can follow `before` on one server: no command's bucket counts fewer calls than
 * it did (counters only grow, unless CONFIG RESETSTAT set them back), and no command it counted is
 * gone. Pure.
 */
function histogramsOnlyGrew(before: Histograms, after: Histograms): boolean {
  for (const [command, histogram] of before) {
    const later = after.get(command);
    if (!later) {
      if (totalCalls(histogram) > 0) return false;
      continue;
    }
    let lastBefore = 0;
    let lastAfter = 0;
    for (const bound of [...new Set([...histogram.keys(), ...later.keys()])].sort((a, b) => a - b)) {
      lastBefore = histogram.get(bound) ?? lastBefore;
      lastAfter = later.get(bound) ?? lastAfter;
      if (lastAfter < lastBefore) return false;
    }
  }
  return true;
}

/**
 * The p99 of the script calls made between two readings; undefined when none were made, or when
 * the two are not one series of the same server's counters (`after` counts fewer calls somewhere).
 */
function p99Between(before: Histograms, after: Histograms): number | undefined {
  if (!histogramsOnlyGrew(before, after)) return undefined;
  return histogramPercentileMs(histogramDelta(before, after), 99);
}

/**
 * The server's total time in script calls so far, in µs, from an INFO commandstats text: the
 * `usec` of EVALSHA, EVAL and FCALL summed (a script's inner commands are part of its own time).
 */
export function scriptUsec(commandstats: string): number {
  let usec = 0;
  for (const line of commandstats.split('\n')) {
    const stat = /^cmdstat_([a-z]+):.*\busec=(\d+)/.exec(line.trim());
    if (stat && (SCRIPT_COMMANDS as readonly string[]).includes(stat[1] ?? '')) usec += Number(stat[2]);
  }
  return usec;
}

/** Which server process answered: `run_id` from an INFO server text, undefined where it is missing. Pure. */
export function serverRunId(info: string): string | undefined {
  return /^run_id:([0-9a-f]+)\s*$/m.exec(info)?.[1];
}

/** The server's script counters at one moment, with the process that answered them. */
export interface ScriptStats {
  /** The server's `run_id` before the counters were read; undefined where INFO did not give it. */
  readonly runId: string | undefined;
  /** The time in script calls so far (µs, INFO commandstats); undefined where the server did not give it. */
  readonly usec: number | undefined;
  /** LATENCY HISTOGRAM of the script commands; undefined where not read or not given. */
  readonly histograms: Histograms | undefined;
  /** The server's `run_id` after the counters were read. */
  readonly runIdAfter: string | undefined;
}

/**
 * The script counters, with the server's `run_id` read on either side of them, in one round trip
 * (a pipeline: each command answers or fails on its own). `histogram`: leave LATENCY HISTOGRAM out,
 * read it if the server gives it, or read it and let a refusal be the caller's error ('required',
 * for --server-stats). INFO commandstats, which any server answers unless an ACL refuses it, is
 * read whatever `histogram` says.
 */
export async function readScriptStats(redis: Redis, histogram: 'required' | 'if-available' | undefined): Promise<ScriptStats> {
  const pipeline = redis.pipeline().info('server').info('commandstats');
  if (histogram) pipeline.call('LATENCY', 'HISTOGRAM', ...SCRIPT_COMMANDS);
  pipeline.info('server');
  const replies = (await pipeline.exec()) ?? [];
  const answer = (i: number): unknown => (replies[i]?.[0] ? undefined : replies[i]?.[1]);
  const text = (i: number): string | undefined => {
    const reply = answer(i);
    return typeof reply === 'string' ? reply : undefined;
  };
  let histograms: Histograms | undefined;
  if (histogram) {
    const [err, reply] = replies[2] ?? [new Error('no reply to LATENCY HISTOGRAM')];
    if (err && histogram === 'required') throw err;
    histograms = err ? undefined : parseLatencyHistogram(reply);
  }
  const usecText = text(1);
  const before = text(0);
  const after = text(replies.length - 1);
  return {
    runId: before === undefined ? undefined : serverRunId(before),
    usec: usecText === undefined ? undefined : scriptUsec(usecText),
    histograms,
    runIdAfter: after === undefined ? undefined : serverRunId(after),
  };
}

/**
 * Whether two readings were all answered by one server process: one known `run_id` on either side
 * of each. Only a connection that left for another server and came back between two readings of
 * one `run_id` gets past this, and a failover never comes back: the old primary is gone. Pure.
 */
function oneServer(before: ScriptStats, after: ScriptStats): boolean {
  const ids = [before.runId, before.runIdAfter, after.runId, after.runIdAfter];
  return ids[0] !== undefined && ids.every((id) => id === ids[0]);
}

/**
 * The race's own server figures from the readings around it: the p99 of its script calls (ms) and
 * the server's time in script calls per job (µs, to a thousandth). Each is null where a reading
 * lacks it, where the two readings come from two server processes (`--fault failover`: the
 * primary before, the promoted replica after), where the counters went down between them (CONFIG
 * RESETSTAT), and the p99 where no call was made. Pure.
 */
export function scriptStatsBetween(before: ScriptStats, after: ScriptStats, jobs: number): { serverCallMsP99: number | null; serverUsPerJob: number | null } {
  if (!oneServer(before, after)) return { serverCallMsP99: null, serverUsPerJob: null };
  const usec = before.usec !== undefined && after.usec !== undefined ? after.usec - before.usec : undefined;
  return {
    serverCallMsP99: before.histograms && after.histograms ? (p99Between(before.histograms, after.histograms) ?? null) : null,
    serverUsPerJob: usec !== undefined && usec >= 0 && jobs > 0 ? Math.round((usec / jobs) * 1000) / 1000 : null,
  };
}

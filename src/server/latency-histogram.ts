/**
 * Server-side time per script call, from LATENCY HISTOGRAM (Redis 7+, Valkey): the server keeps,
 * per command, cumulative call counts in power-of-two microsecond buckets. Reading it before and
 * after a race and subtracting gives the distribution of that race's calls alone, without
 * resetting anybody's statistics.
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

/** The p99 of the script calls made between two readings; undefined when none were made. */
export function p99Between(before: Histograms, after: Histograms): number | undefined {
  return histogramPercentileMs(histogramDelta(before, after), 99);
}

export async function readScriptHistogram(redis: Redis): Promise<Histograms> {
  return parseLatencyHistogram(await redis.call('LATENCY', 'HISTOGRAM', ...SCRIPT_COMMANDS));
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

export async function readScriptUsec(redis: Redis): Promise<number> {
  return scriptUsec(await redis.info('commandstats'));
}

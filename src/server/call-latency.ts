/**
 * How long each script call took as the client saw it: from sending to the reply, so it includes
 * waiting behind other sweepers' calls on the server's one command thread. Kept in a growable
 * Float64Array, so a run of 10,000 calls costs 80 kB, not 10,000 objects.
 */
import { percentileOfSorted } from '../shared/model.js';

export class LatencyLog {
  private values = new Float64Array(256);
  private size = 0;

  get length(): number {
    return this.size;
  }

  add(ms: number): void {
    if (this.size === this.values.length) {
      const grown = new Float64Array(this.size * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.size++] = ms;
  }

  /** A copy of the recorded durations. */
  toArray(): Float64Array {
    return this.values.slice(0, this.size);
  }
}

export interface CallLatency {
  readonly callMsP50: number;
  readonly callMsP99: number;
  readonly callMsMax: number;
}

/** p50, p99 and max over every log, rounded to 0.01 ms; undefined when no call was recorded. */
export function summarizeLatency(logs: readonly LatencyLog[]): CallLatency | undefined {
  const total = logs.reduce((sum, log) => sum + log.length, 0);
  if (total === 0) return undefined;
  const all = new Float64Array(total);
  let at = 0;
  for (const log of logs) {
    all.set(log.toArray(), at);
    at += log.length;
  }
  all.sort();
  const round = (ms: number): number => Math.round(ms * 100) / 100;
  return {
    callMsP50: round(percentileOfSorted(all, 50)),
    callMsP99: round(percentileOfSorted(all, 99)),
    callMsMax: round(all[total - 1] ?? Number.NaN),
  };
}

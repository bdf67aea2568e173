/**
 * Names for several queues run at once, picked by slot so that on a cluster they spread evenly
 * over the primaries: queue i is meant for primary i mod P, and its name gets a numeric suffix
 * until its slot belongs to that primary. On one server every name fits the first try.
 */
import { queueSlot } from './keys.js';

/**
 * `count` queue names from `base`: `base` itself for a single queue, else `base-i`, or `base-i-n`
 * with the first n that lands queue i on `primaries[i mod P]`. `ownerOf` maps a slot to a primary.
 */
export function pickQueueNames(base: string, count: number, primaries: readonly string[], ownerOf: (slot: number) => string | undefined): string[] {
  if (count === 1) return [base];
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const wanted = primaries.length > 0 ? primaries[i % primaries.length] : undefined;
    let name = `${base}-${i}`;
    for (let n = 1; wanted !== undefined && ownerOf(queueSlot(name)) !== wanted && n < 100_000; n++) name = `${base}-${i}-${n}`;
    names.push(name);
  }
  return names;
}

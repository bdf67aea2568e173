/** The benchmark's command line and headline ratios (its timings are never asserted). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultRepeats, headlineRatios, parseBenchArgs } from '../src/bench/main.js';
import type { SizeFigures } from '../src/bench/measure.js';
import { EmqError } from '../src/errors.js';

test('bench flags: sizes, batch, repeats, out, json', () => {
  assert.deepEqual(parseBenchArgs([]), { sizes: [10_000, 100_000, 1_000_000], json: false, batch: 1000, repeats: undefined, out: undefined });
  assert.deepEqual(parseBenchArgs(['--sizes', '10000,100000', '--json', '--batch', '500', '--repeats', '2', '--out', 'x.json']), {
    sizes: [10_000, 100_000], json: true, batch: 500, repeats: 2, out: 'x.json',
  });
  assert.throws(() => parseBenchArgs(['--sizes', '10k']), EmqError);
  assert.throws(() => parseBenchArgs(['--batch', '5000']), EmqError);
  assert.throws(() => parseBenchArgs(['--fast']), /unknown argument --fast/);
});

test('headline ratios come from the largest size of the first server', () => {
  const size = (jobs: number, r: number): SizeFigures => ({
    jobs, seeding: { ratio: r, batchedRatio: r - 1 }, atomicSweep: { ratio: r + 1, serverRatio: r + 1.5, ceilingRatio: r + 1.7 }, audit: { ratio: r + 2 },
  }) as unknown as SizeFigures;
  assert.deepEqual(headlineRatios([{ kind: 'redis', version: '7', sizes: [size(1_000_000, 3), size(10_000, 9)] }]), { seeding: 3, seedingBatched: 2, atomicSweep: 4, atomicSweepServer: 4.5, atomicSweepCeiling: 4.7, audit: 5 });
  assert.equal(headlineRatios([]), null);
});

test('more repeats where a race is short', () => {
  assert.deepEqual([1, 10_000, 10_001, 100_000, 100_001, 1_000_000].map(defaultRepeats), [15, 15, 7, 7, 3, 3]);
});

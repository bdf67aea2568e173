/** The benchmark's command line and headline ratios (its timings are never asserted). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BENCH_LATENCY_MS,
  bestSweepers,
  cliRaceOverFloor,
  defaultRepeats,
  headlineRatios,
  latencyHeadline,
  parseBenchArgs,
  type CliRaceFigures,
} from '../../src/bench/main.js';
import { latencyCase, runSample, slowDown, type RunSample } from '../../src/bench/latency.js';
import { rotated, type SizeFigures } from '../../src/bench/measure.js';
import { EmqError } from '../../src/shared/errors.js';

test('bench flags: sizes, batch, repeats, out, json', () => {
  assert.deepEqual(parseBenchArgs([]), {
    sizes: [10_000, 100_000, 1_000_000],
    json: false,
    batch: 1000,
    repeats: undefined,
    out: undefined,
    latency: BENCH_LATENCY_MS,
    latencyOnly: false,
  });
  assert.deepEqual(parseBenchArgs(['--sizes', '10000,100000', '--json', '--batch', '500', '--repeats', '2', '--out', 'x.json', '--latency', '0.5']), {
    sizes: [10_000, 100_000],
    json: true,
    batch: 500,
    repeats: 2,
    out: 'x.json',
    latency: 0.5,
    latencyOnly: false,
  });
  assert.deepEqual(parseBenchArgs(['--latency-only', '--latency', '5']), {
    sizes: [],
    json: false,
    batch: 1000,
    repeats: undefined,
    out: undefined,
    latency: 5,
    latencyOnly: true,
  });
  assert.equal(parseBenchArgs(['--latency', '0']).latency, 0, '0 leaves the latency part out');
  assert.throws(() => parseBenchArgs(['--latency', 'two']), EmqError);
  assert.throws(() => parseBenchArgs(['--latency-only', '--latency', '0']), /measures nothing/);
  assert.throws(() => parseBenchArgs(['--sizes', '10k']), EmqError);
  assert.throws(() => parseBenchArgs(['--batch', '5000']), EmqError);
  assert.throws(() => parseBenchArgs(['--fast']), /unknown argument --fast/);
});

test('headline ratios come from the largest size of the first server', () => {
  const size = (jobs: number, r: number): SizeFigures =>
    ({
      jobs,
      seeding: { ratio: r, batchedRatio: r - 1 },
      atomicSweep: { ratio: r + 1, serverRatio: r + 1.5, ceilingRatio: r + 1.7 },
      audit: { ratio: r + 2 },
    }) as unknown as SizeFigures;
  assert.deepEqual(headlineRatios([{ kind: 'redis', version: '7', sizes: [size(1_000_000, 3), size(10_000, 9)] }]), {
    seeding: 3,
    seedingBatched: 2,
    atomicSweep: 4,
    atomicSweepServer: 4.5,
    atomicSweepCeiling: 4.7,
    audit: 5,
  });
  assert.equal(headlineRatios([]), null);
});

test("the CLI's race is set beside the floor at the sweeper count the shipped sweep was fastest at", () => {
  const sweep = (pairs: [number, number][]) =>
    ({ atomicSweep: { ours: pairs.map(([sweepers, jobsPerSec]) => ({ sweepers, jobsPerSec, clean: true })) } }) as unknown as SizeFigures;
  assert.equal(
    bestSweepers(
      sweep([
        [1, 100],
        [2, 300],
        [8, 250],
      ]),
    ),
    2,
  );
  assert.equal(bestSweepers(sweep([])), 8, 'none measured: the standard count');
  const cli = (overFloor: number) => ({ overFloor }) as unknown as CliRaceFigures;
  const size = (jobs: number, overFloor?: number) => ({ jobs, ...(overFloor !== undefined ? { cliRace: cli(overFloor) } : {}) }) as unknown as SizeFigures;
  assert.deepEqual(
    cliRaceOverFloor([
      { kind: 'redis', version: '7', sizes: [size(100_000, 0.9), size(10_000, 0.5)] },
      { kind: 'valkey', version: '8', sizes: [size(100_000, 0.86)] },
      { kind: 'redict', version: '7', sizes: [size(100_000)] },
    ]),
    { redis: 0.9, valkey: 0.86 },
    'each server at its largest size; one without the figure is left out',
  );
  assert.equal(cliRaceOverFloor([]), null);
});

test('more repeats where a race is short', () => {
  assert.deepEqual([1, 10_000, 10_001, 100_000, 100_001, 1_000_000].map(defaultRepeats), [15, 15, 7, 7, 3, 3]);
});

test("latency: a mode's slow-down is its best run direct over its best through the proxy", () => {
  assert.equal(slowDown([1000, 1200, 900], [200, 150, 190]), 6);
  assert.equal(slowDown([300_000], [100_000, 120_000]), 2.5);
  assert.throws(() => slowDown([1000], [0]), /no delayed run/);
});

test("latency: a case's figures come from its runs, and the loop's slow-down over the atomic sweep's", () => {
  const sample = (atomic: number, loop: number, rtt?: number, loopClean = false): RunSample => ({
    modes: [
      { mode: 'atomic', jobsPerSec: atomic, clean: true },
      { mode: 'loop', jobsPerSec: loop, clean: loopClean },
    ],
    ...(rtt !== undefined ? { rttMedianMs: rtt } : {}),
  });
  const figures = latencyCase(['--mode', 'both'], [sample(200_000, 1000), sample(180_000, 1100)], [sample(80_000, 160, 2.1, true), sample(100_000, 140, 2.3)]);
  assert.deepEqual(figures, {
    args: ['--mode', 'both'],
    pairs: 2,
    measuredRttMs: [2.1, 2.3],
    modes: [
      { mode: 'atomic', directJobsPerSec: [200_000, 180_000], delayedJobsPerSec: [80_000, 100_000], slowDown: 2, racedDirect: 0, racedDelayed: 0 },
      { mode: 'loop', directJobsPerSec: [1000, 1100], delayedJobsPerSec: [160, 140], slowDown: 6.88, racedDirect: 2, racedDelayed: 1 },
    ],
    loopOverAtomic: 3.44,
  });
  const atomicOnly = latencyCase(
    ['--mode', 'atomic'],
    [{ modes: [{ mode: 'atomic', jobsPerSec: 400_000, clean: true }] }],
    [{ modes: [{ mode: 'atomic', jobsPerSec: 380_000, clean: true }], rttMedianMs: 2 }],
  );
  assert.equal(atomicOnly.loopOverAtomic, null);
  assert.equal(atomicOnly.modes[0]?.slowDown, 1.05);
  // The headline is the first server's first case; without a loop there is none.
  const server = (cases: ReturnType<typeof latencyCase>[]) => ({ kind: 'redis', version: '7', sizes: [], latency: { requestedMs: 2, cases } });
  assert.deepEqual(latencyHeadline([server([figures, atomicOnly])]), { requestedMs: 2, loop: 6.88, atomic: 2, loopOverAtomic: 3.44 });
  assert.equal(latencyHeadline([server([atomicOnly])]), null);
  assert.equal(latencyHeadline([{ kind: 'redis', version: '7', sizes: [] }]), null);
});

test("latency: what the benchmark reads of a run's JSON", () => {
  const report = {
    runs: [
      { mode: 'atomic', jobsPerSec: 5, clean: true },
      { mode: 'loop', jobsPerSec: 1, clean: false },
    ],
    latency: { measuredRttMs: { median: 2.2, p99: 3 } },
  } as unknown as Parameters<typeof runSample>[0];
  assert.deepEqual(runSample(report), {
    modes: [
      { mode: 'atomic', jobsPerSec: 5, clean: true },
      { mode: 'loop', jobsPerSec: 1, clean: false },
    ],
    rttMedianMs: 2.2,
  });
  assert.deepEqual(runSample({ runs: [] }), { modes: [] });
});

test('rotated: each repeat starts with the next side, wrapping round, so no side always goes first', () => {
  const sides = ['ours', 'calibration', 'floor'];
  assert.deepEqual(
    [0, 1, 2, 3].map((r) => rotated(sides, r)),
    [
      ['ours', 'calibration', 'floor'],
      ['calibration', 'floor', 'ours'],
      ['floor', 'ours', 'calibration'],
      ['ours', 'calibration', 'floor'],
    ],
  );
  assert.deepEqual(rotated(['cli', 'floor'], 1), ['floor', 'cli']);
  assert.deepEqual(rotated([], 5), []);
  // The input is not changed.
  assert.deepEqual(sides, ['ours', 'calibration', 'floor']);
});

/** The pure arithmetic behind call latencies, server histograms, --loop-jobs and progress lines. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { percentileOfSorted } from '../../src/shared/model.js';
import { LatencyLog, summarizeLatency } from '../../src/server/call-latency.js';
import { loopJobsNote } from '../../src/cli/race-output.js';
import { jobsForMode } from '../../src/cli/options.js';
import type { Redis } from 'ioredis';
import { progressBoard, progressLine, progressSummary } from '../../src/race/progress.js';
import {
  histogramDelta,
  histogramPercentileMs,
  parseLatencyHistogram,
  scriptStatsBetween,
  scriptUsec,
  serverRunId,
  type ScriptStats,
} from '../../src/server/latency-histogram.js';
import { LIMITS, type RunResult } from '../../src/shared/model.js';

test('nearest-rank percentiles of sorted values', () => {
  const values = Float64Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(percentileOfSorted(values, 50), 50);
  assert.equal(percentileOfSorted(values, 99), 99);
  assert.equal(percentileOfSorted(values, 100), 100);
  assert.equal(percentileOfSorted([7], 99), 7);
  assert.ok(Number.isNaN(percentileOfSorted([], 50)));
});

test('latency logs grow past their first capacity and summarize across sweepers', () => {
  const a = new LatencyLog();
  const b = new LatencyLog();
  for (let i = 1; i <= 1000; i++) a.add(i / 100);
  b.add(42.123);
  assert.equal(a.length, 1000);
  const summary = summarizeLatency([a, b]);
  assert.deepEqual(summary, { callMsP50: 5.01, callMsP99: 9.91, callMsMax: 42.12 });
  assert.equal(summarizeLatency([new LatencyLog()]), undefined);
});

test('LATENCY HISTOGRAM replies are summed over commands and subtracted bucket by bucket', () => {
  const before = parseLatencyHistogram(['evalsha', ['calls', 3, 'histogram_usec', [8, 1, 16, 3]]]);
  const after = parseLatencyHistogram([
    'evalsha',
    ['calls', 103, 'histogram_usec', [8, 1, 16, 50, 1056, 102, 4227, 103]],
    'eval',
    ['calls', 1, 'histogram_usec', [16, 1]],
  ]);
  // evalsha gained 47 calls at 16 µs, 52 at 1056 and 1 at 4227; eval, new, 1 at 16.
  const delta = histogramDelta(before, after);
  assert.deepEqual(delta, [
    [16, 48],
    [1056, 52],
    [4227, 1],
  ]);
  assert.equal(histogramPercentileMs(delta, 50), 1.056);
  assert.equal(histogramPercentileMs(delta, 99), 1.056);
  assert.equal(histogramPercentileMs(delta, 100), 4.227);
  assert.equal(histogramPercentileMs([], 99), undefined);
  assert.deepEqual([...parseLatencyHistogram(null)], []);
});

test("the server's figures around a race come from one server process, its counters only grown, or are not measured", () => {
  const primary = 'a'.repeat(40);
  const replica = 'b'.repeat(40);
  // Cumulative, as the server gives them: `calls` at 16 µs, and `slower` more at 1056.
  const histograms = (calls: number, slower = 0): ScriptStats['histograms'] =>
    parseLatencyHistogram(['evalsha', ['calls', calls + slower, 'histogram_usec', slower > 0 ? [16, calls, 1056, calls + slower] : [16, calls]]]);
  const reading = (runId: string | undefined, usec: number | undefined, h?: ScriptStats['histograms']): ScriptStats => ({
    runId,
    usec,
    histograms: h,
    runIdAfter: runId,
  });
  // One server: the difference, per job, and the p99 of the calls made between.
  assert.deepEqual(scriptStatsBetween(reading(primary, 1000, histograms(3)), reading(primary, 3000, histograms(3, 10)), 1000), {
    serverUsPerJob: 2,
    serverCallMsP99: 1.056,
  });
  // --fault failover: the primary before the race (its seeding's script time counted), the
  // promoted replica after it (far less): a difference of two servers, which was -18.96 µs a job.
  assert.deepEqual(scriptStatsBetween(reading(primary, 20_000, histograms(40)), reading(replica, 1040, histograms(3)), 100), {
    serverUsPerJob: null,
    serverCallMsP99: null,
  });
  // Nor when the replica happens to have counted more: which server answered decides, not the sign.
  assert.deepEqual(scriptStatsBetween(reading(primary, 1000, histograms(3)), reading(replica, 9000, histograms(50)), 100), {
    serverUsPerJob: null,
    serverCallMsP99: null,
  });
  // The server changed between the two run_ids of one reading.
  assert.deepEqual(scriptStatsBetween(reading(primary, 1000), { ...reading(primary, 5000), runIdAfter: replica }, 100).serverUsPerJob, null);
  // A run_id INFO did not give: nothing shows the two readings are one server's.
  assert.equal(scriptStatsBetween(reading(undefined, 1000), reading(undefined, 5000), 100).serverUsPerJob, null);
  // One server whose counters went down between the readings (CONFIG RESETSTAT): no difference measured.
  assert.deepEqual(scriptStatsBetween(reading(primary, 5000, histograms(40)), reading(primary, 100, histograms(2)), 100), {
    serverUsPerJob: null,
    serverCallMsP99: null,
  });
  // Missing readings, and no jobs, stay not measured.
  assert.equal(scriptStatsBetween(reading(primary, undefined), reading(primary, 5000), 100).serverUsPerJob, null);
  assert.equal(scriptStatsBetween(reading(primary, 1000), reading(primary, 5000), 0).serverUsPerJob, null);
  assert.equal(scriptStatsBetween(reading(primary, 1000), reading(primary, 5000), 100).serverCallMsP99, null);
  // run_id from INFO server, as Redis and Valkey print it.
  assert.equal(serverRunId(`# Server\r\nredis_version:7.2.4\r\nrun_id:${primary}\r\ntcp_port:6379\r\n`), primary);
  assert.equal(serverRunId('# Server\r\nredis_version:7.2.4\r\n'), undefined);
});

test('round-trip modes run on --loop-jobs jobs, the atomic mode on all of them', () => {
  assert.equal(jobsForMode('loop', 1_000_000, LIMITS.loopJobs.default), 100_000);
  assert.equal(jobsForMode('loop', 5000, LIMITS.loopJobs.default), 5000);
  assert.equal(jobsForMode('atomic', 1_000_000, 100), 1_000_000);
  const runs = [
    { mode: 'atomic', jobs: 1000 },
    { mode: 'loop', jobs: 300 },
  ] as unknown as RunResult[];
  assert.deepEqual(loopJobsNote(runs, 1000), ['loop ran on 300 of the 1,000 jobs (--loop-jobs: a round trip per command is slow by nature)']);
  assert.deepEqual(loopJobsNote(runs.slice(0, 1), 1000), []);
});

test('progress lines count what has left active', () => {
  assert.equal(progressLine('loop', 750, 1000), 'loop: 250/1,000 leases reclaimed (25%)');
  assert.equal(progressLine('atomic', 0, 10), 'atomic: 10/10 leases reclaimed (100%)');
  // With the time taken: the rate so far, and the time left at that rate.
  assert.equal(progressLine('loop', 750, 1000, 5000), 'loop: 250/1,000 leases reclaimed (25%), 50 jobs/s, 5s elapsed, about 15s left');
  assert.equal(progressLine('loop', 1000, 1000, 2000), 'loop: 0/1,000 leases reclaimed (0%), 0 jobs/s, 2s elapsed, time left unknown');
  assert.equal(progressLine('loop', 0, 1000, 185_000), 'loop: 1,000/1,000 leases reclaimed (100%), 5 jobs/s, 3m 05s elapsed');
});

test('a CI log gets a plain progress line at most every 5 s, none in the first 5 s; a terminal one line cut to its width', async (t) => {
  // The board's own clock and its once-a-second poll, both driven by hand.
  t.mock.timers.enable({ apis: ['setInterval'] });
  let clock = 0;
  let reading = 1000;
  const redis = { zcard: async () => reading } as unknown as Redis;
  const written: string[] = [];
  const tick = async (at: number, left: number): Promise<void> => {
    clock = at;
    reading = left;
    t.mock.timers.tick(1000);
    await new Promise((resolve) => setImmediate(resolve));
  };
  const plain = progressBoard((text) => written.push(text), { terminal: false, width: () => 80, now: () => clock });
  const stop = plain.watch(redis, 'active', 'loop', 'q-1', 1000, 0);
  for (const [at, left] of [
    [1000, 900],
    [3000, 700],
    [5000, 500],
    [6000, 400],
    [9000, 100],
    [10_000, 50],
  ] as const)
    await tick(at, left);
  stop();
  // Wrapped to the 80 columns of the log, the rest indented.
  assert.deepEqual(written, [
    'progress: loop: 500/1,000 leases reclaimed (50%), 100 jobs/s, 5s elapsed, about\n  5s left (queue q-1)\n',
    'progress: loop: 950/1,000 leases reclaimed (95%), 95 jobs/s, 10s elapsed, about\n  1s left (queue q-1)\n',
  ]);
  written.length = 0;
  const terminal = progressBoard((text) => written.push(text), { terminal: true, width: () => 40, now: () => clock });
  const stopTerminal = terminal.watch(redis, 'active', 'loop', 'q-1', 1000, 0);
  await tick(12_000, 50);
  stopTerminal();
  // Cut to the width by what matters least: the queue, the time taken, the rate, the noun; the time left stays.
  assert.deepEqual(written, ['\r\x1b[2Kloop: 950/1,000 (95%), about 0s left', '\r\x1b[2K']);
});

test('races side by side share one progress line, summed per mode', () => {
  const a = { mode: 'loop', queue: 'q-1', left: 600, jobs: 1000 };
  const b = { mode: 'loop', queue: 'q-2', left: 100, jobs: 1000 };
  assert.equal(progressSummary([a]), 'loop: 400/1,000 leases reclaimed (40%) (queue q-1)');
  assert.equal(progressSummary([a, b]), 'loop, 2 queues: 1,300/2,000 leases reclaimed (65%)');
  const c = { mode: 'atomic', queue: 'q-3', left: 0, jobs: 500 };
  assert.equal(progressSummary([a, c, b]), 'loop, 2 queues: 1,300/2,000 leases reclaimed (65%); atomic, 1 queue: 500/500 leases reclaimed (100%)');
});

test("script time is the usec of EVALSHA, EVAL and FCALL from INFO commandstats, and nothing else's", () => {
  const info = [
    '# Commandstats',
    'cmdstat_evalsha:calls=100,usec=2500,usec_per_call=25.00,rejected_calls=0,failed_calls=0',
    'cmdstat_eval:calls=1,usec=40,usec_per_call=40.00,rejected_calls=0,failed_calls=0',
    'cmdstat_fcall:calls=2,usec=60,usec_per_call=30.00,rejected_calls=0,failed_calls=0',
    'cmdstat_hincrby:calls=100,usec=900,usec_per_call=9.00,rejected_calls=0,failed_calls=0',
    'cmdstat_evalsha_ro:calls=5,usec=7,usec_per_call=1.40,rejected_calls=0,failed_calls=0',
    '',
  ].join('\r\n');
  assert.equal(scriptUsec(info), 2600);
  assert.equal(scriptUsec(''), 0);
});

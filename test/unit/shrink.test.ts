/** The shrinking's pure parts: the figure kept, the orders with fewer switches, the one-job trace, and the exported test's text. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explainArgs, exportedTest } from '../../src/explore/export-test.js';
import { anomalyToKeep, fewerSwitches, firstSweeps, oneJobSeeds } from '../../src/explore/shrink.js';
import { switchesOf } from '../../src/explore/search.js';
import { ANOMALIES, type Anomaly, type ShrunkWitness } from '../../src/shared/model.js';
import { shrinkLines } from '../../src/report/shrink.js';

const none = Object.fromEntries(ANOMALIES.map((name) => [name, 0])) as Record<Anomaly, number>;

test('a lost increment is kept before a duplicate, a duplicate before the rest; a clean run has none', () => {
  assert.equal(anomalyToKeep({ ...none, doubleRecoveries: 3, duplicatePending: 2, lostIncrements: 1 }), 'lostIncrements');
  assert.equal(anomalyToKeep({ ...none, doubleRecoveries: 3, duplicatePending: 2 }), 'duplicatePending');
  assert.equal(anomalyToKeep({ ...none, lostJobs: 1 }), 'lostJobs');
  assert.equal(anomalyToKeep(none), undefined);
});

test('each swap of two neighbouring runs gives an order with fewer switches and the same turns', () => {
  const order = [...'AABBBAB'] as ('A' | 'B')[];
  const trace = (sweeps: readonly ('A' | 'B')[]) => sweeps.map((sweep) => ({ sweep, label: 'x', runnable: [] }));
  const candidates = fewerSwitches(order);
  assert.deepEqual(
    candidates.map((c) => c.join('')),
    ['BBBAAAB', 'AAABBBB', 'AABBBBA'],
  );
  for (const candidate of candidates) {
    assert.ok(switchesOf(trace(candidate)) < switchesOf(trace(order)));
    assert.deepEqual([...candidate].sort(), [...order].sort());
  }
  assert.deepEqual(fewerSwitches([...'AAAA'] as 'A'[]), []);
});

test("a one-job race's trace keeps each sweeper's first sweep, as sweeps A and B", () => {
  const turns = [
    { sweeper: 1, sweep: 1, label: 'zrangebyscore' },
    { sweeper: 0, sweep: 1, label: 'zrangebyscore' },
    { sweeper: 1, sweep: 1, label: 'zscore' },
    { sweeper: 1, sweep: 2, label: 'zrangebyscore' },
    { sweeper: 0, sweep: 1, label: 'zscore' },
  ];
  assert.deepEqual(
    firstSweeps(turns).map((t) => `${t.sweep}:${t.label}`),
    ['B:zrangebyscore', 'A:zrangebyscore', 'B:zscore', 'A:zscore'],
  );
});

const WITNESS: ShrunkWitness = {
  mode: 'loop',
  anomaly: 'lostIncrements',
  outcome: 'duplicateAndLostIncrement',
  from: { jobs: 200, sweepers: 4, seed: 7 },
  steps: [
    { stage: 'jobs', jobs: 100, sweepers: 4, seed: 7, found: true },
    { stage: 'jobs', jobs: 50, sweepers: 4, seed: 7, found: false },
    { stage: 'sweepers', jobs: 100, sweepers: 3, seed: 7, found: true },
    { stage: 'sweepers', jobs: 100, sweepers: 2, seed: 7, found: false },
    { stage: 'one-job', jobs: 1, sweepers: 2, seed: 7, found: false },
    { stage: 'one-job', jobs: 1, sweepers: 2, seed: 8, found: true },
  ],
  switches: 3,
  schedule: 'A:zrangebyscore,B:zrangebyscore',
  command: 'emq-race explain --mode loop --max-stalled 5 --schedule A:detect,A:probe,B:detect,B:probe,B:move,B:read,A:move,A:read,A:write,B:write',
};

test("the shrink's lines: the path taken, and the explain line whole", () => {
  const lines = shrinkLines(WITNESS, (line) => line);
  assert.match(
    lines[0] ?? '',
    /^Shrunk from seed 7, keeping a lost increment at every step \(6 seeded runs.*jobs 200 → 100, sweepers 4 → 3, then one job and two sweeps: seed 8 at one job's quicker changes of sweep \(not what --seed 8 runs; 2 seeds tried\)\.$/,
  );
  assert.equal(lines[1], 'The witness, duplicateAndLostIncrement in 3 switches, to replay step by step:');
  assert.equal(lines[2], `  ${WITNESS.command}`);
  const steps = WITNESS.steps.map((step) => ({ ...step, found: step.jobs === 1 ? false : step.found }));
  const lost = shrinkLines({ ...WITNESS, steps, switches: null, schedule: null, command: null }, (line) => line);
  assert.equal(lost.length, 1);
  assert.match(lost[0] ?? '', /no seed of 2 tried showed it on one job and two sweeps\.$/);
  // Two sweepers from the start: a halving to one job that kept nothing is no step of the path,
  // nor a seed of the one-job stage.
  const two: ShrunkWitness = {
    ...WITNESS,
    from: { jobs: 2, sweepers: 2, seed: 3 },
    steps: [
      { stage: 'jobs', jobs: 1, sweepers: 2, seed: 3, found: false },
      { stage: 'one-job', jobs: 1, sweepers: 2, seed: 3, found: true },
    ],
  };
  assert.match(
    shrinkLines(two, (line) => line)[0] ?? '',
    /: jobs 2, sweepers 2, then one job and two sweeps: seed 3 at one job's quicker changes of sweep \(not what --seed 3 runs; 1 seed tried\)\.$/,
  );
  const halved: ShrunkWitness = { ...two, steps: [{ stage: 'jobs', jobs: 1, sweepers: 2, seed: 3, found: true }, ...two.steps.slice(1)] };
  assert.match(
    shrinkLines(halved, (line) => line)[0] ?? '',
    /: jobs 2 → 1, sweepers 2, then one job and two sweeps: seed 3 at one job's quicker changes of sweep \(not what --seed 3 runs; 1 seed tried\)\.$/,
  );
});

test('the exported test names its mode on the first line and carries the schedule and the flags', () => {
  assert.deepEqual(explainArgs(WITNESS.command as string), {
    schedule: 'A:detect,A:probe,B:detect,B:probe,B:move,B:read,A:move,A:read,A:write,B:write',
    flags: ['--max-stalled', '5'],
  });
  const text = exportedTest(WITNESS, WITNESS.command as string, 'a test');
  assert.match(text.split('\n')[0] ?? '', /^const MODE = 'loop'; /);
  assert.match(text, /^const SCHEDULE = 'A:detect,A:probe,B:detect.*B:write';$/m);
  assert.match(text, /^const FLAGS = \['--max-stalled', '5'\];$/m);
  assert.match(text, /execFile\('emq-race', args/);
  // A file name with a line break in it stays inside the comment that names it.
  const named = exportedTest(WITNESS, WITNESS.command as string, "emq-race --export-test 'a\nprocess.exit(1)\u2028b.mjs'");
  assert.match(named, /^\/\/ Made by emq-race --export-test 'a\\nprocess\.exit\(1\)\\u2028b\.mjs'$/m);
  assert.doesNotMatch(named, /^process\.exit/m);
});

test("the one-job seeds start at the run's own and round past the last to 0, each one --seed takes", () => {
  assert.deepEqual(oneJobSeeds(7).slice(0, 3), [7, 8, 9]);
  const top = oneJobSeeds(4_294_967_295);
  assert.deepEqual(top.slice(0, 3), [4_294_967_295, 0, 1]);
  assert.ok(top.every((seed) => Number.isInteger(seed) && seed >= 0 && seed <= 4_294_967_295));
});

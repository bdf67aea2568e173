/**
 * The pure arithmetic behind the new features: trial statistics, the live-lease and cross-check
 * rules of the audit, the sweep cadence, a script's return values, and a few parsers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { percent } from '../../src/shared/text.js';
import { isStolen, recordDisagrees } from '../../src/audit/rules.js';
import { csvField } from '../../src/report/csv.js';
import { sweepFunctionNames } from '../../src/lua/function-source.js';
import { librarySource } from '../../src/sweepers/function-library.js';
import { modesWithScript, parseModes, parsePendingKind } from '../../src/cli/options.js';
import { keptBefore, runQueueName } from '../../src/race/plan.js';
import { besideCompanion, keptUnreported } from '../../src/race/run-mode.js';
import { keptPromotedWords } from '../../src/server/kept-server.js';
import { EmqError } from '../../src/shared/errors.js';
import { pauseMs } from '../../src/race/sweeper-life.js';
import { returnedIds } from '../../src/sweepers/one-call.js';
import { reproductionRate, spread, summarizeTrials, type TrialRun } from '../../src/audit/trials.js';
import { ANOMALIES, defaultLive, type RunResult } from '../../src/shared/model.js';
import { renderTrialsTable } from '../../src/report/trials-table.js';
import { runResult } from '../helpers/run-result.js';

const zero = Object.fromEntries(ANOMALIES.map((name) => [name, 0])) as Record<(typeof ANOMALIES)[number], number>;
const trial = (mode: string, jobsPerSec: number, over: Partial<typeof zero> = {}): TrialRun => ({ ...zero, ...over, mode, jobsPerSec });

test('spread: min, median and max, odd and even counts, unsorted input', () => {
  assert.deepEqual(spread([5]), { min: 5, median: 5, max: 5 });
  assert.deepEqual(spread([9, 1, 5]), { min: 1, median: 5, max: 9 });
  assert.deepEqual(spread([4, 1, 10, 2]), { min: 1, median: 3, max: 10 });
  assert.deepEqual(spread([0, 0, 7, 0]), { min: 0, median: 0, max: 7 });
  assert.throws(() => spread([]));
});

test('a share as a percentage is never rounded to an end it is not at: 1 in 201 is <1%, 200 in 201 is >99%', () => {
  assert.deepEqual([0, 1 / 201, 0.005, 0.5, 0.994, 200 / 201, 1].map(percent), ['0%', '<1%', '1%', '50%', '99%', '>99%', '100%']);
});

test('reproduction rate: the share of trials with an anomaly', () => {
  assert.equal(reproductionRate(0, 10), 0);
  assert.equal(reproductionRate(7, 10), 0.7);
  assert.equal(reproductionRate(3, 3), 1);
  assert.throws(() => reproductionRate(0, 0));
});

test('summarizeTrials: per mode in first-run order, rate from dirty trials, spreads per count', () => {
  const summaries = summarizeTrials([
    trial('atomic', 100),
    trial('loop', 10, { doubleRecoveries: 4, lostIncrements: 3 }),
    trial('atomic', 300),
    trial('loop', 30),
    trial('atomic', 200),
    trial('loop', 20, { doubleRecoveries: 8, duplicatePending: 8, stolenLeases: 1 }),
  ]);
  assert.deepEqual(
    summaries.map((s) => s.mode),
    ['atomic', 'loop'],
  );
  const [atomic, loop] = summaries;
  assert.equal(atomic?.trials, 3);
  assert.equal(atomic?.reproduced, 0);
  assert.equal(atomic?.reproductionRate, 0);
  assert.deepEqual(atomic?.jobsPerSec, { min: 100, median: 200, max: 300 });
  assert.equal(loop?.reproduced, 2);
  assert.equal(loop?.reproductionRate, 2 / 3);
  assert.deepEqual(loop?.doubleRecoveries, { min: 0, median: 4, max: 8 });
  assert.deepEqual(loop?.lostIncrements, { min: 0, median: 0, max: 3 });
  assert.deepEqual(loop?.stolenLeases, { min: 0, median: 0, max: 1 });
  assert.deepEqual(loop?.jobsPerSec, { min: 10, median: 20, max: 30 });
});

test('isStolen: a live job moved by the record or touched on the server', () => {
  assert.equal(isStolen(0, 1, 0, 0), false);
  assert.equal(isStolen(1, 1, 0, 0), true, 'recorded as moved');
  assert.equal(isStolen(0, 0, 0, 0), true, 'gone from active');
  assert.equal(isStolen(0, 1, 1, 0), true, 'counter changed');
  assert.equal(isStolen(0, 1, Number.NaN, 0), false);
});

test('recordDisagrees: returned yet still in active, or gone from active yet not returned', () => {
  assert.equal(recordDisagrees(1, 0), false);
  assert.equal(recordDisagrees(0, 1), false);
  assert.equal(recordDisagrees(2, 1), true);
  assert.equal(recordDisagrees(0, 0), true);
  // Where every move leaves its entry: one id returned twice by a call that pushed it once.
  assert.equal(recordDisagrees(2, 0, 1), true);
  assert.equal(recordDisagrees(2, 0, 2), false);
  assert.equal(recordDisagrees(1, 0, 1), false);
  assert.equal(recordDisagrees(2, 0), false, 'entries not given (workers took some): moves are not held to them');
});

test('pauseMs: the interval plus a jitter below --jitter', () => {
  assert.equal(
    pauseMs({ intervalMs: 0, jitterMs: 0 }, () => 0.99),
    0,
  );
  assert.equal(
    pauseMs({ intervalMs: 10, jitterMs: 5 }, () => 0),
    10,
  );
  assert.equal(
    pauseMs({ intervalMs: 10, jitterMs: 5 }, () => 0.999),
    14,
  );
});

test("returnedIds: a script's return value as job ids", () => {
  assert.deepEqual(returnedIds(null), { ids: [], stray: 0 });
  assert.deepEqual(returnedIds(['1', '22', 3]), { ids: [1, 22, 3], stray: 0 });
  assert.deepEqual(returnedIds(['1', 'x', '-2', '0']), { ids: [1], stray: 3 });
  assert.deepEqual(returnedIds(['0200', '2e2', ' 2', '200']), { ids: [200], stray: 3 }, 'only an id as seeding writes one');
  assert.throws(() => returnedIds(7), /returned 7, not an array/);
});

test('modesWithScript: --script alone runs the script mode; with --mode it joins them', () => {
  assert.deepEqual(modesWithScript(['atomic', 'loop'], undefined, false), ['atomic', 'loop']);
  assert.deepEqual(modesWithScript(['atomic', 'loop'], 'x.lua', false), ['script']);
  assert.deepEqual(modesWithScript(['atomic'], 'x.lua', true), ['atomic', 'script']);
  assert.deepEqual(modesWithScript(['script', 'loop'], 'x.lua', true), ['script', 'loop']);
});

test('runQueueName: -mode with several modes, -tK with several trials', () => {
  assert.equal(runQueueName('q', 'loop', 1, 1, 1), 'q');
  assert.equal(runQueueName('q', 'loop', 2, 1, 1), 'q-loop');
  assert.equal(runQueueName('q', 'loop', 1, 3, 5), 'q-t3');
  assert.equal(runQueueName('q', 'claim', 2, 2, 2), 'q-claim-t2');
});

test('parsers and names: modes, pending, live default, csv quoting, function names', () => {
  assert.deepEqual(parseModes('all'), ['atomic', 'loop', 'watch', 'claim', 'function']);
  assert.deepEqual(parseModes('both'), ['atomic', 'loop']);
  assert.deepEqual(parseModes('loop, claim,loop'), ['loop', 'claim']);
  assert.equal(parsePendingKind('zset'), 'zset');
  assert.throws(() => parsePendingKind('set'), /--pending/);
  assert.equal(defaultLive(1000), 100);
  assert.equal(defaultLive(5), 0);
  assert.equal(csvField('a"b'), '"a""b"');
  const fn = sweepFunctionNames('0a1b2c3d4e5f6a7b');
  assert.deepEqual(fn, { library: 'emq_race_0a1b2c3d4e5f6a7b', name: 'emq_race_sweep_0a1b2c3d4e5f6a7b' });
  const source = librarySource(fn);
  assert.match(source, /^#!lua name=emq_race_0a1b2c3d4e5f6a7b\n/);
  assert.match(source, /redis\.register_function\('emq_race_sweep_0a1b2c3d4e5f6a7b', sweep\)/);
  assert.doesNotMatch(source, /__LIBRARY__|__FUNCTION__/);
});

test('two trials: the jobs/s median is a whole number, and a clean mode is clean in both', () => {
  const [summary] = summarizeTrials([runResult({ trial: 1, jobsPerSec: 1001 }), runResult({ trial: 2, jobsPerSec: 2000 })]);
  assert.deepEqual(summary?.jobsPerSec, { min: 1001, median: 1501, max: 2000 });
  assert.match(
    renderTrialsTable(summarizeTrials([runResult({ trial: 1 }), runResult({ trial: 2 })]), { color: false, width: 100, wide: false }),
    /^atomic: clean in both trials\.$/m,
  );
});

test('the trials table always shows the counter going wrong in both directions, at 0 too; a rarer anomaly only where a trial counted one', () => {
  const table = renderTrialsTable(summarizeTrials([runResult({ trial: 1 }), runResult({ trial: 2 })]), { color: false, width: 100, wide: false });
  for (const row of ['lost increments', 'over-counted stalls', 'dead-lettered early']) assert.match(table, new RegExp(`^${row} +0 / 0 / 0$`, 'm'), table);
  assert.doesNotMatch(table, /^stray entries/m);
});

test('the trials table fits a 40-column terminal: a spread too wide beside its label goes under it', () => {
  const runs = [runResult({ trial: 1, jobsPerSec: 23_529 }), runResult({ trial: 2, jobsPerSec: 34_483 }), runResult({ trial: 3, jobsPerSec: 29_006 })];
  const table = renderTrialsTable(summarizeTrials(runs), { color: false, width: 40, wide: false });
  for (const line of table.split('\n')) assert.ok(line.length <= 40, `${line.length} columns: ${line}`);
  assert.match(table, /^jobs\/s\n +23,529 \/ 29,006 \/ 34,483$/m);
  // Where a column fits beside its labels, the table keeps its rows.
  assert.match(renderTrialsTable(summarizeTrials(runs), { color: false, width: 80, wide: false }), /^jobs\/s +23,529 \/ 29,006 \/ 34,483$/m);
});

test('keptBefore: what the runs that went well kept, for the line of a command stopped after them', () => {
  const runs = ['q-t1', 'q-t2', 'q-t3', 'q-t4', 'q-t5'].map((queue) => ({ queue, failover: undefined }));
  assert.equal(keptBefore({}, []), '');
  assert.equal(
    keptBefore({}, runs.slice(0, 1)),
    'the runs that finished before it kept (--keep) queue q-t1 (emq:{q-t1}:*): remove it with emq-race clean --queue q-t1 (and the same --url)',
  );
  assert.equal(
    keptBefore({}, runs.slice(0, 3)),
    'the runs that finished before it kept (--keep) queues q-t1, q-t2 and q-t3: remove them with emq-race clean --all (and the same --url)',
  );
  assert.match(keptBefore({}, runs), /queues q-t1, q-t2, q-t3 and 2 more: remove them/);
  // The tool's own server goes with the command, or is named on its own: its queues are not.
  assert.equal(keptBefore({ own: 'command' }, runs), '');
  const drilled = [{ queue: 'd-t1', failover: { keptServer: { url: 'redis://127.0.0.1:45847', pid: 17868 } } as RunResult['failover'] }];
  assert.equal(
    keptBefore({ own: 'command' }, drilled),
    "the runs that finished before it kept (--keep) the promoted replica of queue d-t1's failover drill at redis://127.0.0.1:45847, pid 17868; stop it with: redis-cli -p 45847 shutdown nosave (or kill 17868)",
  );
});

test('besideCompanion: a companion stopped after a run that kept its promoted replica leaves that run for the error line, and owes it meanwhile', async () => {
  const kept = { url: 'redis://127.0.0.1:45850', pid: 17870 };
  const drilled = runResult({ queue: 'd-t2', trial: 2, failover: { keptServer: kept } as RunResult['failover'] });
  const stopped = new EmqError('interrupted by SIGINT', 130);
  const order: string[] = [];
  const owed = new Set<string>();
  const step =
    <T>(name: string, value: T) =>
    async (): Promise<T> => {
      order.push(name);
      return value;
    };
  const interrupts = {
    owe(line: string) {
      owed.add(line);
      order.push('owed');
      return () => void owed.delete(line);
    },
  };
  // Odd trials: the companion first; nothing to owe, as the run has not kept anything yet.
  const first = await besideCompanion(true, step('main', drilled), step('companion', runResult({ queue: 'd-t1' })), interrupts);
  assert.deepEqual(order.splice(0), ['companion', 'main']);
  assert.equal(first.result, drilled);
  // Even trials: the run first, then the companion, which is stopped.
  await assert.rejects(
    besideCompanion(
      false,
      step('main', drilled),
      async () => {
        order.push('companion');
        assert.deepEqual([...owed], [keptPromotedWords('d-t2', kept)], 'owed while the companion runs');
        throw stopped;
      },
      interrupts,
    ),
    stopped,
  );
  assert.deepEqual(order, ['main', 'owed', 'companion']);
  assert.deepEqual([...owed], [], 'settled once the companion ended');
  assert.deepEqual(keptUnreported(stopped), [drilled]);
  assert.match(
    keptBefore({ own: 'command' }, keptUnreported(stopped)),
    /the promoted replica of queue d-t2's failover drill at redis:\/\/127\.0\.0\.1:45850, pid 17870/,
  );
  // A run that kept nothing leaves nothing to name.
  const plain = new EmqError('interrupted by SIGINT', 130);
  await assert.rejects(
    besideCompanion(
      false,
      async () => runResult({ queue: 'd-t4' }),
      async () => {
        throw plain;
      },
      interrupts,
    ),
    plain,
  );
  assert.deepEqual(keptUnreported(plain), []);
  assert.deepEqual(keptUnreported(undefined), []);
});

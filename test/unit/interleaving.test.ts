/**
 * The pure parts behind the numbers as evidence: one job's order proven from its replies (and
 * refused where the replies do not prove it), the choice of example, each figure's source, the
 * table's legend, the example's lines and the readout's words.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pickExample, proveOrder, type OrderContext } from '../../src/audit/interleaving.js';
import { figureSources } from '../../src/audit/sources.js';
import { blankSnapshot, auditJobs } from '../../src/audit/rules.js';
import { queueKeys } from '../../src/queue/keys.js';
import { exampleLines } from '../../src/report/example.js';
import { sourceLegend } from '../../src/report/legend.js';
import { readout } from '../../src/report/report.js';
import type { Reply, RunResult, SweeperCommand } from '../../src/shared/model.js';

const keys = queueKeys('q');
const context: OrderContext = { keys, stalledBefore: 0, pendingOnlyGrows: true, othersTakeFromPending: false, activeOnlyShrinks: true };

/** One sweeper's loop on job `id`, with the replies it got. */
function sweep(sweeper: number, id: string, replies: { score?: Reply; removed: number; length: number; read: number }): SweeperCommand[] {
  return [
    { sweeper, command: ['ZSCORE', keys.active, id], reply: replies.score ?? '1000' },
    { sweeper, command: ['ZREM', keys.active, id], reply: replies.removed },
    { sweeper, command: ['RPUSH', keys.pending, id], reply: replies.length },
    { sweeper, command: ['HGET', keys.job(id), 'stalled'], reply: String(replies.read) },
    { sweeper, command: ['HSET', keys.job(id), 'stalled', String(replies.read + 1), 'state', 'pending'], reply: 0 },
  ];
}

/** Interleaves per-sweeper lists by the given sweeper order (sending order, in the log). */
function sent(order: readonly number[], ...sweeps: SweeperCommand[][]): SweeperCommand[] {
  const next = sweeps.map(() => 0);
  return order.map((s) => {
    const index = next[s - 1] ?? 0;
    next[s - 1] = index + 1;
    return sweeps[s - 1]?.[index] as SweeperCommand;
  });
}

const names = (commands: readonly SweeperCommand[], order: readonly number[]) =>
  order.map((i) => `s${commands[i]?.sweeper} ${commands[i]?.command[0]} ${String(commands[i]?.reply)}`);

test("the page's race, proven: the ZREM answering 1 first, the probes that found the job before it, both reads before both writes", () => {
  // Sent in an order that is not the server's: sweeper 2's commands logged first.
  const commands = sent([2, 1, 2, 1, 2, 1, 2, 1, 2, 1], sweep(1, '7', { removed: 1, length: 3, read: 0 }), sweep(2, '7', { removed: 0, length: 5, read: 0 }));
  const proof = proveOrder(commands, '7', context);
  assert.equal(proof.proven, true, proof.evidence.join('; '));
  assert.deepEqual(names(commands, proof.order), [
    's2 ZSCORE 1000',
    's1 ZSCORE 1000',
    's1 ZREM 1',
    // Different keys: shown as sent (sweeper 2's ZREM went out first), which proves nothing and need not.
    's2 ZREM 0',
    's1 RPUSH 3',
    's2 RPUSH 5',
    's2 HGET 0',
    's1 HGET 0',
    's2 HSET 0',
    's1 HSET 0',
  ]);
  assert.ok(proof.evidence.some((e) => /ZREM answered 1/.test(e)));
  assert.ok(proof.evidence.some((e) => /RPUSH answered 3 then 5/.test(e)));
});

test("a read that saw the other sweep's write comes after it", () => {
  const commands = sent([1, 2, 1, 2, 1, 2, 1, 1, 2, 2], sweep(1, '7', { removed: 1, length: 3, read: 0 }), sweep(2, '7', { removed: 0, length: 4, read: 1 }));
  const proof = proveOrder(commands, '7', context);
  assert.equal(proof.proven, true, proof.evidence.join('; '));
  const order = names(commands, proof.order);
  assert.ok(order.indexOf('s1 HSET 0') < order.indexOf('s2 HGET 1'));
});

test('what the replies cannot prove is said, not guessed', () => {
  // Two reads of 1 and two writes of 1 by others: which write each read saw is unknown.
  const three = [
    ...sweep(1, '7', { removed: 1, length: 3, read: 0 }),
    ...sweep(2, '7', { removed: 0, length: 4, read: 0 }),
    ...sweep(3, '7', { removed: 0, length: 5, read: 1 }),
  ];
  const unproven = proveOrder(three, '7', context);
  assert.equal(unproven.proven, false);
  assert.deepEqual(
    unproven.order,
    three.map((_, i) => i),
    'shown in the order sent',
  );
  assert.match(unproven.evidence[0] ?? '', /do not order HGET .* and HSET|do not order HSET .* and HGET/);

  const noReply = sweep(1, '7', { removed: 1, length: 3, read: 0 }).map((c, i) => (i === 4 ? { ...c, reply: undefined } : c));
  assert.deepEqual(proveOrder(noReply, '7', context).evidence, ['a command got no reply']);

  const twice = [...sweep(1, '7', { removed: 1, length: 3, read: 0 }), ...sweep(2, '7', { removed: 1, length: 4, read: 0 })];
  assert.equal(proveOrder(twice, '7', context).proven, false, 'ZREM answering 1 twice cannot happen without a re-lease');
  assert.equal(proveOrder(twice, '7', { ...context, activeOnlyShrinks: false }).proven, false);
});

test('where pending shrank, the pushes keep no order of their own: each adds one entry', () => {
  const commands = [...sweep(1, '7', { removed: 1, length: 9, read: 0 }), ...sweep(2, '7', { removed: 0, length: 4, read: 0 })];
  const proof = proveOrder(commands, '7', { ...context, pendingOnlyGrows: false });
  assert.equal(proof.proven, true, proof.evidence.join('; '));
  assert.ok(proof.evidence.includes('the pushes need no order: each adds one entry'));
  const clocked = proveOrder(commands, '7', context);
  assert.ok(clocked.evidence.includes('RPUSH answered 4 then 9 (pending only grew)'), 'where pending only grew, the lengths order the pushes');
});

test("the example: a proven job pushed twice, the page's lost increment first; none without a double push", () => {
  const jobs = new Map<string, SweeperCommand[]>([
    ['1', sweep(1, '1', { removed: 1, length: 1, read: 0 })],
    ['2', sent([1, 2, 1, 2, 1, 2, 1, 1, 2, 2], sweep(1, '2', { removed: 1, length: 2, read: 0 }), sweep(2, '2', { removed: 0, length: 3, read: 1 }))],
    ['3', [...sweep(1, '3', { removed: 1, length: 4, read: 0 }), ...sweep(2, '3', { removed: 0, length: 5, read: 0 })]],
  ]);
  const example = pickExample(jobs, context);
  assert.equal(example?.job, '3', "two sweeps wrote back the same count: the source page's story");
  assert.equal(example?.proven, true);
  assert.equal(pickExample(new Map([['1', sweep(1, '1', { removed: 1, length: 1, read: 0 })]]), context), null);
});

test('sources: a figure not measured has none; faults and cycles widen two of them', () => {
  const counts = auditJobs(blankSnapshot(1, 0), new Uint32Array(2));
  const plain = figureSources(counts, 1);
  assert.equal(plain.duplicatePending, 'server');
  assert.equal(plain.doubleRecoveries, 'sweepers');
  assert.equal(plain.lostIncrements, 'server+sweepers');
  assert.equal(plain.doubleExecutions, null);
  assert.equal(plain.forgottenStalls, null);
  assert.equal(plain.deadLetterEscapes, 'server');
  const cycled = figureSources({ ...counts, forgottenStalls: 0, forgottenStallCount: 0, unacknowledgedMoves: 1 }, 3);
  assert.equal(cycled.forgottenStalls, 'server+releaser');
  assert.equal(cycled.deadLetterEscapes, 'server+releaser');
  assert.equal(cycled.recoveries, 'server+sweepers');
  // Across a failover the double executions are the workers' own count; unmeasured, still none.
  const failedOver = figureSources({ ...counts, doubleExecutions: 4 }, 1, true);
  assert.equal(failedOver.doubleExecutions, 'workers');
  assert.equal(failedOver.duplicatePending, 'server');
  assert.equal(figureSources(counts, 1, true).doubleExecutions, null);
  assert.deepEqual(
    sourceLegend(
      [
        { head: 'duplicate\npending', figure: 'duplicatePending' },
        { head: 'double\nexecutions', figure: 'doubleExecutions' },
      ],
      [{ sources: failedOver }],
      false,
    ),
    ["From the server's state (duplicate pending); the workers' own records (double", '  executions).'],
  );
});

test('the legend groups the shown columns by source, says what — means, and fits 80 columns', () => {
  const counts = auditJobs(blankSnapshot(1, 0), new Uint32Array(2));
  const runs = [{ sources: figureSources(counts, 1) }];
  const lines = sourceLegend(
    [
      { head: 'recoveries', figure: 'recoveries' },
      { head: 'double\nrecoveries', figure: 'doubleRecoveries' },
      { head: 'duplicate\npending', figure: 'duplicatePending' },
      { head: 'lost\nincrements', figure: 'lostIncrements' },
      { head: 'double\nexecutions', figure: 'doubleExecutions' },
    ],
    runs,
    true,
  );
  const text = lines.map((line) => line.trim()).join(' ');
  assert.match(text, /the server's state \(duplicate pending\)/);
  assert.match(text, /the sweepers' own records \(recoveries, double recoveries\)/);
  assert.match(text, /against the sweepers' records \(lost increments\)/);
  assert.doesNotMatch(text, /double executions/, 'a figure no run measured has no source to name');
  assert.match(text, /— : not measured in this run/);
  for (const line of lines) assert.ok(line.length <= 80, line);
});

const example = {
  job: '42',
  proven: true,
  evidence: ['ZREM answered 1, and the other 0 after it'],
  commands: [
    { sweeper: 1, command: ['ZSCORE', keys.active, '42'], reply: '1796047262968' },
    { sweeper: 2, command: ['HSET', keys.job('42'), 'stalled', '1', 'state', 'pending'], reply: 0 },
    { sweeper: 3, command: ['HSET', keys.job('9999999'), 'stalled', '100000', 'state', 'pending', 'and', 'more', 'arguments', 'still'], reply: 0 },
  ],
};

test('the example prints one line per command within 80 columns, keys without the queue prefix', () => {
  const lines = exampleLines({ mode: 'loop', queue: 'q', example });
  for (const line of lines) assert.ok(line.length <= 80, `${line.length}: ${line}`);
  assert.ok(
    lines.some((line) => /^ {2}s1 {2}ZSCORE active 42 +← "1796047262968"$/.test(line)),
    lines.join('\n'),
  );
  assert.ok(lines.some((line) => /^ {2}s2 {2}HSET job:42 stalled 1 state pending +← \(integer\) 0$/.test(line)));
  assert.match(lines[0] ?? '', /^Example: job 42 of the loop run/);
  const unproven = exampleLines({
    mode: 'loop',
    queue: 'q',
    example: { ...example, proven: false, evidence: ['the replies do not order HGET (s1) and HSET (s2)'] },
  });
  assert.match(unproven.map((line) => line.trim()).join(' '), /in the order they were sent .*The replies do not prove the server's order/);
});

test("the readout: extra recoveries labelled as the sweepers' records, up to K runs, forgotten stalls only when there are some", () => {
  const base = auditJobs(blankSnapshot(1, 0), new Uint32Array(2));
  const run = {
    ...base,
    mode: 'loop',
    sweepers: 8,
    jobs: 100,
    maxStalled: 3,
    pending: 'list',
    cutShort: false,
    maxSweeps: 10,
    consequences: { faults: [], workers: 0, cycles: 1, observe: false, notes: [] },
    recoveries: 180,
    doubleRecoveries: 80,
    jobsRecoveredMoreThanOnce: 60,
    duplicatePending: 80,
    duplicatePendingAtEnd: 80,
    mostPendingEntries: 4,
    lostIncrements: 80,
  } as unknown as RunResult;
  const line = readout(run);
  // Under a failover drill, a mode that keeps its counter whole (claim counts with HINCRBY) lost
  // its increments to the failover, not to two sweeps; the loop, which races, keeps its words.
  const failover = { ackedMovesLost: 80, counterIncrementsLost: 80 } as unknown as RunResult['failover'];
  assert.match(readout({ ...run, mode: 'claim', failover } as RunResult), /lost 80 stall-counter increments \(recoveries the promoted replica never received/);
  assert.match(readout({ ...run, failover } as RunResult), /two sweeps read the same count and wrote back the same value/);
  assert.match(line, /recovered 60 jobs more than once \(80 extra recoveries, by the sweepers' own records\)/);
  assert.match(line, /jobs that would run up to 4 times/);
  assert.match(line, /lost 80 stall-counter increments \(recoveries the counter does not show: two sweeps read the same count and wrote back the same value\)/);
  assert.doesNotMatch(line, /forgot/);
  assert.doesNotMatch(line, /final state shows/);
  const zset = readout({ ...run, pending: 'zset', duplicatePending: 0, duplicatePendingAtEnd: 0 } as RunResult);
  assert.match(
    zset,
    /The server's final state shows none of the 80 extra recoveries as duplicate entries \(a sorted set holds a job once\): they are known from the sweepers' own records alone\./,
  );
  // A script that returns each job twice, none of them at max-stalled: no cause is named that the run did not have.
  const returnsTwice = readout({ ...run, mode: 'script', duplicatePending: 0, duplicatePendingAtEnd: 0, misreported: 80, stalledBefore: 0 } as RunResult);
  assert.match(
    returnsTwice,
    /The server's final state shows none of the 80 extra recoveries as duplicate entries \(the script's returned values name moves the server does not show \(misreported\)\): they are known/,
  );
  assert.doesNotMatch(returnsTwice, /max-stalled|dead-lettered/);
  const noCause = readout({ ...run, duplicatePending: 0, duplicatePendingAtEnd: 0, stalledBefore: 0 } as RunResult);
  assert.match(noCause, /shows none of the 80 extra recoveries as duplicate entries: they are known/);
  const cycles = readout({ ...run, forgottenStalls: 12, forgottenStallCount: 15, consequences: { ...run.consequences, cycles: 3 } } as RunResult);
  assert.match(cycles, /forgot 15 stalls of 12 jobs/);
  assert.doesNotMatch(cycles, /two sweeps read the same count/, 'forgotten stalls named, the lost increments stand plain');
});

test('the readout under --cycles says nothing of the final state that the final state does not show', () => {
  const base = auditJobs(blankSnapshot(1, 0), new Uint32Array(2));
  const run = {
    ...base,
    mode: 'loop',
    sweepers: 8,
    jobs: 100,
    maxStalled: 3,
    pending: 'list',
    cutShort: false,
    maxSweeps: 10,
    consequences: { faults: [], workers: 0, cycles: 3, observe: false, notes: [] },
    recoveries: 400,
    doubleRecoveries: 100,
    jobsRecoveredMoreThanOnce: 90,
    // 70 duplicates the re-leaser found and took out, 5 still in pending at the end.
    duplicatePending: 75,
    duplicatePendingAtEnd: 5,
    mostPendingEntries: 4,
  } as unknown as RunResult;
  const line = readout(run);
  assert.doesNotMatch(line, /left 75 duplicate/, 'the final state does not hold 75');
  assert.match(
    line,
    /put 75 duplicate entries in pending \(jobs that would run up to 4 times; the re-leaser took 70 back out during the run, 5 of them left at the end\)/,
  );
  assert.match(line, /The server's final state shows only 5 of the 100 extra recoveries as duplicate entries \(re-leases took jobs back out of pending\)/);
  assert.match(line, /the re-leaser found 70 as duplicate entries when it took them out/);
  const none = readout({ ...run, duplicatePendingAtEnd: 0 } as RunResult);
  assert.match(none, /none of them left at the end/);
  assert.match(none, /shows none of the 100 extra recoveries/);
});

test('the readout names both directions of the counter: increments lost, stalls counted twice, healthy jobs dead-lettered', () => {
  const base = auditJobs(blankSnapshot(1, 0), new Uint32Array(2));
  const run = {
    ...base,
    mode: 'loop',
    sweepers: 8,
    jobs: 100,
    maxStalled: 3,
    stalledBefore: 1,
    pending: 'list',
    cutShort: false,
    maxSweeps: 10,
    consequences: { faults: [], workers: 0, cycles: 1, observe: false, notes: [] },
    recoveries: 180,
    doubleRecoveries: 80,
    jobsRecoveredMoreThanOnce: 60,
    lostIncrements: 50,
    overcountedStalls: 20,
    overcountedStallCount: 30,
    deadLetteredEarly: 7,
  } as unknown as RunResult;
  const line = readout(run);
  assert.match(line, /lost 50 stall-counter increments \(by the page's measure: recoveries the counter does not show\)/);
  assert.match(line, /yet counted stalls more than once on 20 jobs \(counters above the stalls the jobs really had, 30 counts too many in all\)/);
  // With no increment lost beside it, nothing to set the over-count against: no "yet".
  const highOnly = readout({ ...run, lostIncrements: 0 } as RunResult);
  assert.match(highOnly, /, counted stalls more than once on 20 jobs/);
  assert.doesNotMatch(highOnly, /yet/);
  assert.match(line, /sent 7 healthy jobs to dead after 2 stalls \(dead-lettered early/, 'stalled-before 1 plus the seeded stall');
  const cycles = readout({ ...run, consequences: { ...run.consequences, cycles: 4 } } as RunResult);
  assert.match(cycles, /sent 7 healthy jobs to dead after fewer than 3 stalls/);
});

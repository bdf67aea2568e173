/**
 * The numbers as evidence, on real servers: the loop sends the source page's commands in the page's
 * order (caught with MONITOR), races every time with 8 sweepers (twenty runs in a row) while the atomic script with 64
 * stays clean, every run says where each figure comes from and leaves what it did not measure null,
 * the example job's order is the one the server's own list shows, and forgotten stalls equal a count
 * made here with raw commands.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Redis } from 'ioredis';
import type { Interrupts } from '../../src/shared/interrupt.js';
import { deleteRunKeys } from '../../src/queue/cleanup.js';
import { queueKeys } from '../../src/queue/keys.js';
import type { Session } from '../../src/server/session.js';
import { runCli } from '../helpers/cli.js';
import { allKeys } from '../helpers/keyspace.js';
import { assertNoAnomaly, queueName, runWith } from '../helpers/run-mode.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';
import { ANOMALIES, type PendingKind } from '../../src/shared/model.js';

/** Commands the server ran for a queue, from clients (not inside scripts), as MONITOR shows them. */
async function monitored(admin: Redis, prefix: string, body: () => Promise<void>): Promise<string[][]> {
  const seen: string[][] = [];
  const monitor = await admin.duplicate().monitor();
  const marker = `monitor-done-${prefix}`;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (args[0]?.toUpperCase() === 'ECHO' && args[1] === marker) done();
    else if (source !== 'lua' && args.some((arg) => arg.startsWith(prefix))) seen.push(args);
  });
  try {
    await body();
    // MONITOR lines trail the replies a little: wait for one sent after everything else.
    await admin.echo(marker);
    await finished;
  } finally {
    monitor.disconnect();
  }
  return seen;
}

/** Each job's commands, in the order the server ran them, by the id in their arguments. */
function perJob(commands: readonly string[][], prefix: string): Map<string, string[][]> {
  const jobs = new Map<string, string[][]>();
  for (const args of commands) {
    const [name = '', key = ''] = args;
    const command = name.toUpperCase();
    // The sweeper's commands; cleanup's UNLINK of the job hashes is not one of them.
    if (!['ZSCORE', 'ZREM', 'RPUSH', 'HGET', 'HSET', 'LREM', 'ZADD'].includes(command)) continue;
    // Nor is the tool's own check, before the audit, that the run's job hashes are still there.
    if (command === 'HGET' && args[2] === 'run') continue;
    let id: string | undefined;
    if (key.startsWith(`${prefix}job:`)) id = key.slice(`${prefix}job:`.length);
    else if (['ZSCORE', 'ZREM', 'RPUSH'].includes(command)) id = args[2];
    else if (['LREM', 'ZADD'].includes(command)) id = args[3];
    if (id === undefined) continue;
    const list = jobs.get(id) ?? [];
    list.push([command, ...args.slice(1)]);
    jobs.set(id, list);
  }
  return jobs;
}

forEachServer('evidence', (handle) => {
  let session: Session;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    interrupts = watching;
  });

  const wire = (pending: PendingKind, push: string, take: string): void => {
    test(`one loop sweeper on the wire (pending ${pending}): per job exactly the page's ZSCORE, ZREM, ${push}, HGET, HSET; at max-stalled then ${take}, ZADD dead, HSET state dead`, async () => {
      for (const [stalledBefore, extension] of [
        [0, []],
        [2, [take, 'ZADD', 'HSET']],
      ] as const) {
        const queue = queueName(`wire-${pending}`);
        const prefix = queueKeys(queue).prefix;
        const commands = await monitored(session.admin, prefix, async () => {
          const run = await runWith(session, interrupts, 'loop', { queue, jobs: 4, sweepers: 1, stalledBefore, pending, live: 0 });
          assert.equal(run.recoveries, 4);
        });
        const jobs = perJob(commands, prefix);
        assert.deepEqual([...jobs.keys()].sort(), ['1', '2', '3', '4']);
        for (const [id, sent] of jobs) {
          // The audit reads the hash after the race with one script call: nothing else per job.
          assert.deepEqual(
            sent.map((c) => c[0]),
            ['ZSCORE', 'ZREM', push, 'HGET', 'HSET', ...extension],
            `job ${id}`,
          );
          assert.deepEqual(
            sent[4],
            ['HSET', `${prefix}job:${id}`, 'stalled', String(stalledBefore + 1), 'state', 'pending'],
            'the write-back: what was read, plus one',
          );
          if (extension.length > 0) {
            assert.deepEqual(sent.slice(5), [
              take === 'LREM' ? ['LREM', `${prefix}pending`, '1', id] : ['ZREM', `${prefix}pending`, id],
              ['ZADD', `${prefix}dead`, '0', id],
              ['HSET', `${prefix}job:${id}`, 'state', 'dead'],
            ]);
          }
        }
      }
    });
  };
  wire('list', 'RPUSH', 'LREM');
  wire('zset', 'ZADD', 'ZREM');

  test('--mode loop --sweepers 8 races in every one of 20 runs; atomic with 64 sweepers stays clean', async () => {
    // One batch of jobs, read by all eight sweepers at once, is enough for them to meet on the same
    // ones every time (on most of its jobs, in fact): the twenty runs are the point, not their size,
    // and ten jobs are as sure a meeting as more, each job a round trip more for every sweeper.
    for (let i = 0; i < 20; i++) {
      const run = await runWith(session, interrupts, 'loop', { jobs: 10, sweepers: 8, batch: 10, live: 0 });
      assert.ok(
        run.doubleRecoveries > 0 && (run.lostIncrements ?? 0) > 0,
        `run ${i + 1}: ${run.doubleRecoveries} double recoveries, ${run.lostIncrements} lost increments`,
      );
    }
    // The atomic script is exact by construction, not by luck: one run with 64 sweepers on the same
    // jobs shows it, where the loop needs its twenty to show that it races every time.
    const atomic = await runWith(session, interrupts, 'atomic', { jobs: 300, sweepers: 64, live: 30 });
    assert.equal(atomic.recoveries, 300);
    assertNoAnomaly(atomic);
    assert.equal(atomic.stolenLeases, 0, 'live leases: measured, and none taken');
  });

  test('JSON: every run says where each figure comes from; what it did not measure is null', async () => {
    // Where a figure comes from does not hang on how many jobs there are: a few are enough.
    const result = await runCli(['--url', handle.url, '--mode', 'both', '--sweepers', '4', '--jobs', '20', '--live', '0', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { runs: Record<string, unknown>[] };
    for (const run of report.runs) {
      const sources = run.sources as Record<string, string | null>;
      assert.deepEqual(
        Object.keys(sources).sort(),
        [...ANOMALIES, 'recoveries', 'forgottenStallCount', 'overcountedStallCount'].sort(),
        `${String(run.mode)}: a source for every anomaly`,
      );
      // Without --cycles a job's real stalls are stalled-before plus one, so both counter directions read the server alone.
      assert.equal(sources.overcountedStalls, 'server');
      assert.equal(sources.deadLetteredEarly, 'server');
      assert.equal(sources.duplicatePending, 'server');
      assert.equal(sources.doubleRecoveries, 'sweepers');
      assert.equal(sources.lostIncrements, 'server+sweepers');
      // No workers, no observer, no re-leases, no live jobs, no user script: not measured.
      for (const field of [
        'doubleExecutions',
        'executions',
        'windowInNeither',
        'windowInBoth',
        'samples',
        'forgottenStalls',
        'forgottenStallCount',
        'stolenLeases',
        'misreported',
      ]) {
        assert.equal(run[field], null, `${String(run.mode)} ${field}`);
        if (field in sources) assert.equal(sources[field], null, `${String(run.mode)} ${field} has no source`);
      }
      assert.equal(run.workers, 0);
    }
    assert.equal(report.runs.find((run) => run.mode === 'atomic')?.example, null, 'the atomic run has no double recovery to show');
  });

  test("the example: one job, its commands in the order the server ran them, and the server's list agrees", async () => {
    const queue = queueName('example');
    const keys = queueKeys(queue);
    // max-stalled out of reach: nothing leaves pending, so RPUSH's answer is a clock and an index.
    // One batch of a hundred jobs, read by all eight sweepers at once: they meet on many of them.
    const result = await runCli([
      '--url',
      handle.url,
      '--mode',
      'loop',
      '--sweepers',
      '8',
      '--jobs',
      '100',
      '--live',
      '0',
      '--max-stalled',
      '100',
      '--queue',
      queue,
      '--keep',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    try {
      const [run] = (
        JSON.parse(result.stdout) as {
          runs: {
            doubleRecoveries: number;
            example: { job: string; proven: boolean; evidence: string[]; commands: { sweeper: number; command: string[]; reply: unknown }[] } | null;
          }[];
        }
      ).runs;
      assert.ok(run && run.doubleRecoveries > 0);
      const example = run.example;
      assert.ok(example, 'a loop run with double recoveries has an example');
      assert.equal(example.proven, true, example.evidence.join('; '));
      const { job, commands } = example;
      const named = (name: string) => commands.flatMap((c, i) => (c.command[0] === name ? [{ ...c, at: i }] : []));
      const zrems = named('ZREM');
      assert.equal(zrems.filter((c) => c.reply === 1).length, 1, 'one ZREM took the job out of active');
      assert.ok(
        zrems.some((c) => c.reply === 0),
        'and one answered 0: it found the job gone',
      );
      const taken = zrems.find((c) => c.reply === 1);
      for (const c of zrems) if (c.reply === 0) assert.ok((taken?.at ?? Infinity) < c.at, 'the ZREM answering 1 stands before those answering 0');
      for (const c of named('ZSCORE'))
        assert.equal(c.reply === null, (taken?.at ?? -1) < c.at, 'probes that found the job stand before the ZREM, those that did not after it');
      const pushes = named('RPUSH');
      assert.ok(pushes.length >= 2, 'the job was pushed twice');
      assert.deepEqual(
        pushes.map((c) => c.reply),
        [...pushes.map((c) => c.reply as number)].sort((a, b) => a - b),
        'pushes in the order of the lengths they answered',
      );
      // Nothing left pending, so each RPUSH's answer is the position its entry still holds.
      for (const push of pushes) assert.equal(await session.admin.lindex(keys.pending, (push.reply as number) - 1), job);
      assert.equal((await session.admin.lrange(keys.pending, 0, -1)).filter((id) => id === job).length, pushes.length, 'every push stands in pending');
      // Each sweeper's own commands keep the page's order.
      for (const sweeper of new Set(commands.map((c) => c.sweeper))) {
        const own = commands.filter((c) => c.sweeper === sweeper).map((c) => c.command[0]);
        assert.ok(['ZSCORE', 'ZSCORE ZREM RPUSH HGET HSET'].includes(own.join(' ')), `sweeper ${sweeper}: ${own.join(' ')}`);
      }
      // The counter as the last write left it.
      const writes = named('HSET');
      assert.equal(await session.admin.hget(keys.job(job), 'stalled'), writes[writes.length - 1]?.command[3]);
    } finally {
      await deleteRunKeys(session.admin, keys, 100);
    }
  });

  test('trials and CSV: a count not measured is null in the summary and an empty field in CSV', async () => {
    const trials = await runCli(['--url', handle.url, '--mode', 'both', '--trials', '2', '--jobs', '20', '--live', '0', '--json']);
    assert.equal(trials.code, 0, trials.stderr);
    const summaries = (JSON.parse(trials.stdout) as { trials: Record<string, unknown>[] }).trials;
    for (const summary of summaries) {
      for (const field of ['doubleExecutions', 'windowInNeither', 'windowInBoth', 'forgottenStalls', 'stolenLeases', 'misreported'])
        assert.equal(summary[field], null, `${String(summary.mode)} ${field}`);
      assert.deepEqual(Object.keys(summary.duplicatePending as object).sort(), ['max', 'median', 'min']);
    }
    const csv = await runCli(['--url', handle.url, '--mode', 'loop', '--workers', '0', '--jobs', '20', '--csv']);
    assert.equal(csv.code, 0, csv.stderr);
    const [header = '', row = ''] = csv.stdout.trim().split('\n');
    const cells = (line: string) => line.slice(1, -1).split('","');
    const at = cells(header).indexOf('doubleExecutions');
    assert.ok(at > 0, header);
    assert.equal(cells(row)[at], '', 'not measured: an empty field, not 0');
  });

  test("--cycles: forgotten stalls equal a count made with raw commands from the re-leaser's log and the counters", async () => {
    const jobs = 200;
    // Whether a stall is forgotten hangs on the re-leaser landing between a sweeper's HGET and its
    // HSET: nearly every run on 200 jobs, not every one on a loaded machine. Each run's figures are
    // checked against the keys; a run that forgot nothing is raced again, three times at most.
    let forgottenJobs = 0;
    for (let attempt = 0; attempt < 3 && forgottenJobs === 0; attempt++) {
      const queue = queueName('forgotten');
      const keys = queueKeys(queue);
      const run = await runWith(session, interrupts, 'loop', { queue, jobs, sweepers: 8, keep: true, live: 0, consequences: { cycles: 4 } });
      try {
        let forgottenStalls = 0;
        // Every job's hash in one pipeline: the same HMGETs, without a round trip each.
        const reads = session.admin.pipeline();
        for (let id = 1; id <= jobs; id++) reads.call('HMGET', keys.job(id), 'releases', 'stalled');
        const hashes = (await reads.exec()) ?? [];
        for (let id = 1; id <= jobs; id++) {
          // The re-leaser writes `releases` each time it leases a job again: one stall more each.
          const [err, fields] = hashes[id - 1] ?? [new Error(`no reply for job ${id}`), null];
          if (err) throw err;
          const [releases, stalled] = fields as (string | null)[];
          const trueStalls = 1 + Number(releases ?? 0);
          const counted = Number(stalled ?? 0);
          if (counted < trueStalls) {
            forgottenJobs++;
            forgottenStalls += trueStalls - counted;
          }
        }
        assert.equal(run.forgottenStalls, forgottenJobs);
        assert.equal(run.forgottenStallCount, forgottenStalls);
        assert.equal(run.sources.forgottenStalls, 'server+releaser');
        assert.equal(run.example, null, "with re-leases a job's commands mix its stalls: no example");
      } finally {
        await deleteRunKeys(session.admin, keys, jobs);
      }
    }
    assert.ok(forgottenJobs > 0, 'the loop forgot stalls');
    const atomic = await runWith(session, interrupts, 'atomic', { jobs: 100, live: 0, consequences: { cycles: 4 } });
    assert.equal(atomic.forgottenStalls, 0);
    assert.equal(atomic.forgottenStallCount, 0);
  });

  test('nothing of a run is left on the server afterwards', async () => {
    assert.deepEqual(await allKeys(session.admin), []);
  });
});

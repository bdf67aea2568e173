/**
 * --fault failover on Redis and Valkey: the run's own primary and replica, the replica's link cut
 * after the K-th acknowledged sweep call, the primary killed M calls later, the replica promoted.
 * The atomic sweep loses exactly what the calls after the cut moved, with the link's lag too,
 * and the test counts that loss itself on the promoted replica --keep left running; with
 * --wait-replicas nothing acknowledged is lost. After each run no server of the pair is left,
 * nor its data folder.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import type { FailoverFigures } from '../../src/model.js';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { which } from '../../src/server/embedded-server.js';
import { runCli } from '../helpers/cli.js';
import { alive, commandLine } from '../helpers/processes.js';
import { SERVER_KINDS } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

interface Spawned {
  readonly pid: number;
  readonly line: string;
}

/** A process's children, read from /proc: cheap enough to look every few ms on a busy machine. */
function children(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) => {
      try {
        return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** The CLI run in-process, with every keeper (this process's children) and server (theirs) noted while it runs. */
async function runWatched(args: readonly string[]): Promise<{ json: Record<string, unknown>; code: number; spawned: Spawned[] }> {
  const seen = new Map<number, string>();
  const look = (): void => {
    for (const pid of children(process.pid).flatMap((keeper) => [keeper, ...children(keeper)])) {
      const line = commandLine(pid);
      if (/server-keeper|redis-server|valkey-server/.test(line)) seen.set(pid, line);
    }
  };
  const timer = setInterval(look, 20);
  try {
    const result = await runCli(args);
    assert.equal(result.code, 0, result.stderr);
    return { json: JSON.parse(result.stdout) as Record<string, unknown>, code: result.code ?? -1, spawned: [...seen].map(([pid, line]) => ({ pid, line })) };
  } finally {
    clearInterval(timer);
  }
}

/** Whether something accepts connections on loopback `port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Nothing of the run is left: no keeper, no server or Sentinel, no port they listened on, no data folder named on a keeper's command line. */
async function assertNothingLeft(spawned: readonly Spawned[]): Promise<void> {
  // The session's server and, per trial, the pair's two: each with its keeper.
  assert.ok(spawned.filter((p) => /server-keeper/.test(p.line)).length >= 3, `keepers seen: ${spawned.map((p) => p.line).join('; ')}`);
  for (const { pid, line } of spawned) {
    assert.ok(!alive(pid) || commandLine(pid) !== line, `left running: ${pid} ${line}`);
    const dir = /server-keeper\.js (\S+)/.exec(line)?.[1];
    if (dir) assert.ok(!existsSync(dir), `data folder left: ${dir}`);
    const port = Number(/ --port (\d+)/.exec(line)?.[1] ?? 0);
    if (port > 0) assert.ok(!(await listening(port)), `port left listening: ${port} (${line})`);
  }
}

type RunJson = {
  mode: string;
  trial: number;
  queue: string;
  jobs: number;
  stalledBefore: number;
  batch: number;
  lostIncrements: number;
  doubleRecoveries: number;
  recoveries: number;
  lostJobs: number;
  failover: FailoverFigures;
};

const runsOf = (json: Record<string, unknown>): RunJson[] => json.runs as RunJson[];

const SMALL = ['--jobs', '200', '--batch', '10', '--sweepers', '2', '--live', '0', '--json'];

/**
 * The test's own count on a promoted replica --keep left running, with plain commands: the stall
 * counters' gains over the seed, and the entries of pending. Then the server is shut down and its
 * folder removed, as its kept line tells a user to.
 */
async function countOnKept(run: RunJson): Promise<{ gained: number; pending: number; distinctPending: number }> {
  const kept = run.failover.keptServer;
  assert.ok(kept, 'the promoted replica was kept');
  const dir = readlinkSync(`/proc/${kept.pid}/cwd`);
  const redis = await connect(parseServerUrl(kept.url));
  try {
    const prefix = `emq:{${run.queue}}:`;
    const pipeline = redis.pipeline();
    for (let id = 1; id <= run.jobs; id++) pipeline.hget(`${prefix}job:${id}`, 'stalled');
    const replies = (await pipeline.exec()) ?? [];
    const gained = replies.reduce((sum, [, value]) => sum + Number(value) - run.stalledBefore, 0);
    const pending = await redis.lrange(`${prefix}pending`, 0, -1);
    return { gained, pending: pending.length, distinctPending: new Set(pending).size };
  } finally {
    await redis.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
    redis.disconnect();
    while (alive(kept.pid)) await sleep(10);
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const kind of SERVER_KINDS) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed` : false;
  describe(`failover [${kind.kind}]`, { skip }, () => {
    const atomicDrill = ['--server-bin', kind.bin, '--mode', 'atomic', '--fault', 'failover', '--failover-after', '5'];
    test('atomic, 20 ms of replica lag, 3 trials: the moves lost are the ones predicted, a multiple of the batch, and the test counts them on the promoted replica', async () => {
      const { json, spawned } = await runWatched([...atomicDrill, '--replica-lag', '20', '--trials', '3', '--keep', ...SMALL]);
      const runs = runsOf(json);
      assert.equal(runs.length, 3);
      for (const run of runs) {
        const f = run.failover;
        assert.equal(f.after, 5);
        assert.equal(f.replicaLagMs, 20);
        assert.equal(f.promotedBy, 'tool');
        assert.equal(f.callsAfterCut, 2);
        assert.ok(f.predictedLoss !== null && f.predictedLoss > 0, `predicted ${f.predictedLoss}`);
        // With the link held 20 ms, the cut still waits for the replica to catch up: only the
        // calls after it are lost, no more.
        assert.equal(f.ackedMovesLost, f.predictedLoss);
        assert.equal(f.ackedMovesLost % run.batch, 0);
        // The run's ordinary audit on the new primary knows nothing of the drill.
        assert.equal(run.lostIncrements, f.ackedMovesLost);
        assert.equal(run.doubleRecoveries, f.jobsRecoveredTwice);
        assert.equal(f.counterIncrementsLost, f.ackedMovesLost);
        assert.equal(run.lostJobs, 0);
        assert.equal(f.unconfirmedMoves, 0);
        // The independent count: every job's counter read on the promoted replica by the test.
        // Each job shows one stall there; the moves the sweepers recorded beyond them are the loss.
        const counted = await countOnKept(run);
        assert.equal(counted.gained, run.jobs);
        assert.equal(run.recoveries - counted.gained, f.ackedMovesLost);
        // The server alone shows no duplicate: the lost first recovery left no entry behind.
        assert.equal(counted.pending, run.jobs);
        assert.equal(counted.distinctPending, run.jobs);
      }
      await assertNothingLeft(spawned);
    });

    test('atomic with --wait-replicas 1:500, 20 ms of lag, 3 trials: no acknowledged move lost; the cut calls unconfirmed; the companion without WAIT beside each', async () => {
      const { json, spawned } = await runWatched([...atomicDrill, '--replica-lag', '20', '--wait-replicas', '1:500', '--trials', '3', ...SMALL]);
      const runs = runsOf(json);
      assert.equal(runs.length, 3);
      for (const run of runs) {
        const f = run.failover;
        assert.equal(f.ackedMovesLost, 0);
        assert.equal(f.predictedLoss, 0);
        assert.ok(f.waitTimeouts >= 2, `waitTimeouts ${f.waitTimeouts}`);
        // What the cut calls moved is lost all the same, but was never counted as acknowledged.
        assert.ok(f.counterIncrementsLost > 0);
        assert.ok(f.unconfirmedMoves >= f.counterIncrementsLost);
        // The companion run without WAIT, same schedule on a pair of its own: it loses what its
        // calls after the cut moved, and its jobs/s stands beside this run's.
        const without = f.withoutWait;
        assert.ok(without, 'the run without WAIT is reported');
        assert.ok(without.jobsPerSec > 0);
        assert.ok(without.ackedMovesLost > 0 && without.ackedMovesLost % run.batch === 0, `lost without WAIT: ${without.ackedMovesLost}`);
        assert.equal(without.order, run.trial % 2 === 1 ? 'before' : 'after');
      }
      await assertNothingLeft(spawned);
    });

    test('atomic, loop and claim side by side under one schedule: each on a pair of its own, each losing across the failover', async () => {
      const { json, spawned } = await runWatched([
        '--server-bin',
        kind.bin,
        '--mode',
        'atomic,loop,claim',
        '--fault',
        'failover',
        '--failover-after',
        '5',
        ...SMALL,
      ]);
      const runs = runsOf(json);
      assert.deepEqual(
        runs.map((run) => run.mode),
        ['atomic', 'loop', 'claim'],
      );
      for (const run of runs) {
        const f = run.failover;
        assert.equal(f.after, 5, run.mode);
        assert.equal(f.callsAfterCut, 2, run.mode);
        assert.equal(run.lostJobs, 0, run.mode);
        // Every mode moved jobs the promoted replica never received, and recovered them again there.
        assert.ok(f.counterIncrementsLost > 0, `${run.mode}: ${f.counterIncrementsLost}`);
        assert.ok(f.jobsRecoveredTwice > 0, `${run.mode}: ${f.jobsRecoveredTwice}`);
      }
      const [atomic, loop, claim] = runs;
      assert.ok(atomic && loop && claim);
      assert.equal(atomic.failover.ackedMovesLost, atomic.failover.predictedLoss);
      // A sweep of many round trips has no prediction: other sweepers raced it for the same jobs.
      assert.equal(loop.failover.predictedLoss, null);
      assert.equal(claim.failover.predictedLoss, null);
      // The claim is exact on one server: every job it recovered twice is one the failover brought back.
      assert.equal(claim.doubleRecoveries, claim.failover.jobsRecoveredTwice);
      assert.ok(claim.failover.ackedMovesLost > 0);
      // The session's server, then a primary and a replica (each under a keeper) per mode.
      assert.ok(spawned.filter((p) => /server-keeper/.test(p.line)).length >= 1 + 2 * runs.length);
      await assertNothingLeft(spawned);
    });

    test('--sentinel: a real Sentinel promotes the replica, the loss is still the one predicted, and the Sentinel goes with the pair', async () => {
      const page = join(tempDir('emq-failover-page-'), 'race.html');
      const { json, spawned } = await runWatched([...atomicDrill, '--sentinel', '--html', page, ...SMALL]);
      const [run] = runsOf(json);
      assert.ok(run);
      const f = run.failover;
      assert.equal(f.promotedBy, 'sentinel');
      assert.ok(f.predictedLoss !== null && f.predictedLoss > 0, `predicted ${f.predictedLoss}`);
      assert.equal(f.ackedMovesLost, f.predictedLoss);
      assert.equal(run.lostIncrements, f.ackedMovesLost);
      assert.equal(run.lostJobs, 0);
      // The page marks the failover among the drill's moments, with what the promoted replica showed.
      const html = readFileSync(page, 'utf8');
      assert.match(html, /<section id="failover">/);
      assert.match(html, /class="failover-moment" data-field="promotedBy" data-value="sentinel"/);
      assert.ok(html.includes(`<span data-field="ackedMovesLost">${f.ackedMovesLost}</span>`));
      // The Sentinel ran under a keeper of its own, started with its configuration file.
      assert.ok(
        spawned.some((p) => /server-keeper\.js .* --sentinel /.test(p.line)),
        `no Sentinel seen: ${spawned.map((p) => p.line).join('; ')}`,
      );
      await assertNothingLeft(spawned);
    });

    test('grid --vary replica-lag=0,20: each cell drills on its own pair at its own lag, and loses what it predicted', async () => {
      const { json, spawned } = await runWatched(['grid', ...atomicDrill, '--vary', 'replica-lag=0,20', ...SMALL]);
      const cells = json.cells as { at: Record<string, number>; runs: RunJson[] }[];
      assert.equal(cells.length, 2);
      for (const cell of cells) {
        const [run] = cell.runs;
        assert.ok(run);
        assert.equal(run.failover.replicaLagMs, cell.at['replica-lag']);
        assert.ok(run.failover.predictedLoss !== null && run.failover.predictedLoss > 0);
        assert.equal(run.failover.ackedMovesLost, run.failover.predictedLoss);
      }
      await assertNothingLeft(spawned);
    });
  });
}

/**
 * The strategies beyond the two forms, on real servers: watch, claim and function are exact under
 * contention like atomic; a zset pending hides the duplicates but not the race; the script mode
 * judges a user's script, catching a forgotten removal from active, an ignored deadline and false returns; and
 * sweepers in processes of their own reach the same verdicts (on one server kind).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isClean } from '../../src/audit/rules.js';
import type { Interrupts } from '../../src/shared/interrupt.js';
import { runMode } from '../../src/race/run-mode.js';
import type { Session } from '../../src/server/session.js';
import { readout } from '../../src/report/report.js';
import { allKeys } from '../helpers/keyspace.js';
import {
  BUILT_IN_SCRIPT,
  FORGETS_ZREM,
  IGNORES_DEADLINE,
  NAMES_A_JOB_NOBODY_HAD,
  NEVER_COUNTS,
  RETURNS_FIRST_TWICE,
  RETURNS_NOTHING,
} from '../helpers/scripts.js';
import { commandsBySource } from '../helpers/monitor.js';
import { forEachServer, oneServerKind } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';
import { ANOMALIES, type Mode, type PendingKind, type ModeRun, type RunResult } from '../../src/shared/model.js';

let counter = 0;
const queueName = (label: string): string => `modes-t${process.pid}-${label}-${counter++}`;

function runOnce(session: Session, interrupts: Interrupts, mode: Mode, over: Partial<ModeRun> = {}): Promise<RunResult> {
  return runMode(
    session,
    {
      mode,
      queue: queueName(mode),
      jobs: 60,
      sweepers: 16,
      batch: 100,
      maxStalled: 3,
      stalledBefore: 0,
      probeDelayMs: 0,
      keep: false,
      live: 30,
      ...over,
    },
    interrupts,
  );
}

function assertClean(run: RunResult, jobs: number): void {
  assert.equal(run.recoveries, jobs, `${run.mode} recoveries`);
  // A count the run did not measure (null) is no anomaly, and no proof of cleanness either.
  for (const name of ANOMALIES) assert.ok(run[name] === 0 || run[name] === null, `${run.mode} ${name}: ${run[name]}`);
  assert.equal(run.cutShort, false);
}

async function functionLibraries(session: Session): Promise<string[]> {
  const list = (await session.admin.call('FUNCTION', 'LIST')) as unknown[][];
  return list.map((entry) => String(entry[1]));
}

/**
 * Where the sweepers in processes of their own run: each process's start-up is what such a run
 * costs, and what it adds to a race in one process (the split into processes, the records sent
 * back) is the tool's own doing, the same on either server. Every verdict it reaches is also
 * reached in one process, on both kinds, above it.
 */
const PROCESSES_KIND = oneServerKind(import.meta.url)[0]?.kind;

forEachServer('modes', (handle, kind) => {
  let session: Session;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    interrupts = watching;
  });

  // 16 sweepers on 60 jobs (one batch, read by all of them at once) contend on every job:
  // exactness under contention needs no more jobs, and a run's cost grows with them (watch's
  // retries with jobs × sweepers).
  for (const mode of ['atomic', 'watch', 'claim', 'function'] as const) {
    test(`${mode} with 16 sweepers over 60 expired and 30 live leases: exact, live leases untouched`, async () => {
      const run = await runOnce(session, interrupts, mode);
      assertClean(run, 60);
      assert.equal(run.live, 30);
      if (mode === 'watch') assert.ok(run.retries > 0, `watch retries ${run.retries}`);
      else assert.equal(run.retries, 0);
      // Round trips: one per sweep for the server-side forms, several per job for the others.
      if (mode === 'atomic' || mode === 'function') assert.equal(run.roundTrips, run.sweeps);
      else assert.ok(run.roundTrips > 3 * run.recoveries, `${mode} roundTrips ${run.roundTrips}`);
    });
  }

  test("watch's round trips are the ones the server saw from its sweepers: a MULTI … EXEC is one, aborted or not", async () => {
    const { result: run, bySource } = await commandsBySource(session.admin, () => runOnce(session, interrupts, 'watch'));
    assertClean(run, 60);
    assert.ok(run.retries > 0, 'sixteen sweepers on one batch contend: some EXECs are aborted');
    const sweepers = [...bySource.values()].map((sent) => sent.map((command) => command.split(' ')[0])).filter((names) => names.includes('WATCH'));
    assert.equal(sweepers.length, 16, 'one connection per sweeper');
    let trips = 0;
    let execs = 0;
    for (const sent of sweepers) {
      let inMulti = false;
      // The client's ready check (INFO) comes before the race.
      for (const command of sent.filter((c) => c !== 'INFO')) {
        if (command === 'MULTI') {
          trips++;
          inMulti = true;
        } else if (command === 'EXEC') {
          inMulti = false;
          execs++;
        } else if (!inMulti) trips++;
      }
    }
    assert.equal(execs, run.recoveries + run.retries, 'an EXEC per move and per aborted attempt');
    assert.equal(run.roundTrips, trips);
  });

  test('loop with 16 sweepers is not exact, and still leaves live leases alone', async () => {
    const run = await runOnce(session, interrupts, 'loop');
    assert.ok(run.doubleRecoveries > 0 && (run.lostIncrements ?? 0) > 0, `loop ${run.doubleRecoveries}/${run.lostIncrements}`);
    assert.equal(run.stolenLeases, 0);
    assert.equal(run.unreclaimed, 0);
  });

  test('the function library carries the run id and is gone after the run', async () => {
    const before = await functionLibraries(session);
    const run = await runOnce(session, interrupts, 'function', { sweepers: 2, jobs: 100, live: 0 });
    assertClean(run, 100);
    assert.deepEqual(await functionLibraries(session), before);
  });

  test('--pending zset: one entry per job in pending, yet double recoveries and lost increments show', async () => {
    const pending: PendingKind = 'zset';
    // A hundred jobs, one batch, that all eight sweepers read at once: the loop meets itself on them every run.
    const loop = await runOnce(session, interrupts, 'loop', { sweepers: 8, jobs: 100, pending });
    assert.equal(loop.pending, 'zset');
    assert.equal(loop.duplicatePending, 0);
    assert.ok(loop.doubleRecoveries > 0, `doubleRecoveries ${loop.doubleRecoveries}`);
    assert.ok((loop.lostIncrements ?? 0) > 0, `lostIncrements ${loop.lostIncrements}`);
    assert.equal(loop.misplaced, 0);
    for (const mode of ['atomic', 'watch', 'claim', 'function'] as const) {
      assertClean(await runOnce(session, interrupts, mode, { sweepers: 8, jobs: 100, live: 20, pending }), 100);
    }
  });

  test('a user script equal to the built-in one behaves like atomic', async () => {
    const run = await runOnce(session, interrupts, 'script', { userScript: BUILT_IN_SCRIPT });
    assertClean(run, 60);
    assert.equal(run.roundTrips, run.sweeps);
  });

  test('a user script that forgets to take its jobs out of active: duplicates, and its sweepers stop at --max-sweeps', async () => {
    const run = await runOnce(session, interrupts, 'script', { userScript: FORGETS_ZREM, sweepers: 4, jobs: 100, live: 0, maxSweeps: 25 });
    assert.ok(run.doubleRecoveries > 0 && run.duplicatePending > 0, `duplicates ${run.doubleRecoveries}/${run.duplicatePending}`);
    assert.equal(run.cutShort, true);
    assert.equal(run.sweeps, 4 * 25);
    assert.equal(run.unreclaimed, 100);
    // Its jobs/s counts the leases it reclaimed, not the jobs seeded: none.
    assert.equal(run.jobsPerSec, 0);
    assert.ok((run.misreported ?? 0) > 0, 'its returns claim moves the server does not show');
  });

  test('a user script that ignores the deadline is caught as stolen leases', async () => {
    const run = await runOnce(session, interrupts, 'script', { userScript: IGNORES_DEADLINE, sweepers: 4, jobs: 200, live: 60 });
    assert.equal(run.stolenLeases, 60);
    assert.equal(run.unreclaimed, 0);
    assert.equal(run.misreported, 0);
    assert.ok(!isClean(run));
  });

  test('a user script whose returns disagree with what it did is reported', async () => {
    const run = await runOnce(session, interrupts, 'script', { userScript: RETURNS_NOTHING, sweepers: 2, jobs: 300, live: 0 });
    assert.equal(run.recoveries, 0);
    assert.ok((run.misreported ?? 0) >= 100, `misreported ${run.misreported}`);
  });

  test('a user script that returns a job twice for one move is reported, and lost increments without a race are not blamed on one', async () => {
    const twice = await runOnce(session, interrupts, 'script', { userScript: RETURNS_FIRST_TWICE, sweepers: 2, jobs: 300, live: 0, batch: 100 });
    // Every job moved once and stands once in pending; the first of each call was returned twice.
    assert.equal(twice.duplicatePending, 0);
    assert.equal(twice.misreported, twice.doubleRecoveries);
    assert.ok(twice.doubleRecoveries >= 3, `doubleRecoveries ${twice.doubleRecoveries}`);
    const never = await runOnce(session, interrupts, 'script', { userScript: NEVER_COUNTS, sweepers: 1, jobs: 200, live: 0 });
    assert.equal(never.lostIncrements, 200);
    assert.equal(never.misreported, 0);
    assert.match(readout(never), /lost 200 stall-counter increments \(recoveries the counter does not show\)/);
    assert.doesNotMatch(readout(never), /two sweeps/);
  });

  test("a user script that returns an id above the run's jobs is reported: one misreport per such return", async () => {
    const run = await runOnce(session, interrupts, 'script', { userScript: NAMES_A_JOB_NOBODY_HAD, sweepers: 2, jobs: 300, live: 20, batch: 100 });
    // Every job moved exactly once and was returned, so only the extra ids disagree: one per sweep that moved any.
    assert.equal(run.recoveries, 300);
    assert.equal(run.misreported, 3);
    assert.ok(!isClean(run));
  });

  if (kind.kind === PROCESSES_KIND) {
    test('--processes: sweepers in processes of their own reach the same verdicts', async () => {
      for (const mode of ['atomic', 'watch'] as const) {
        // Two processes each: a process's start-up, not the jobs, is what such a run costs.
        const run = await runOnce(session, interrupts, mode, { sweepers: 2, jobs: 200, live: 20, processes: true });
        assert.equal(run.processes, true);
        assertClean(run, 200);
      }
      // Stealing live leases needs no contention: one process of its own shows it.
      const script = await runOnce(session, interrupts, 'script', { sweepers: 1, jobs: 200, live: 20, processes: true, userScript: IGNORES_DEADLINE });
      assert.equal(script.processes, true);
      assert.equal(script.stolenLeases, 20);
      // A pause after each probe keeps each process's loop going while the other starts, so the two
      // overlap on the first batch: two processes race it, and each more is a start-up more.
      const loop = await runOnce(session, interrupts, 'loop', { sweepers: 2, jobs: 150, batch: 50, live: 0, processes: true, probeDelayMs: 1 });
      assert.ok(loop.doubleRecoveries > 0, 'loop in processes raced');
      assert.ok(!isClean(loop));
    });
  }

  test('--interval and --jitter: sweepers on a cadence, same verdicts', async () => {
    const atomic = await runOnce(session, interrupts, 'atomic', { sweepers: 4, jobs: 200, live: 20, cadence: { intervalMs: 2, jitterMs: 5 } });
    assertClean(atomic, 200);
    const claim = await runOnce(session, interrupts, 'claim', { sweepers: 4, jobs: 200, live: 20, cadence: { intervalMs: 2, jitterMs: 5 } });
    assertClean(claim, 200);
  });

  test('nothing of a run is left on the server afterwards', async () => {
    assert.deepEqual(await allKeys(session.admin), []);
    assert.deepEqual(await functionLibraries(session), []);
  });
});

/**
 * The audit reading real server state: queues built by hand on a real server, with known
 * duplicates, lost and extra increments, lost, misplaced and unreclaimed jobs, counted exactly.
 * Also the dead-letter branch, the server's clock, the claim that guards the user's keys, and
 * the heartbeat after the run's own process stood still.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditJobs, movesPerJob } from '../../src/audit/rules.js';
import { claimQueue, HEARTBEAT_TTL_MS, keepHeartbeat, releaseClaim } from '../../src/queue/owner-claim.js';
import { newOwnerMarker, ownerValue, parseOwnerValue } from '../../src/queue/owner-marker.js';
import { EmqError, ExitCode } from '../../src/shared/errors.js';
import type { Interrupts } from '../../src/shared/interrupt.js';
import { queueKeys } from '../../src/queue/keys.js';
import { MoveLog } from '../../src/sweepers/move-log.js';
import { runMode } from '../../src/race/run-mode.js';
import { serverTimeMs } from '../../src/server/clock.js';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import type { Session } from '../../src/server/session.js';
import { readSnapshot } from '../../src/audit/snapshot.js';
import { until } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import { holdFirst } from '../helpers/held-call.js';
import { sends } from '../helpers/proxy.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';

let counter = 0;
const queueName = (label: string): string => `state-t${process.pid}-${label}-${counter++}`;

forEachServer('audit on server state', (handle) => {
  let session: Session;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    interrupts = watching;
  });

  test('a hand-built queue is counted exactly', async () => {
    const redis = session.admin;
    const keys = queueKeys(queueName('hand'));
    const now = await serverTimeMs(redis);
    // 1: recovered three times by two sweepers, counter rose once
    await redis.rpush(keys.pending, '1', '1', '1');
    await redis.hset(keys.job(1), 'state', 'pending', 'stalled', 1);
    // 2: recovered once, clean
    await redis.rpush(keys.pending, '2');
    await redis.hset(keys.job(2), 'state', 'pending', 'stalled', 1);
    // 3: never moved, still expired in active, but its counter rose (extra increment, unreclaimed)
    await redis.zadd(keys.active, now - 5000, '3');
    await redis.hset(keys.job(3), 'state', 'active', 'stalled', 1);
    // 4: moved once, then vanished from every place (lost)
    await redis.hset(keys.job(4), 'state', 'pending', 'stalled', 1);
    // 5: in pending and in dead (misplaced)
    await redis.rpush(keys.pending, '5');
    await redis.zadd(keys.dead, 0, '5');
    await redis.hset(keys.job(5), 'state', 'dead', 'stalled', 1);
    // 6: seeded expired, now in active with a lease in the future and never moved nor counted: a
    // sweep renewed its lease rather than recovering it (unreclaimed)
    await redis.zadd(keys.active, now + 600_000, '6');
    await redis.hset(keys.job(6), 'state', 'active', 'stalled', 0);
    // 7: dead-lettered properly
    await redis.zadd(keys.dead, 0, '7');
    // Entries that name no job: `07` (no job hash has that name) in pending, `8` (past the last job) in dead
    await redis.rpush(keys.pending, '07');
    await redis.zadd(keys.dead, 0, '8');
    await redis.hset(keys.job(7), 'state', 'dead', 'stalled', 1);

    const a = new MoveLog();
    const b = new MoveLog();
    a.add(1, 'pending');
    b.add(1, 'pending');
    a.add(1, 'pending');
    a.add(2, 'pending');
    b.add(4, 'pending');
    a.add(5, 'pending');
    b.add(7, 'dead');
    const snapshot = await readSnapshot(redis, keys, 7, 0);
    const counts = auditJobs(snapshot, movesPerJob(7, [a, b]).moves);
    assert.deepEqual(counts, {
      recoveries: 7,
      doubleRecoveries: 2,
      duplicatePending: 2,
      lostIncrements: 2,
      extraIncrements: 1,
      lostJobs: 1,
      misplaced: 1,
      unreclaimed: 2,
      jobsRecoveredMoreThanOnce: 1,
      mostPendingEntries: 3,
      strayEntries: 2,
      // What this audit did not measure (no workers, observer, cycles, live leases or user script): null, never 0.
      doubleExecutions: null,
      deadLetterEscapes: 0,
      windowInNeither: null,
      windowInBoth: null,
      unacknowledgedMoves: 0,
      stolenLeases: null,
      misreported: null,
      forgottenStalls: null,
      forgottenStallCount: null,
      // Every counter at or below its job's one real stall; without max-stalled nothing is early in dead.
      overcountedStalls: 0,
      overcountedStallCount: 0,
      deadLetteredEarly: 0,
      // No re-leaser took entries back out: the final state shows every duplicate.
      duplicatePendingAtEnd: 2,
    });
    await redis.del(keys.active, keys.pending, keys.dead, ...[1, 2, 3, 4, 5, 6, 7].map((id) => keys.job(id)));
  });

  test('max-stalled dead-letters: the jobs go to dead with state dead', async () => {
    for (const mode of ['atomic', 'loop'] as const) {
      const queue = queueName(`dead-${mode}`);
      const run = await runMode(
        session,
        { mode, queue, jobs: 300, sweepers: 1, batch: 50, maxStalled: 3, stalledBefore: 2, probeDelayMs: 0, keep: true },
        interrupts,
      );
      assert.equal(run.recoveries, 300);
      assert.equal(run.misplaced, 0);
      assert.equal(run.lostIncrements, 0);
      const keys = queueKeys(queue);
      assert.equal(await session.admin.zcard(keys.dead), 300);
      assert.equal(await session.admin.llen(keys.pending), 0);
      assert.equal(await session.admin.hget(keys.job(1), 'state'), 'dead');
      assert.equal(await session.admin.hget(keys.job(300), 'stalled'), '3');
      const all = await allKeys(session.admin);
      await session.admin.unlink(...all.filter((k) => k.startsWith(keys.prefix)));
    }
  });

  test("a client clock that is off by hours changes nothing: every time is the server's", async () => {
    for (const skewMs of [-3 * 3600_000, 3 * 3600_000]) {
      const skewed = (): number => Date.now() + skewMs;
      const atomic = await runMode(
        session,
        { mode: 'atomic', queue: queueName('skew-a'), jobs: 400, sweepers: 4, batch: 50, maxStalled: 3, stalledBefore: 0, probeDelayMs: 0, keep: false },
        interrupts,
        skewed,
      );
      assert.equal(atomic.recoveries, 400);
      assert.equal(atomic.unreclaimed, 0);
      const loop = await runMode(
        session,
        { mode: 'loop', queue: queueName('skew-l'), jobs: 200, sweepers: 1, batch: 50, maxStalled: 3, stalledBefore: 0, probeDelayMs: 0, keep: false },
        interrupts,
        skewed,
      );
      assert.equal(loop.recoveries, 200, `loop with client clock skewed ${skewMs} ms`);
      assert.equal(loop.unreclaimed, 0);
    }
  });

  test('the claim: owned only once the queue is found empty; refuses an owned queue and a queue with keys, deleting only its marker', async () => {
    const redis = session.admin;
    const where = session.target.display;
    const keys = queueKeys(queueName('claim'));
    const claim = await claimQueue(redis, keys, newOwnerMarker('run-1', 5), where);
    assert.equal(claim.marker.phase, 'owned');
    assert.equal(await redis.get(keys.owner), claim.value);
    assert.equal(parseOwnerValue(claim.value)?.phase, 'owned');
    assert.equal(await redis.pttl(keys.owner), -1, 'an owned marker does not expire');
    assert.equal(await redis.get(keys.heartbeat), 'run-1', 'the heartbeat is written with the promotion');
    assert.ok((await redis.pttl(keys.heartbeat)) > 0, 'the heartbeat expires');

    // Refused as a run still going (its heartbeat stands), named by what its marker holds: the
    // run id only as a run writes one (not 'run-1'), the start, the pid and the host.
    await assert.rejects(claimQueue(redis, keys, newOwnerMarker('run-2', 5), where), (err: unknown) => {
      assert.ok(err instanceof EmqError && err.exitCode === ExitCode.usage);
      assert.match(
        err.message,
        new RegExp(
          `^queue ${keys.queue} is already in use by a run still going \\(started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, by pid ${process.pid} on [\\w.-]+\\): pick another --queue, or let that run end first$`,
        ),
      );
      return true;
    });
    assert.equal(await redis.get(keys.owner), claim.value, 'the loser leaves the winner its marker');
    assert.equal(await releaseClaim(redis, keys, ownerValue(newOwnerMarker('run-2', 5))), 0, 'releasing needs the exact value');
    assert.equal(await releaseClaim(redis, keys, claim.value), 1);
    await redis.unlink(keys.heartbeat);
    assert.equal(await redis.exists(keys.owner), 0);

    // A marker of the tool's form that anyone could have written: nothing of its run id or host is
    // repeated (a terminal's control sequences, here), a start past what a Date holds is left out,
    // and with no heartbeat and no process of it here, the queue reads as left by a run that ended.
    const forged = { tool: 'emq-race', run: 'x\u001b[31m', jobs: 1, started: 1e300, host: 'evil\u001b[2J', pid: 5, phase: 'owned' };
    await redis.set(keys.owner, JSON.stringify(forged));
    await assert.rejects(claimQueue(redis, keys, newOwnerMarker('run-4', 5), where), (err: unknown) => {
      assert.ok(err instanceof EmqError && err.exitCode === ExitCode.usage);
      assert.equal(
        err.message,
        `queue ${keys.queue} is already in use: a run that ended left its keys there (kept with --keep, or stopped before it removed them); pick another --queue, or remove them with emq-race clean --queue ${keys.queue} (and the same --url)`,
      );
      return true;
    });
    assert.equal(await redis.get(keys.owner), JSON.stringify(forged), 'the refused claim leaves the marker it found');
    // A key not of the tool's form where its marker would be: no run's, and nothing for clean.
    await redis.set(keys.owner, 'foo');
    await assert.rejects(claimQueue(redis, keys, newOwnerMarker('run-5', 5), where), (err: unknown) => {
      assert.ok(err instanceof EmqError && err.exitCode === ExitCode.usage);
      assert.equal(err.message, `queue ${keys.queue} is already in use: ${keys.owner} exists and was not written by emq-race; pick another --queue`);
      return true;
    });
    assert.equal(await redis.get(keys.owner), 'foo', 'the refused claim leaves the key it found');
    await redis.del(keys.owner);

    await redis.set(keys.job(1), 'the user keeps this');
    await assert.rejects(claimQueue(redis, keys, newOwnerMarker('run-3', 5), where), /already has keys/);
    assert.equal(await redis.exists(keys.owner), 0, 'a refused run removes its own marker');
    assert.equal(await redis.get(keys.job(1)), 'the user keeps this');
    await redis.del(keys.job(1));
  });

  test("the heartbeat after the process stood still: one that lapsed is written again while the marker is the run's; one removed sooner stops the run", async () => {
    const redis = session.admin;
    const where = session.target.display;
    // The wall clock the heartbeat reads, moved on to stand for the time the process stood still.
    let ahead = 0;
    const clock = (): number => Date.now() + ahead;
    const keys = queueKeys(queueName('lapsed'));
    const claim = await claimQueue(redis, keys, newOwnerMarker('run-lapsed', 5), where);
    const heartbeat = keepHeartbeat(redis, claim, where, clock);
    try {
      // Sent on the heartbeat's own connection, so ahead of any check of its: what the expiry does.
      const expired = redis.unlink(keys.heartbeat);
      ahead += HEARTBEAT_TTL_MS;
      await expired;
      assert.equal(await heartbeat.check(), undefined, "the queue is still the run's: it goes on");
      assert.equal(await redis.get(keys.heartbeat), 'run-lapsed', 'the heartbeat is written again');
      assert.ok((await redis.pttl(keys.heartbeat)) > 0);
      assert.equal(heartbeat.lost.aborted, false);

      // Gone sooner than it could expire: someone removed it.
      await redis.unlink(keys.heartbeat);
      assert.match((await heartbeat.check())?.message ?? '', /vanished from the server .*\(emq:\{state-[^}]*\}:heartbeat gone\)/);
      assert.equal(heartbeat.vanished, true);
    } finally {
      await heartbeat.stop();
      await redis.unlink(keys.owner, keys.heartbeat);
    }
  });

  test('the marker and heartbeat gone while the process stood still past the heartbeat: the line says the run was paused and names clean; no heartbeat written', async () => {
    const redis = session.admin;
    const where = session.target.display;
    let ahead = 0;
    const clock = (): number => Date.now() + ahead;
    const keys = queueKeys(queueName('paused'));
    const claim = await claimQueue(redis, keys, newOwnerMarker('run-paused', 5), where);
    const heartbeat = keepHeartbeat(redis, claim, where, clock);
    try {
      // What clean from another host does once the heartbeat expired, while the process stood still.
      const cleaned = redis.unlink(keys.owner, keys.heartbeat);
      ahead += HEARTBEAT_TTL_MS + 1000;
      await cleaned;
      await until(10_000, 'the heartbeat finds the queue gone', () => heartbeat.lost.aborted);
      const reason = heartbeat.lost.reason as EmqError;
      assert.equal(reason.exitCode, ExitCode.server);
      assert.match(
        reason.message,
        new RegExp(
          `^this run was paused for 1[67] s \\(its process stopped: Ctrl-Z, SIGSTOP or the machine asleep\\), so its heartbeat .* expired meanwhile \\(it lives 15 s\\), and queue ${keys.queue} was removed .*: most likely by emq-race clean --queue ${keys.queue} from another host`,
        ),
      );
      assert.equal(heartbeat.vanished, true);
      assert.equal(heartbeat.claimLost, false);
      assert.equal(await redis.exists(keys.owner, keys.heartbeat), 0, 'no heartbeat written for a marker that is gone');
    } finally {
      await heartbeat.stop();
    }
  });

  test('a check asked just before the process stood still reaches the server only after clean took the queue: the line still says the run was paused', async () => {
    const where = session.target.display;
    let ahead = 0;
    const clock = (): number => Date.now() + ahead;
    const keys = queueKeys(queueName('late-check'));
    const claim = await claimQueue(session.admin, keys, newOwnerMarker('run-late', 5), where);
    // The heartbeat's connection goes through a relay that holds the check's GET of the marker
    // once armed: sent before the pause, it reaches the server after it.
    let armed = false;
    const relay = await holdFirst(handle.url, (chunk) => armed && sends(chunk, 'GET') && chunk.includes(keys.owner));
    const relayed = await connect(parseServerUrl(relay.url));
    const heartbeat = keepHeartbeat(relayed, claim, where, clock);
    try {
      armed = true;
      const checked = heartbeat.check();
      await relay.held;
      // Meanwhile the process stands still past the heartbeat's life, and clean takes the queue.
      ahead += HEARTBEAT_TTL_MS + 1000;
      await session.admin.unlink(keys.owner, keys.heartbeat);
      relay.release();
      const reason = await checked;
      assert.match(
        reason?.message ?? '',
        new RegExp(`^this run was paused for 1[67] s .*most likely by emq-race clean --queue ${keys.queue} from another host`),
      );
      assert.equal(heartbeat.vanished, true);
      assert.equal(await session.admin.exists(keys.owner, keys.heartbeat), 0, 'no heartbeat written for a marker that is gone');
    } finally {
      relay.release();
      await heartbeat.stop();
      relayed.disconnect();
      await relay.close();
      await session.admin.unlink(keys.owner, keys.heartbeat);
    }
  });

  test('two runs started at the same moment on one queue: exactly one proceeds', async () => {
    const queue = queueName('twins');
    const runs = await Promise.allSettled(
      [0, 1].map(() =>
        runMode(
          session,
          { mode: 'atomic', queue, jobs: 500, sweepers: 2, batch: 50, maxStalled: 3, stalledBefore: 0, probeDelayMs: 0, keep: false },
          interrupts,
        ),
      ),
    );
    const won = runs.filter((r) => r.status === 'fulfilled');
    const lost = runs.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    assert.equal(won.length, 1);
    assert.equal(lost.length, 1);
    assert.ok(lost[0]?.reason instanceof EmqError && lost[0].reason.exitCode === ExitCode.usage);
    const winner = won[0] as PromiseFulfilledResult<{ recoveries: number; duplicatePending: number }>;
    assert.equal(winner.value.recoveries, 500);
    assert.equal(winner.value.duplicatePending, 0);
  });

  test('an unrelated key survives a run untouched, and nothing of the run remains', async () => {
    await session.admin.set('user:greeting', 'hello');
    await session.admin.hset('emq:{someone-else}:job:1', 'state', 'active', 'stalled', '5');
    await runMode(
      session,
      { mode: 'loop', queue: queueName('neighbour'), jobs: 300, sweepers: 4, batch: 50, maxStalled: 3, stalledBefore: 0, probeDelayMs: 0, keep: false },
      interrupts,
    );
    assert.deepEqual(await allKeys(session.admin), ['emq:{someone-else}:job:1', 'user:greeting']);
    assert.equal(await session.admin.get('user:greeting'), 'hello');
    assert.deepEqual(await session.admin.hgetall('emq:{someone-else}:job:1'), { state: 'active', stalled: '5' });
    await session.admin.del('user:greeting', 'emq:{someone-else}:job:1');
  });
});

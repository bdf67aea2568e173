/**
 * `emq-race clean` on real servers: it removes a crashed run's keys by name from the job count in
 * its marker, and a job hash only if it carries the run's id; leaves keys a run does not create;
 * removes nothing but the marker under an unconfirmed (`claiming`) or older (`legacy`) marker;
 * refuses a queue whose run is alive (its heartbeat, from any host, or its process here); and
 * refuses `--all` without a terminal unless `--yes`.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { BIN } from '../helpers/cli.js';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { libraryPrefix, queueKeys } from '../../src/queue/keys.js';
import { cleanQueue, ownedQueue } from '../../src/queue/leftovers.js';
import { ownerValue, newOwnerMarker, parseOwnerValue, processStart, type OwnerMarker } from '../../src/queue/owner-marker.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import { errorJson } from '../../src/report/json-header.js';
import { forEachServer } from '../helpers/servers.js';

forEachServer('clean', (handle) => {
  let redis: Redis;
  before(async () => {
    redis = await connect(parseServerUrl(handle.url));
  });
  after(() => redis?.disconnect());

  /** A marker as a run of `jobs` jobs writes it once its claim is confirmed, from a process that is gone. */
  const ownedMarker = (run: string, jobs: number): OwnerMarker => ({ ...newOwnerMarker(run, jobs), pid: 0, phase: 'owned' });

  /** What a run that crashed after seeding `jobs` jobs leaves (no pending yet), under `marker`. */
  async function crashedRun(queue: string, jobs: number, marker: OwnerMarker | string): Promise<void> {
    await redis.set(`emq:{${queue}}:owner`, typeof marker === 'string' ? marker : ownerValue(marker));
    const run = typeof marker === 'string' ? undefined : marker.run;
    for (let id = 1; id <= jobs; id++) {
      await redis.zadd(`emq:{${queue}}:active`, id, String(id));
      await redis.hset(`emq:{${queue}}:job:${id}`, 'state', 'active', 'stalled', 0, ...(run !== undefined ? ['run', run] : []));
    }
  }

  test("a crashed run's keys go, by name; a key a run does not create stays and is reported", async () => {
    await crashedRun('race-crashed', 25, ownedMarker('feedfacefeedface', 25));
    await redis.set('emq:{race-crashed}:notes', 'kept by someone');
    const result = await runCli(['clean', '--url', handle.url, '--queue', 'race-crashed']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^removed queue race-crashed: 27 keys$/m);
    assert.match(
      result.stderr,
      /left 1 key under emq:\{race-crashed\}: that emq-race did not create or cannot prove are its run's \(e\.g\. emq:\{race-crashed\}:notes\)/,
    );
    assert.deepEqual(await allKeys(redis), ['emq:{race-crashed}:notes']);
    await redis.unlink('emq:{race-crashed}:notes');
  });

  test('a --queue of 100 characters: the queues a kept run named with their modes are cleaned by name, as printed', async () => {
    const base = 'k'.repeat(100);
    const kept = await runCli(['--url', handle.url, '--queue', base, '--mode', 'atomic,loop', '--jobs', '20', '--keep']);
    assert.equal(kept.code, 0, kept.stderr);
    for (const mode of ['atomic', 'loop']) {
      const result = await runCli(['clean', '--url', handle.url, '--queue', `${base}-${mode}`]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^removed queue ${base}-${mode}: \\d+ keys$`, 'm'));
    }
    assert.deepEqual(await allKeys(redis), []);
    const long = await runCli(['clean', '--url', handle.url, '--queue', 'k'.repeat(161)]);
    assert.equal(long.code, 2);
    assert.equal(oneErrorLine(long.stderr), "emq-race: --queue: a queue name of 161 characters; use 1 to 160 letters, digits, '-' or '_'");
  });

  test("a kept --mode function run: clean removes its function library with its queue, and leaves another run's; a user who may not delete it hears so", async () => {
    const kept = await runCli(['--url', handle.url, '--mode', 'function', '--jobs', '20', '--queue', 'race-kept-function', '--keep']);
    assert.equal(kept.code, 0, kept.stderr);
    // The line wraps with the table's width: read as one.
    assert.match(kept.stdout.replace(/\s+/g, ' '), /kept: function library emq_race_\w+; emq-race clean --queue race-kept-function removes it/);
    const libraries = async (): Promise<number> => ((await redis.call('FUNCTION', 'LIST', 'LIBRARYNAME', 'emq_race_*')) as unknown[]).length;
    assert.equal(await libraries(), 1);
    // Another run's library, of the same shape, that no marker here names: it stays.
    const other = 'emq_race_0000aaaa0000aaaa';
    await redis.call('FUNCTION', 'LOAD', `#!lua name=${other}\nredis.register_function('${other}_f', function() return 1 end)`);
    // A user with the README's rules and clean's, but not FUNCTION DELETE.
    await redis.call('ACL', 'SETUSER', 'clean-no-fdelete', 'on', '>pw', '~emq:{race-*}:*', '+@all', '-function|delete');
    const refused = await runCli(['clean', '--url', handle.url.replace('redis://', 'redis://clean-no-fdelete:pw@'), '--queue', 'race-kept-function']);
    assert.equal(refused.code, 0, refused.stderr);
    assert.match(refused.stdout, /^removed queue race-kept-function: \d+ keys$/m);
    assert.match(
      refused.stderr,
      /left the function library emq_race_\w+ of queue race-kept-function: this user may not delete it \(FUNCTION DELETE emq_race_\w+\)/,
    );
    assert.equal(await libraries(), 2);
    // Kept again and cleaned by a user who may: the library goes with the queue, the other stays.
    const again = await runCli(['--url', handle.url, '--mode', 'function', '--jobs', '20', '--queue', 'race-kept-function', '--keep']);
    assert.equal(again.code, 0, again.stderr);
    const cleaned = await runCli(['clean', '--url', handle.url, '--queue', 'race-kept-function']);
    assert.equal(cleaned.code, 0, cleaned.stderr);
    assert.match(cleaned.stdout, /^removed queue race-kept-function: \d+ keys, and its function library emq_race_\w+$/m);
    const left = (await redis.call('FUNCTION', 'LIST', 'LIBRARYNAME', 'emq_race_*')) as unknown[][];
    assert.equal(left.length, 2, "the refused one and the other run's");
    await redis.call('FUNCTION', 'FLUSH');
    await redis.call('ACL', 'DELUSER', 'clean-no-fdelete');
    assert.deepEqual(await allKeys(redis), []);
  });

  test('a queue listed, then cleaned by someone else and its name taken again: the stale clean deletes nothing of what is there now', async () => {
    // What --all read when it listed the queue, before its prompt was answered.
    await crashedRun('race-relisted', 5, ownedMarker('0123456701234567', 5));
    const listed = await ownedQueue(redis, 'race-relisted');
    const meanwhile = await runCli(['clean', '--url', handle.url, '--queue', 'race-relisted']);
    assert.equal(meanwhile.code, 0, meanwhile.stderr);
    // Another program's lists under the same name, then another run's claim beside them.
    await redis.rpush('emq:{race-relisted}:pending', 'order-1', 'order-2');
    await redis.zadd('emq:{race-relisted}:active', 1, 'order-3');
    const stale = cleanQueue(redis, listed);
    await assert.rejects(stale, /^EmqError: queue race-relisted changed after clean read its owner marker .*: left as it is now; nothing removed$/);
    assert.deepEqual(await redis.lrange('emq:{race-relisted}:pending', 0, -1), ['order-1', 'order-2']);
    await crashedRun('race-relisted', 3, ownedMarker('89abcdef89abcdef', 3));
    await assert.rejects(cleanQueue(redis, listed), /changed after clean read its owner marker/);
    assert.equal(await redis.zcard('emq:{race-relisted}:active'), 4);
    assert.equal(await redis.exists('emq:{race-relisted}:owner', 'emq:{race-relisted}:job:1'), 2);
    // An unconfirmed marker alone, gone by the time clean comes to it (expired, or taken by another
    // clean first): said so, not "removed 0 keys"; another run's claim there since: left, and named.
    const claiming = { ...ownedMarker('fedcba98fedcba98', 0), phase: 'claiming' as const };
    await redis.set('emq:{race-claimed}:owner', ownerValue(claiming));
    const twice = await ownedQueue(redis, 'race-claimed');
    await cleanQueue(redis, twice);
    assert.deepEqual(await cleanQueue(redis, twice), {
      queue: 'race-claimed',
      deleted: 0,
      foreign: [],
      markerOnly: true,
      markerGone: 'an unconfirmed claim expires by itself within 30 s, or another clean removed it',
    });
    // An older emq-race's marker has no expiry: only another clean can have taken it.
    const { phase: _, ...legacyMarker } = claiming;
    await redis.set('emq:{race-legacy}:owner', JSON.stringify(legacyMarker));
    const legacy = await ownedQueue(redis, 'race-legacy');
    assert.equal(legacy.marker.phase, 'legacy');
    await cleanQueue(redis, legacy);
    assert.equal((await cleanQueue(redis, legacy)).markerGone, 'another clean removed it');
    await redis.set('emq:{race-claimed}:owner', ownerValue({ ...claiming, run: '7654321076543210' }));
    await assert.rejects(cleanQueue(redis, twice), /queue race-claimed changed after clean read its owner marker/);
    assert.notEqual(await redis.get('emq:{race-claimed}:owner'), null);
    await redis.unlink(...(await allKeys(redis)));
  });

  test("a job hash without the run id (or with another run's, or not a hash) survives clean, which says so", async () => {
    await crashedRun('race-mixed', 6, ownedMarker('0123012301230123', 6));
    // Written by someone else under the run's names: no run field, another run's id, a string.
    await redis.hdel('emq:{race-mixed}:job:2', 'run');
    await redis.hset('emq:{race-mixed}:job:3', 'run', 'another-run-id');
    await redis.unlink('emq:{race-mixed}:job:4');
    await redis.set('emq:{race-mixed}:job:4', 'a string');
    const survivors = ['emq:{race-mixed}:job:2', 'emq:{race-mixed}:job:3', 'emq:{race-mixed}:job:4'];
    const before = await Promise.all(survivors.map((key) => redis.dump(key)));
    const result = await runCli(['clean', '--url', handle.url, '--queue', 'race-mixed']);
    assert.equal(result.code, 0, result.stderr);
    // active, job:1, job:5, job:6 and the marker.
    assert.match(result.stdout, /^removed queue race-mixed: 5 keys$/m);
    assert.match(result.stderr, /left 3 keys under emq:\{race-mixed\}: that emq-race did not create or cannot prove are its run's/);
    assert.deepEqual(await allKeys(redis), survivors);
    assert.deepEqual(await Promise.all(survivors.map((key) => redis.dump(key))), before);
    await redis.unlink(...survivors);
  });

  test('an unconfirmed (claiming) marker and an older one without a phase: only the marker goes', async () => {
    const claiming = { ...newOwnerMarker('c1a1c1a1c1a1c1a1', 3), pid: 0 };
    const { phase: _, ...legacy } = { ...newOwnerMarker('1e6ac71e6ac71e6a', 3), pid: 0 };
    for (const [queue, marker] of [
      ['race-claiming', ownerValue(claiming)],
      ['race-legacy', JSON.stringify(legacy)],
    ] as const) {
      // Keys that look like a run's, the job hashes even carry the run id: under such a marker they prove nothing.
      await crashedRun(queue, 3, marker);
      const before = (await allKeys(redis)).filter((key) => key.includes(`{${queue}}`) && !key.endsWith(':owner'));
      const result = await runCli(['clean', '--url', handle.url, '--queue', queue]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(
        result.stdout,
        new RegExp(`^removed the marker of queue ${queue} \\(1 key\\); no other key is removed under an unconfirmed or older marker$`, 'm'),
      );
      assert.match(result.stderr, /left 4 keys/);
      assert.deepEqual(
        (await allKeys(redis)).filter((key) => key.includes(`{${queue}}`)),
        before,
      );
      await redis.unlink(...before);
    }
  });

  test("a marker's run id and host of another shape (escape codes, line breaks, thousands of characters) are never printed", async () => {
    const hostile = '\x1b[31mEVIL\nsecond line';
    await crashedRun('race-hostile', 2, { ...ownedMarker('feedfeedfeedfeed', 2), host: hostile, pid: 4242 });
    await crashedRun('race-long', 2, { ...ownedMarker('x'.repeat(5000), 2), host: 'h'.repeat(5000), pid: 4242 });
    await redis.set('emq:{race-hostile}:heartbeat', 'feedfeedfeedfeed', 'PX', 60_000);
    const listed = await runCli(['clean', '--url', handle.url, '--all']);
    const refused = await runCli(['clean', '--url', handle.url, '--queue', 'race-hostile']);
    for (const result of [listed, refused]) {
      const output = result.stdout + result.stderr;
      assert.doesNotMatch(output, /\x1b|EVIL|second line|xxxxxxxxxx|hhhhhhhhhh/, output);
    }
    assert.match(listed.stdout, /^ {2}race-long: 2 jobs planned by run \(an id not of the tool's making\), started \S+$/m);
    assert.equal(oneErrorLine(refused.stderr)?.startsWith('emq-race: queue race-hostile is in use by a live run: its heartbeat'), true, refused.stderr);
    await redis.unlink(...(await allKeys(redis)));
  });

  test('a queue whose run is alive is refused: its heartbeat, from any host; its process, here', async () => {
    // A run on another machine: its pid means nothing here, its heartbeat says it lives.
    await crashedRun('race-beating', 3, { ...ownedMarker('beatbeatbeatbeat', 3), host: 'some-other-host', pid: 4242 });
    await redis.set('emq:{race-beating}:heartbeat', 'beatbeatbeatbeat', 'PX', 60_000);
    const beating = await runCli(['clean', '--url', handle.url, '--queue', 'race-beating']);
    assert.equal(beating.code, 2, beating.stderr);
    assert.match(
      oneErrorLine(beating.stderr) ?? '',
      /queue race-beating is in use by a live run \(pid 4242 on some-other-host\): its heartbeat emq:\{race-beating\}:heartbeat is fresh; nothing removed/,
    );
    const all = await runCli(['clean', '--url', handle.url, '--all', '--yes']);
    assert.equal(all.code, 2, all.stderr);
    assert.match(all.stderr, /race-beating is in use by a live run/);
    assert.match(all.stderr, /^emq-race: clean --all left 1 queue on \S+ \(refused: queue race-beating\)$/m);
    assert.equal((await allKeys(redis)).length, 6);
    await redis.unlink(...(await allKeys(redis)));

    // A run of this machine whose process has ended: its heartbeat still stands, and the line says
    // the run is over and the queue is clean's once the heartbeat lapses, not that a live run holds it.
    const ended = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => ended.on('exit', resolve));
    await crashedRun('race-ended', 3, { ...ownedMarker('e4de4de4de4de4d0', 3), host: hostname(), pid: ended.pid as number });
    await redis.set('emq:{race-ended}:heartbeat', 'e4de4de4de4de4d0', 'PX', 60_000);
    const over = await runCli(['clean', '--url', handle.url, '--queue', 'race-ended']);
    assert.equal(over.code, 2, over.stderr);
    assert.match(
      oneErrorLine(over.stderr) ?? '',
      new RegExp(
        `^emq-race: queue race-ended belongs to a run that has ended \\(pid ${ended.pid} on .+ is no longer running\\), but its heartbeat emq:\\{race-ended\\}:heartbeat is still fresh: nothing removed; clean takes the queue once the heartbeat lapses, within 15 s$`,
      ),
    );
    await redis.unlink(...(await allKeys(redis)));

    // This test process stands in for the live run; clean runs as a process of its own, since its
    // own pid is never taken for a live run.
    await crashedRun('race-alive', 3, { ...ownedMarker('0badc0de0badc0de', 3), host: hostname(), pid: process.pid });
    const result = await spawnCli(['clean', '--url', handle.url, '--queue', 'race-alive']);
    assert.equal(result.code, 2, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', new RegExp(`in use by a run still going on this machine \\(pid ${process.pid}\\)`));
    assert.equal((await allKeys(redis)).length, 5);
    await redis.unlink(...(await allKeys(redis)));
  });

  test("a pid given again to another process does not keep a dead run's queue: the marker's start time must match too", {
    skip: processStart(process.pid) === undefined && 'no /proc here: clean judges by the pid alone',
  }, async () => {
    // A live process that is not the run: it holds the pid the marker names, as a reused pid would.
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const pid = other.pid ?? 0;
      assert.ok(pid > 0);
      const started = processStart(pid);
      assert.ok(started !== undefined);
      await crashedRun('race-reused', 3, { ...ownedMarker('5eed5eed5eed5eed', 3), host: hostname(), pid, procStart: `${started}0` });
      const reused = await runCli(['clean', '--url', handle.url, '--queue', 'race-reused']);
      assert.equal(reused.code, 0, reused.stderr);
      assert.match(reused.stdout, /^removed queue race-reused: 5 keys$/m);
      assert.deepEqual(await allKeys(redis), []);

      // The same process, as the marker recorded it: the run still goes on.
      await crashedRun('race-same', 3, { ...ownedMarker('5a3e5a3e5a3e5a3e', 3), host: hostname(), pid, procStart: started });
      const same = await runCli(['clean', '--url', handle.url, '--queue', 'race-same']);
      assert.equal(same.code, 2, same.stderr);
      assert.match(oneErrorLine(same.stderr) ?? '', new RegExp(`in use by a run still going on this machine \\(pid ${pid}\\)`));
      assert.equal((await allKeys(redis)).length, 5);
      await redis.unlink(...(await allKeys(redis)));

      // A marker of an older version, without the start time, is judged by the pid alone, as before.
      const { procStart: _, ...older } = { ...ownedMarker('01d01d01d01d01d0', 3), host: hostname(), pid, procStart: started };
      await crashedRun('race-older', 3, older);
      const olderResult = await runCli(['clean', '--url', handle.url, '--queue', 'race-older']);
      assert.equal(olderResult.code, 2, olderResult.stderr);
      assert.equal((await allKeys(redis)).length, 5);
      await redis.unlink(...(await allKeys(redis)));
    } finally {
      other.kill('SIGKILL');
    }
  });

  test('the marker a run writes names its own process as the system tells it apart', () => {
    const marker = newOwnerMarker('0000000000000000', 1);
    assert.equal(marker.procStart, processStart(process.pid));
    assert.deepEqual(parseOwnerValue(ownerValue(marker)), marker);
  });

  /**
   * `redis` whose script calls (clean deletes through scripts, each under the marker it read)
   * stop `stop` once `count` of them have answered; `answered` is how many have. A NOSCRIPT reply
   * is not an answer: the script is sent again in full, and that one counts.
   */
  function stopAfterScripts(stop: AbortController, count: number): { redis: Redis; answered: () => number } {
    let answered = 0;
    const counted =
      <A extends unknown[]>(call: (...args: A) => Promise<unknown>) =>
      async (...args: A): Promise<unknown> => {
        const reply = await call(...args);
        if (++answered === count) stop.abort(new Error('stopped'));
        return reply;
      };
    const held = Object.assign(Object.create(redis) as Redis, {
      evalsha: counted(redis.evalsha.bind(redis) as (...args: unknown[]) => Promise<unknown>),
      eval: counted(redis.eval.bind(redis) as (...args: unknown[]) => Promise<unknown>),
    });
    return { redis: held, answered: () => answered };
  }

  test('a clean stopped before its first deletion touches nothing and says so (unbegun); stopped after it, partly', async () => {
    await crashedRun('race-unbegun', 3, ownedMarker('abababababababab', 3));
    const before = await allKeys(redis);
    const stop = new AbortController();
    stop.abort(new Error('stopped'));
    const owned = await ownedQueue(redis, 'race-unbegun');
    assert.deepEqual(await cleanQueue(redis, owned, stop.signal), { queue: 'race-unbegun', deleted: 0, foreign: [], markerOnly: false, stopped: 'unbegun' });
    assert.deepEqual(await allKeys(redis), before);
    // Stopped as its first deletion's reply comes: that deletion ran, no job hash was asked for.
    const late = new AbortController();
    const partly = await cleanQueue(stopAfterScripts(late, 1).redis, owned, late.signal);
    assert.equal(partly.stopped, 'partly');
    assert.deepEqual(await allKeys(redis), ['emq:{race-unbegun}:job:1', 'emq:{race-unbegun}:job:2', 'emq:{race-unbegun}:job:3', 'emq:{race-unbegun}:owner']);
    const done = await cleanQueue(redis, owned);
    assert.equal(done.stopped, undefined);
    assert.deepEqual(await allKeys(redis), []);
  });

  test("a library run's namespace is removed call by call too: a stop between its calls leaves the rest and the marker", async () => {
    await crashedRun('race-lib-stop', 0, { ...ownedMarker('cdcdcdcdcdcdcdcd', 0), library: 'bullmq' });
    const prefix = libraryPrefix(queueKeys('race-lib-stop'), 'bullmq');
    // Far more keys than one SCAN call covers, so that its removal takes many calls.
    const pipeline = redis.pipeline();
    for (let i = 0; i < 5000; i++) pipeline.set(`${prefix}${i}`, 'x');
    await pipeline.exec();
    const stop = new AbortController();
    // The structure keys' deletion, then the first call of the namespace's: then the stop.
    const held = stopAfterScripts(stop, 2);
    const owned = await ownedQueue(redis, 'race-lib-stop');
    assert.equal((await cleanQueue(held.redis, owned, stop.signal)).stopped, 'partly');
    assert.equal(held.answered(), 2, 'no call after the stop');
    const left = (await allKeys(redis)).filter((key) => key.startsWith(prefix)).length;
    assert.ok(left > 0 && left < 5000, `${left} of the namespace's 5,000 keys left`);
    assert.notEqual(await redis.get('emq:{race-lib-stop}:owner'), null);
    assert.equal((await cleanQueue(redis, owned)).stopped, undefined);
    assert.deepEqual(await allKeys(redis), []);
  });

  test('clean has no --json: asked for it, before or after its name, it prints the error object --json prints and nothing else', async () => {
    await crashedRun('race-json', 2, ownedMarker('4a504a504a504a50', 2));
    for (const args of [
      ['clean', '--json', '--all', '--yes', '--url', handle.url],
      ['--json', 'clean', '--queue', 'race-json', '--url', handle.url],
    ]) {
      const result = await runCli(args);
      assert.equal(result.code, 2, result.stderr);
      const line =
        "unknown option '--json'; --json is a flag of the race itself, emq-race explain, emq-race explore and emq-race grid, not of clean (emq-race help clean lists its flags)";
      assert.equal(oneErrorLine(result.stderr), `emq-race: ${line}`);
      assert.deepEqual(JSON.parse(result.stdout), errorJson(2, line));
      assert.equal(result.stdout.trim().split('\n').length, 1);
    }
    assert.equal((await allKeys(redis)).length, 4);
    await redis.unlink(...(await allKeys(redis)));
  });

  test('a queue not found names the database looked in, since a run kept in another one is found only with it in the URL', async () => {
    const missing = await runCli(['clean', '--url', `${handle.url}/3`, '--queue', 'race-nowhere']);
    assert.equal(missing.code, 2, missing.stderr);
    assert.equal(
      oneErrorLine(missing.stderr),
      'emq-race: queue race-nowhere not found: no emq:{race-nowhere}:owner in database 3 of this server (a queue kept in another database is cleaned with that database in the URL)',
    );
  });

  test("another program's key of another type where a marker would be: clean --queue refuses it (exit 2), --all cleans the rest and leaves it", async () => {
    await redis.hset('emq:{race-hashed}:owner', 'a', 'b');
    await crashedRun('race-beside', 3, ownedMarker('5555666677778888', 3));
    const one = await runCli(['clean', '--url', handle.url, '--queue', 'race-hashed']);
    assert.equal(one.code, 2, one.stderr);
    assert.equal(oneErrorLine(one.stderr), 'emq-race: emq:{race-hashed}:owner was not written by emq-race: leaving queue race-hashed alone; nothing removed');
    const all = await runCli(['clean', '--url', handle.url, '--all', '--yes']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /^removed queue race-beside: 5 keys$/m);
    assert.deepEqual(await allKeys(redis), ['emq:{race-hashed}:owner'], 'the hash stays, as it was');
    assert.deepEqual(await redis.hgetall('emq:{race-hashed}:owner'), { a: 'b' });
    await redis.unlink('emq:{race-hashed}:owner');
  });

  test('--all without a terminal refuses unless --yes; with nothing to clean it says so', async () => {
    await crashedRun('race-one', 2, ownedMarker('1111222233334444', 2));
    const refused = await runCli(['clean', '--url', handle.url, '--all']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stdout, /race-one: 2 jobs planned by run 1111222233334444/);
    assert.match(oneErrorLine(refused.stderr) ?? '', /1 queue found; no terminal to confirm on, so pass --yes to remove it$/);
    assert.equal((await allKeys(redis)).length, 4);
    const done = await runCli(['clean', '--url', handle.url, '--all', '--yes']);
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(await allKeys(redis), []);
    const empty = await runCli(['clean', '--url', handle.url, '--all']);
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stdout, /^no emq-race queues on redis:\/\/127\.0\.0\.1:\d+$/m);
  });

  test('--all on a terminal asks first: "n" keeps the queues, so does Ctrl-D, "y" removes them', {
    skip: which('script') ? false : 'script(1) is not installed',
  }, async () => {
    await crashedRun('race-asked', 2, ownedMarker('5555666677778888', 2));
    // Ctrl-D ends the input without an answer.
    for (const answer of ['n\r', '\u0004', 'y\r']) {
      // script(1) gives the command a pseudo-terminal, as a person at a shell would have.
      const child = spawn('script', ['-qec', `${process.execPath} ${BIN} clean --url ${handle.url} --all`, '/dev/null'], {
        env: { ...process.env, REDIS_URL: '', NO_COLOR: '1' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (/\[y\/N\]/.test(output) && child.stdin.writable) child.stdin.end(answer);
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0, output);
      assert.match(output, /race-asked: 2 jobs/);
      if (answer !== 'y\r') {
        assert.match(output, /nothing removed/);
        assert.equal((await allKeys(redis)).length, 4);
      } else {
        assert.match(output, /removed queue race-asked: 4 keys/);
        assert.deepEqual(await allKeys(redis), []);
      }
    }
  });
});

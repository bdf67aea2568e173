/**
 * What the server does behind a run's back: an operator who switches the policy to allkeys-lru
 * and lowers maxmemory mid-run, a CONFIG RESETSTAT while another client fills the server, a
 * FLUSHALL by another client, or its DEL of one job hash in the middle of the queue. Each stops the run with exit 3 and a line saying what was seen,
 * never a result that blames a strategy, and the run's keys are gone afterwards. `explain` writes
 * too, so on a server with no room it is refused (exit 2) before it writes, with no eviction.
 * The CLI runs in this process (the `Io` seam); the test acts on the server once the run's keys
 * are there.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import type { Redis } from 'ioredis';
import { run } from '../../src/cli/program.js';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { advanceCount, evictedKeys, startCount, statsReading } from '../../src/server/eviction-watch.js';
import { parseMemoryInfo, roomLeft } from '../../src/server/memory-check.js';
import { cliResult, type CliResult } from '../helpers/cli.js';
import { oneErrorLine, within, until } from '../helpers/cli-process.js';
import { allKeys, keyspaceDigest, queueKeysLeft } from '../helpers/keyspace.js';
import { forEachServer } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';
import { fillUnrelated } from '../helpers/unrelated-data.js';

/** A guard against hangs, not a timing. */
const LIMIT_MS = 60_000;

function runInProcess(args: readonly string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  return run(['node', 'emq-race', ...args], {
    out: (text) => (stdout += text),
    err: (text) => (stderr += text),
    env: { NO_COLOR: '1' },
    stdoutIsTty: false,
  }).then((code) => cliResult(code, null, stdout, stderr));
}

async function fill(redis: Redis, prefix: string, count: number, size = 100): Promise<void> {
  for (let at = 0; at < count; at += 500) {
    const pipeline = redis.pipeline();
    for (let i = at; i < Math.min(count, at + 500); i++) pipeline.set(`${prefix}:${i}`, 'v'.repeat(size));
    await pipeline.exec();
  }
}

const evicted = async (redis: Redis): Promise<number> => evictedKeys(await redis.info('stats'));

test('the eviction count: what each reading grew by, and after a reset (counters gone down) everything counted since', () => {
  const at = (evictedKeys: number, commands: number, connections = 10) => ({ evicted: evictedKeys, commands, connections });
  let count = startCount(at(5000, 90_000));
  count = advanceCount(count, at(5000, 90_010));
  assert.deepEqual([count.evicted, count.reset], [0, false]);
  count = advanceCount(count, at(5003, 90_020));
  assert.deepEqual([count.evicted, count.reset], [3, false]);
  // CONFIG RESETSTAT, then 40 evictions: fewer than at the start, yet every one counted.
  count = advanceCount(count, at(40, 300, 0));
  assert.deepEqual([count.evicted, count.reset], [43, true]);
  count = advanceCount(count, at(41, 310, 0));
  assert.deepEqual([count.evicted, count.reset], [44, true]);
  // A reset seen only in the commands processed (no eviction since): nothing added.
  count = advanceCount(count, at(0, 5, 0));
  assert.deepEqual([count.evicted, count.reset], [44, true]);
  assert.equal(statsReading('evicted_keys:7\r\ntotal_commands_processed:12\r\ntotal_connections_received:3\r\n').commands, 12);
});

forEachServer('keys that vanish under a run', (handle) => {
  let redis: Redis;
  before(async () => {
    redis = await connect(parseServerUrl(handle.url));
  });
  after(() => redis?.disconnect());
  beforeEach(async () => {
    // The test's own server: each scenario starts from its own foreign data, with no limit.
    await redis.call('CONFIG', 'SET', 'maxmemory', '0');
    await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
    await redis.flushall();
    await fillUnrelated(redis);
    await fill(redis, 'foreign', 3000);
  });

  test('explain on an allkeys-lru server with no room: refused before it writes (exit 2), not one eviction; with room it runs, still none', async () => {
    const foreign = await keyspaceDigest(redis);
    const memory = parseMemoryInfo(await redis.info('memory'));
    await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
    // 100 KB of room: what the replay's connections and commands alone would overrun.
    await redis.call('CONFIG', 'SET', 'maxmemory', String(memory.usedMemory - memory.notCountedForEvict + 100 * 1024));
    const before = await evicted(redis);
    assert.ok(roomLeft(parseMemoryInfo(await redis.info('memory'))) > 0, 'the server starts below its limit');
    const refused = await within(LIMIT_MS, 'explain', runInProcess(['explain', '--url', handle.url, '--queue', 'race-noroom']));
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(oneErrorLine(refused.stderr) ?? '', /^emq-race: .*maxmemory.*allkeys-lru.*Refusing, nothing written: use a server with more room$/);
    assert.equal(refused.stdout, '');
    assert.equal(await evicted(redis), before, 'the server evicted keys');
    assert.deepEqual(await keyspaceDigest(redis), foreign);

    await redis.call('CONFIG', 'SET', 'maxmemory', String(memory.usedMemory + 32 * 1024 * 1024));
    const ran = await within(LIMIT_MS, 'explain', runInProcess(['explain', '--url', handle.url, '--queue', 'race-room', '--json']));
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal((JSON.parse(ran.stdout) as { replays: unknown[] }).replays.length, 2);
    assert.equal(await evicted(redis), before);
    assert.deepEqual(await keyspaceDigest(redis), foreign);
  });

  test("the policy switched to allkeys-lru and maxmemory lowered mid-run (the run began under noeviction): exit 3 naming the evictions, the run's keys gone", async () => {
    const before = await evicted(redis);
    const cli = runInProcess(['--url', handle.url, '--mode', 'loop', '--jobs', '2000', '--probe-delay', '20', '--queue', 'race-switched']);
    await until(LIMIT_MS, 'the run seeded', async () => (await redis.exists('emq:{race-switched}:active')) === 1);
    const memory = parseMemoryInfo(await redis.info('memory'));
    await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
    await redis.call('CONFIG', 'SET', 'maxmemory', String(memory.usedMemory - memory.notCountedForEvict - 256 * 1024));
    const result = await within(LIMIT_MS, 'the stopped run', cli);
    assert.ok((await evicted(redis)) > before, 'the server evicted');
    await redis.call('CONFIG', 'SET', 'maxmemory', '0');
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      oneErrorLine(result.stderr) ?? '',
      /^emq-race: the server at redis:\/\/127\.0\.0\.1:\d+ evicted \d+ keys? while the run was live \(maxmemory-policy allkeys-lru\): the run stopped at once and removed its own keys/,
    );
    assert.equal(result.stdout, '');
    assert.deepEqual(await queueKeysLeft(redis, 'race-switched'), []);
  });

  test("CONFIG RESETSTAT mid-run while another client fills the server: the evictions still counted, exit 3, the run's keys gone", async () => {
    // Evictions before the run, so that a count compared with its start would hide the later ones.
    const memory = parseMemoryInfo(await redis.info('memory'));
    await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
    await redis.call('CONFIG', 'SET', 'maxmemory', String(memory.usedMemory - memory.notCountedForEvict + 2 * 1024 * 1024));
    for (let round = 0; (await evicted(redis)) < 2000; round++) await fill(redis, `early:${round}`, 1000, 1000);
    const base = await evicted(redis);
    await redis.call('CONFIG', 'SET', 'maxmemory', '0');
    const early = (await allKeys(redis)).filter((key) => key.startsWith('early:'));
    for (let at = 0; at < early.length; at += 1000) await redis.unlink(...early.slice(at, at + 1000));
    const room = parseMemoryInfo(await redis.info('memory'));
    await redis.call('CONFIG', 'SET', 'maxmemory', String(room.usedMemory - room.notCountedForEvict + 6 * 1024 * 1024));

    const cli = runInProcess(['--url', handle.url, '--mode', 'loop', '--jobs', '2000', '--probe-delay', '20', '--queue', 'race-reset']);
    await until(LIMIT_MS, 'the run seeded', async () => (await redis.exists('emq:{race-reset}:active')) === 1);
    await redis.call('CONFIG', 'RESETSTAT');
    for (let round = 0; (await evicted(redis)) === 0; round++) await fill(redis, `late:${round}`, 200, 1000);
    const result = await within(LIMIT_MS, 'the stopped run', cli);
    const after = await evicted(redis);
    await redis.call('CONFIG', 'SET', 'maxmemory', '0');
    assert.ok(after > 0 && after < base, `the scenario: fewer evictions since the reset (${after}) than before it (${base})`);
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      oneErrorLine(result.stderr) ?? '',
      /^emq-race: the server at redis:\/\/127\.0\.0\.1:\d+ evicted \d+ keys? while the run was live \(maxmemory-policy allkeys-lru, counted across a CONFIG RESETSTAT\)/,
    );
    assert.equal(result.stdout, '');
    assert.deepEqual(await queueKeysLeft(redis, 'race-reset'), []);
  });

  test('FLUSHALL by another client mid-run: exit 3 naming the vanished keys, no strategy blamed, no result rows, nothing of the run left', async () => {
    const cli = runInProcess([
      '--url',
      handle.url,
      '--mode',
      'loop',
      '--jobs',
      '2000',
      '--probe-delay',
      '20',
      '--queue',
      'race-flushed',
      '--json',
      '--expect',
      'loop=clean',
    ]);
    await until(LIMIT_MS, 'the run sweeping', async () => (await redis.llen('emq:{race-flushed}:pending')) > 0);
    await redis.flushall();
    const result = await within(LIMIT_MS, 'the stopped run', cli);
    assert.equal(result.code, 3, result.stderr);
    const line = oneErrorLine(result.stderr) ?? '';
    assert.match(
      line,
      /^emq-race: the keys of queue race-flushed vanished from the server at redis:\/\/127\.0\.0\.1:\d+ while the run was live \(emq:\{race-flushed\}:owner, .*gone\): another client removed them \(FLUSHALL, FLUSHDB or DEL\) or the server evicted them; .*no strategy's doing/,
    );
    assert.doesNotMatch(line, /lostJobs|expect|missed/);
    const json = JSON.parse(result.stdout) as { error?: { exit: number }; runs?: unknown };
    assert.equal(json.error?.exit, 3);
    assert.equal(json.runs, undefined, 'no result rows');
    assert.deepEqual(await allKeys(redis), [], 'keys the in-flight sweeps wrote after the flush are removed too');
  });

  test("a --script that runs FLUSHALL: the line names the user's script among the causes, and blames no strategy", async () => {
    const script = join(tempDir('emq-flushing-script-'), 'flushing.lua');
    writeFileSync(script, 'return redis.call("FLUSHALL")\n');
    const result = await within(
      LIMIT_MS,
      'the stopped run',
      runInProcess(['--url', handle.url, '--script', script, '--mode', 'script', '--jobs', '10', '--queue', 'race-self-flushed']),
    );
    assert.equal(result.code, 3, result.stderr);
    const line = oneErrorLine(result.stderr) ?? '';
    assert.match(
      line,
      /^emq-race: the keys of queue race-self-flushed vanished from the server at redis:\/\/127\.0\.0\.1:\d+ while the run was live \(.*gone\): the sweep script \(--script\) removed them \(a FLUSHALL, FLUSHDB or DEL of the queue's keys in it\), or another client did, or the server evicted them; /,
    );
    assert.doesNotMatch(line, /no strategy's doing/);
    assert.equal(result.stdout, '');
    assert.deepEqual(await queueKeysLeft(redis, 'race-self-flushed'), []);
  });

  test('another client deletes one job hash in the middle of the queue mid-run: exit 3 naming it, no strategy blamed, nothing of the run left', async () => {
    const foreign = await keyspaceDigest(redis);
    const cli = runInProcess([
      '--url',
      handle.url,
      '--mode',
      'loop',
      '--jobs',
      '40',
      '--probe-delay',
      '20',
      '--queue',
      'race-holed',
      '--json',
      '--expect',
      'loop=clean',
    ]);
    await until(LIMIT_MS, 'the run sweeping', async () => (await redis.llen('emq:{race-holed}:pending')) > 0);
    // Neither the first job nor the last, which the run checks by name: one in the middle. A hole
    // shows only when the run reads the server back at its end: the run goes on (about a second
    // of probe delays here, still far longer than the one DEL, sent as sweeping starts).
    assert.equal(await redis.del('emq:{race-holed}:job:20'), 1);
    const result = await within(LIMIT_MS, 'the stopped run', cli);
    assert.equal(result.code, 3, result.stderr);
    const line = oneErrorLine(result.stderr) ?? '';
    assert.match(line, /^emq-race: the keys of queue race-holed vanished .*\(emq:\{race-holed\}:job:20 gone\): .*no strategy's doing/);
    assert.doesNotMatch(line, /lostJobs|expect|missed/);
    const json = JSON.parse(result.stdout) as { error?: { exit: number }; runs?: unknown };
    assert.equal(json.error?.exit, 3);
    assert.equal(json.runs, undefined, 'no result rows');
    assert.deepEqual(await queueKeysLeft(redis, 'race-holed'), []);
    assert.deepEqual(await keyspaceDigest(redis), foreign);
  });

  test('another client deletes 1,200 job hashes mid-run: the line counts every one, past the thousand it checks again', async () => {
    const cli = runInProcess([
      '--url',
      handle.url,
      '--mode',
      'atomic',
      '--jobs',
      '1500',
      '--live',
      '0',
      '--sweepers',
      '1',
      '--interval',
      '60',
      '--queue',
      'race-holes',
    ]);
    await until(LIMIT_MS, 'the run sweeping', async () => (await redis.llen('emq:{race-holes}:pending')) > 0);
    // In one call, while the sweeper pauses between sweeps: neither the first job nor the last.
    const ids = Array.from({ length: 1200 }, (_, i) => i + 2);
    assert.equal(await redis.unlink(...ids.map((id) => `emq:{race-holes}:job:${id}`)), 1200);
    const result = await within(LIMIT_MS, 'the stopped run', cli);
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      oneErrorLine(result.stderr) ?? '',
      /\(emq:\{race-holes\}:job:\d+, emq:\{race-holes\}:job:\d+, emq:\{race-holes\}:job:\d+ and 1,197 more gone\)/,
    );
    assert.deepEqual(await queueKeysLeft(redis, 'race-holes'), []);
  });

  test('another client deletes the owner marker mid-run: exit 3 naming it, no "by hand" blame, nothing left for clean', async () => {
    const foreign = await keyspaceDigest(redis);
    const cli = runInProcess(['--url', handle.url, '--mode', 'loop', '--jobs', '2000', '--probe-delay', '20', '--queue', 'race-unmarked']);
    await until(LIMIT_MS, 'the run sweeping', async () => (await redis.llen('emq:{race-unmarked}:pending')) > 0);
    await redis.del('emq:{race-unmarked}:owner');
    const result = await within(LIMIT_MS, 'the stopped run', cli);
    assert.equal(result.code, 3, result.stderr);
    const line = oneErrorLine(result.stderr) ?? '';
    assert.match(line, /^emq-race: the keys of queue race-unmarked vanished .*\(emq:\{race-unmarked\}:owner gone\)/);
    assert.doesNotMatch(line, /by hand/);
    assert.deepEqual(await queueKeysLeft(redis, 'race-unmarked'), []);
    assert.deepEqual(await keyspaceDigest(redis), foreign);
  });
});

/**
 * The memory guard on a small server that evicts (5 MB, allkeys-lru) and holds other people's
 * keys: a run either is refused before it writes (exit 2) or runs without a single eviction; a
 * multi-mode run, and a grid, are checked whole before their first write; and an eviction caused
 * by someone else while a run is live stops it at once (exit 3), with its keys removed.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { which } from '../../src/server/embedded-server.js';
import { evictedKeys } from '../../src/server/eviction-watch.js';
import { leftBehindHint } from '../../src/queue/cleanup.js';
import { checkRunMemory } from '../../src/queue/memory-guard.js';
import { memoryTraits } from '../../src/sweepers/strategies.js';
import { modeRun } from '../helpers/run-result.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine, until, within } from '../helpers/cli-process.js';
import { keyspaceDigest } from '../helpers/keyspace.js';
import { SERVER_KINDS } from '../helpers/servers.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { fillUnrelated } from '../helpers/unrelated-data.js';

const FOREIGN_KEYS = 6000;
const LIMIT_MS = 60_000;
/** The commands a refused run may send for its queues before it writes: reads of the up-front check. */
const READ_ONLY = /^(get|scan) /i;

async function fillForeign(redis: Redis, count: number, prefix = 'foreign'): Promise<void> {
  for (let at = 0; at < count; at += 500) {
    const pipeline = redis.pipeline();
    for (let i = at; i < Math.min(count, at + 500); i++) pipeline.set(`${prefix}:${i}`, 'v'.repeat(100));
    await pipeline.exec();
  }
}

const evicted = async (redis: Redis): Promise<number> => evictedKeys(await redis.info('stats'));

/** The server's own digest of its whole keyspace: every key, its value and its expiry. */
const serverDigest = async (redis: Redis): Promise<string> => String(await redis.call('DEBUG', 'DIGEST'));

for (const kind of SERVER_KINDS) {
  describe(`memory guard [${kind.kind}]`, { skip: which(kind.bin) === undefined ? `${kind.bin} is not installed` : false }, () => {
    let server: TestServer;
    let redis: Redis;
    let foreign: Map<string, string>;
    let foreignDigest: string;
    before(async () => {
      // Kept by `sh` (test-server.ts): the tool's embedded server is not what this file tests. DEBUG
      // DIGEST (local connections only) lets the server check its keyspace whole.
      server = await startTestServer(kind.bin, ['--maxmemory', '5mb', '--maxmemory-policy', 'allkeys-lru', '--enable-debug-command', 'local']);
      redis = await connect(parseServerUrl(server.url));
      await fillUnrelated(redis);
      await fillForeign(redis, FOREIGN_KEYS);
      foreign = await keyspaceDigest(redis);
      foreignDigest = await serverDigest(redis);
    });

    /**
     * Every foreign key intact, nothing else left: the server's digest of its whole keyspace as it
     * was after the fill (one call, where reading thousands of keys back costs a round trip of
     * DUMPs each time), and only where that differs the key-by-key comparison, which names the key.
     */
    const assertForeignIntact = async (): Promise<void> => {
      if ((await serverDigest(redis)) === foreignDigest) return;
      assert.deepEqual(await keyspaceDigest(redis), foreign);
    };
    after(async () => {
      redis?.disconnect();
      await server?.stop();
    });

    const scenarios = [
      ['--queues', '4', '--jobs', '6000', '--mode', 'atomic'],
      ['--queues', '3', '--trials', '3', '--jobs', '3000'],
      ['--pending', 'zset', '--jobs', '7500'],
      ['--jobs', '2000', '--sweepers', '4'],
    ];
    for (const args of scenarios) {
      test(`${args.join(' ')}: refused before writing (exit 2) or run without an eviction, every foreign key intact`, async () => {
        const before = await evicted(redis);
        const result = await within(LIMIT_MS, 'the run', runCli(['--url', server.url, ...args]));
        if (result.code === 2) {
          assert.match(
            oneErrorLine(result.stderr) ?? '',
            /needs about [\d.]+ MB on the server at redis:\/\/127\.0\.0\.1:\d+ at its peak \([\d.]+ MB of job data at \d+ bytes a job as measured there, .*\), but only [\d.]+ MB is left below its maxmemory of 5\.0 MB; under maxmemory-policy allkeys-lru the server would evict other keys \(yours\) to make room\. Refusing, nothing written/,
          );
          assert.equal(result.stdout, '');
        } else {
          assert.equal(result.code, 0, result.stderr);
        }
        assert.equal(await evicted(redis), before, 'the server evicted keys');
        await assertForeignIntact();
      });
    }

    test('while the measuring slice holds keys, a third signal owes the line that removes them; once it is gone, nothing', async () => {
      const owed: { line: string; settled: boolean }[] = [];
      const interrupts = {
        signal: new AbortController().signal,
        owe: (line: string) => {
          const entry = { line, settled: false };
          owed.push(entry);
          return () => void (entry.settled = true);
        },
      };
      const run = modeRun({ queue: 'race-owed', jobs: 500, live: 50 });
      await checkRunMemory([{ where: server.url, redis, moments: [[run]], probeQueue: 'race-owed-m' }], memoryTraits, interrupts);
      assert.deepEqual(
        owed.map(({ line, settled }) => ({ line, settled })),
        [{ line: leftBehindHint('race-owed-m'), settled: true }],
      );
      assert.deepEqual(await redis.keys('emq:{race-owed*'), [], 'the slice is gone');
      await assertForeignIntact();
    });

    test("the measuring queue taken by somebody else's key: refused (exit 2), naming it as the guard's, nothing written", async () => {
      await redis.set('emq:{race-guarded-m}:job:1', 'theirs');
      try {
        const result = await runCli(['--url', server.url, '--queue', 'race-guarded', '--mode', 'atomic', '--jobs', '500']);
        assert.equal(result.code, 2, result.stderr);
        assert.equal(
          oneErrorLine(result.stderr),
          "emq-race: the memory guard measures what a job costs in a throwaway queue named after the run's, race-guarded-m: queue race-guarded-m already has keys (emq:{race-guarded-m}:job:1): refusing to write over them; pick another --queue",
        );
        assert.deepEqual(await redis.keys('emq:{race-guarded*'), ['emq:{race-guarded-m}:job:1'], 'nothing written beside their key');
      } finally {
        await redis.unlink('emq:{race-guarded-m}:job:1');
      }
    });

    test('the guard is no blanket refusal: a run that fits runs', async () => {
      const before = await evicted(redis);
      const result = await runCli(['--url', server.url, '--jobs', '2000', '--mode', 'atomic', '--json']);
      assert.equal(result.code, 0, result.stderr);
      assert.equal((JSON.parse(result.stdout) as { runs: unknown[] }).runs.length, 1);
      assert.equal(await evicted(redis), before);
      await assertForeignIntact();
    });

    test('--keep adds the kept runs up: trials that fit one at a time are refused together when each stays, before the first writes', async () => {
      const before = await evicted(redis);
      const trials = ['--mode', 'atomic', '--jobs', '2000', '--trials', '6', '--queue', 'race-kept'];
      const alone = await within(LIMIT_MS, 'the trials, each removed', runCli(['--url', server.url, ...trials]));
      assert.equal(alone.code, 0, alone.stderr);
      const kept = await within(LIMIT_MS, 'the trials, each kept', runCli(['--url', server.url, ...trials, '--keep']));
      assert.equal(kept.code, 2, kept.stderr);
      assert.match(
        oneErrorLine(kept.stderr) ?? '',
        /^emq-race: \d queues on the server at once with --keep, the earlier modes' and trials' kept beside the last \(atomic\), the largest --jobs 2000 \(with 200 live jobs\), needs about [\d.]+ MB .* Refusing, nothing written: lower --jobs, race fewer modes or --trials, or leave out --keep, or use a server with more room$/,
      );
      assert.equal(kept.stdout, '');
      assert.equal(await evicted(redis), before, 'the server evicted keys');
      await assertForeignIntact();
    });

    test('a multi-mode run is checked whole: a later mode that would not fit stops the run before the first mode writes', async () => {
      // The loop runs first on 500 jobs (fits); atomic would run on 9,000 (does not).
      const monitor = await connect(parseServerUrl(server.url));
      const seen: string[] = [];
      const feed = await monitor.monitor();
      feed.on('monitor', (_time: string, args: string[]) => seen.push(args.join(' ')));
      try {
        const result = await runCli(['--url', server.url, '--mode', 'loop,atomic', '--jobs', '9000', '--loop-jobs', '500', '--queue', 'race-whole']);
        assert.equal(result.code, 2, result.stderr);
        assert.match(oneErrorLine(result.stderr) ?? '', /^emq-race: atomic on --jobs 9000 \(with 900 live jobs\) needs about/);
        await sleep(200);
        assert.deepEqual(
          // Reads are allowed: the up-front check reads a later queue's marker and scans for its keys.
          seen.filter((line) => !READ_ONLY.test(line) && /emq:\{race-whole-(loop|atomic)\}/.test(line)),
          [],
          'a mode wrote before the plan was checked',
        );
        assert.ok(
          seen.some((line) => /emq:\{race-whole-atomic-m\}/.test(line)),
          'the slice was measured',
        );
      } finally {
        feed.disconnect();
        monitor.disconnect();
      }
      await assertForeignIntact();
    });

    test('a grid is checked whole: a cell that would not fit refuses the grid before its first cell writes, and no page is made', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'emq-grid-memory-'));
      const html = join(dir, 'g.html');
      const monitor = await connect(parseServerUrl(server.url));
      const seen: string[] = [];
      const feed = await monitor.monitor();
      feed.on('monitor', (_time: string, args: string[]) => seen.push(args.join(' ')));
      try {
        // The first cell (500 jobs) fits; the last (9,000) does not.
        const result = await within(
          LIMIT_MS,
          'the grid',
          runCli(['grid', '--url', server.url, '--vary', 'jobs=500,9000', '--vary', 'sweepers=1,2', '--mode', 'atomic', '--json', '--html', html]),
        );
        assert.equal(result.code, 2, result.stderr);
        const json = JSON.parse(result.stdout) as { error: { exit: number; message: string } };
        assert.equal(json.error.exit, 2);
        // The axis set the jobs, and is what to lower: a --jobs beside it would be refused.
        assert.match(
          json.error.message,
          /^atomic on 9000 jobs \(--vary jobs\) \(with 900 live jobs\) needs about [\d.]+ MB .* Refusing, nothing written: lower the values of --vary jobs, or use a server with more room$/,
        );
        assert.doesNotMatch(result.stderr, /cell \d+\/\d+/, 'no cell ran');
        assert.equal(existsSync(html), false, 'no page of a grid that never ran');
        await sleep(200);
        assert.deepEqual(
          seen.filter((line) => !READ_ONLY.test(line) && /emq:\{race-[0-9a-f]{8}(-atomic)?\}/.test(line)),
          [],
          'a cell wrote before the grid was checked',
        );
        assert.ok(
          seen.some((line) => /emq:\{race-[0-9a-f]{8}-m\}/.test(line)),
          'the slice was measured',
        );
      } finally {
        feed.disconnect();
        monitor.disconnect();
        rmSync(dir, { recursive: true, force: true });
      }
      await assertForeignIntact();
    });

    test('a user without MEMORY USAGE: one line saying what to grant, exit 3, the measuring slice removed', async () => {
      await redis.call('ACL', 'SETUSER', 'nomemory', 'on', '>pw-nomemory', '~*', '&*', '+@all', '-memory');
      const result = await runCli(['--url', server.url.replace('redis://', 'redis://nomemory:pw-nomemory@'), '--jobs', '500', '--mode', 'atomic']);
      assert.equal(result.code, 3, result.stderr);
      assert.match(
        oneErrorLine(result.stderr) ?? '',
        /^emq-race: permission denied on redis:\/\/\S+ \(MEMORY USAGE\): .* grant it with ACL SETUSER <user> \+memory\|usage/,
      );
      await assertForeignIntact();
    });

    test('an eviction while the run is live (someone else filling the server) stops it: exit 3, the count named, its keys gone, what --keep kept before it named', async () => {
      const before = await evicted(redis);
      // In this process: what is checked is the run's own stop, not a process's. This test comes
      // last, as it evicts. A small atomic run goes first and is kept; the loop is the live one.
      const run = runCli([
        '--url',
        server.url,
        '--mode',
        'atomic,loop',
        '--jobs',
        '200',
        '--loop-jobs',
        '2000',
        '--probe-delay',
        '20',
        '--queue',
        'race-evicting',
        '--keep',
      ]);
      // Once the run has seeded, someone else writes until the server evicts.
      await until(LIMIT_MS, 'the run seeded', async () => (await redis.exists('emq:{race-evicting-loop}:active')) === 1);
      for (let round = 0; (await evicted(redis)) === before && round < 400; round++) await fillForeign(redis, 500, `late:${round}`);
      const result = await within(LIMIT_MS, 'the stopped run', run);
      assert.equal(result.code, 3, result.stderr);
      assert.match(
        oneErrorLine(result.stderr) ?? '',
        /^emq-race: the server at redis:\/\/127\.0\.0\.1:\d+ evicted \d+ keys? while the run was live \(maxmemory-policy allkeys-lru\): the run stopped at once and removed its own keys, .*; the runs that finished before it kept \(--keep\) .*race-evicting-atomic/,
      );
      assert.equal(result.stdout, '');
      const [, left] = await redis.scan('0', 'MATCH', 'emq:{race-evicting-loop}*', 'COUNT', 100_000);
      assert.deepEqual(left, []);
    });
  });
}

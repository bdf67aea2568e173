/**
 * The memory guard over a queue library's run, on a small server that evicts (5 MB, allkeys-lru)
 * and holds other people's keys: the run is weighed in the library's own layout (its bytes a job,
 * measured on real runs: src/libraries/table.ts), so a run that would not fit is refused before
 * it sends a single command naming a key of the tool's (no queue, no measuring slice: the MONITOR
 * feed shows none), exit 2, one line; and a run that fits goes ahead without an eviction, every
 * foreign key intact.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { evictedKeys } from '../../src/server/eviction-watch.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { literal } from '../helpers/literal.js';
import { keyspaceDigest } from '../helpers/keyspace.js';
import { forEachServer } from '../helpers/servers.js';

/** The project's folder, whose node_modules holds the libraries the tests race. */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs far beyond 5 MB in each library's layout (BullMQ's at 480 bytes a job, node-resque's at 832 and 768 a duplicate, Bee-Queue's at 256). */
const TOO_LARGE = [
  { args: ['--lib', 'bullmq', '--mode', 'bullmq', '--jobs', '20000'], library: 'bullmq', subject: 'bullmq on --jobs 20000' },
  { args: ['--mode', 'node-resque', '--loop-jobs', '1000'], library: 'node-resque', subject: 'node-resque on --loop-jobs 1000' },
  { args: ['--lib', 'bee-queue', '--mode', 'bee-queue', '--jobs', '40000'], library: 'bee-queue', subject: 'bee-queue on --jobs 40000' },
];

forEachServer(
  'the memory guard over a library run',
  (handle) => {
    let redis: Redis;
    let foreign: Map<string, string>;
    before(async () => {
      redis = await connect(parseServerUrl(handle.url));
      for (let i = 0; i < 200; i++) await redis.set(`foreign:${i}`, 'v'.repeat(100));
      foreign = await keyspaceDigest(redis);
    });
    after(() => redis?.disconnect());

    for (const { args, library, subject } of TOO_LARGE) {
      test(`${args.join(' ')}: refused in ${library}'s layout before any key of the tool's is touched (exit 2)`, async () => {
        const evicted = evictedKeys(await redis.info('stats'));
        const monitor = await connect(parseServerUrl(handle.url));
        const seen: string[] = [];
        // A command of the test's own, sent once the run is over: the feed shows commands in the
        // order the server ran them, so once it shows this one it has shown every command of the run.
        const marker = `emq-race-test-marker-${Math.random().toString(16).slice(2)}`;
        let markerSeen!: () => void;
        const fedThrough = new Promise<void>((resolve) => (markerSeen = resolve));
        const feed = await monitor.monitor();
        feed.on('monitor', (_time: string, argv: string[]) => {
          if (argv.includes(marker)) markerSeen();
          else seen.push(argv.join(' '));
        });
        try {
          const result = await runCli(['--url', handle.url, '--lib-from', PROJECT, '--sweepers', '8', ...args]);
          assert.equal(result.code, 2, result.stderr);
          assert.equal(result.stdout, '');
          assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
          assert.match(
            oneErrorLine(result.stderr) ?? '',
            new RegExp(
              `^emq-race: ${literal(subject)} needs about [\\d.]+ MB on the server at redis://127\\.0\\.0\\.1:\\d+ at its peak \\([\\d.]+ MB of job data at \\d+ bytes a job in ${library}'s own layout, \\d+ connections, .*\\), but only [\\d.]+ MB is left below its maxmemory of 5\\.0 MB; under maxmemory-policy allkeys-lru the server would evict other keys \\(yours\\) to make room\\. Refusing, nothing written`,
            ),
          );
          await redis.echo(marker);
          await fedThrough;
          assert.deepEqual(
            seen.filter((line) => /emq:/.test(line)),
            [],
            'the refused run touched a key of the tool (its queue or a measuring slice)',
          );
        } finally {
          feed.disconnect();
          monitor.disconnect();
        }
        assert.equal(evictedKeys(await redis.info('stats')), evicted);
        assert.deepEqual(await keyspaceDigest(redis), foreign);
      });
    }

    test('a library run that fits goes ahead, without an eviction, leaving only the foreign keys', async () => {
      const evicted = evictedKeys(await redis.info('stats'));
      const result = await runCli([
        '--url',
        handle.url,
        '--lib',
        'bullmq',
        '--lib-from',
        PROJECT,
        '--mode',
        'bullmq',
        '--sweepers',
        '8',
        '--jobs',
        '500',
        '--json',
      ]);
      assert.equal(result.code, 0, result.stderr);
      const [run] = (JSON.parse(result.stdout) as { runs: { mode: string; jobs: number; recoveries: number }[] }).runs;
      assert.equal(run?.mode, 'bullmq');
      assert.equal(run?.recoveries, 500);
      assert.equal(evictedKeys(await redis.info('stats')), evicted);
      assert.deepEqual(await keyspaceDigest(redis), foreign);
    });
  },
  ['--maxmemory', '5mb', '--maxmemory-policy', 'allkeys-lru'],
);

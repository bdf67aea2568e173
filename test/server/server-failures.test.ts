/**
 * A server that dies mid-run, one that is a read-only replica, and one whose maxmemory the run
 * would not fit: each ends in one clear line, a documented exit code, within a bounded time (a
 * generous guard against hangs, not a performance check), and nobody else's key is touched.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { findServerBinary, startEmbeddedServer, which, type EmbeddedServer } from '../../src/server/embedded-server.js';
import { existsSync } from 'node:fs';
import { describeServerError, serverError } from '../../src/shared/errors.js';
import { cleanUpRun } from '../../src/queue/cleanup.js';
import { queueKeys } from '../../src/queue/keys.js';
import { sessionFor } from '../../src/server/session.js';
import { once } from 'node:events';
import { alive, commandLine, descendants } from '../helpers/processes.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { oneErrorLine, startCli, until, within } from '../helpers/cli-process.js';
import { SERVER_KINDS } from '../helpers/servers.js';
import { unrelatedState, useFilledServer, type UnrelatedState } from '../helpers/unrelated-data.js';

const LIMIT_MS = 15_000;

for (const kind of SERVER_KINDS) {
  describe(`server failures [${kind.kind}]`, { skip: which(kind.bin) === undefined ? `${kind.bin} is not installed` : false }, () => {
    const lostServerCases = [
      { phase: 'sweeping', args: ['--mode', 'loop', '--jobs', '2000', '--sweepers', '4', '--probe-delay', '2'], key: 'pending' },
      { phase: 'seeding', args: ['--mode', 'atomic', '--jobs', '200000'], key: 'active' },
    ];
    for (const { phase, args, key } of lostServerCases) {
      test(`the server killed while ${phase}: one line naming the clean command, exit 3, no hang`, async () => {
        const server = await startEmbeddedServer({ bin: kind.bin });
        let watcher: Redis | undefined;
        try {
          watcher = await connect(parseServerUrl(server.url));
          const cli = startCli(['--url', server.url, '--queue', 'race-lost', ...args]);
          // Asked every 10 ms while the CLI starts (seconds): either phase lasts far longer than
          // that (the loop's probes held 2 ms each; 40 seeding calls of 5,000 jobs).
          await within(
            LIMIT_MS,
            phase,
            (async () => {
              while ((await watcher.exists(`emq:{race-lost}:${key}`)) === 0) await sleep(10);
            })(),
          );
          watcher.disconnect();
          process.kill(server.pid, 'SIGKILL');
          const result = await within(LIMIT_MS, 'the run after its server died', cli.done);
          assert.equal(result.code, 3, result.stderr);
          const line = oneErrorLine(result.stderr);
          assert.ok(line, `one line, no stack trace or unhandled rejection: ${result.stderr}`);
          assert.match(line, /lost the connection to the server at redis:\/\/127\.0\.0\.1:\d+; .*emq-race clean --queue race-lost/);
        } finally {
          watcher?.disconnect();
          await server.stop();
        }
      });
    }

    test('explore, the server killed during its second mode: what that mode explored is reported, the third named not started; exit 3', async () => {
      const server = await startEmbeddedServer({ bin: kind.bin });
      let watcher: Redis | undefined;
      try {
        watcher = await connect(parseServerUrl(server.url));
        const commands = async (): Promise<number> => Number(/total_commands_processed:(\d+)/.exec(await (watcher as Redis).info('stats'))?.[1]);
        const cli = startCli(['explore', '--url', server.url, '--mode', 'atomic,loop,watch', '--json']);
        // The loop's exploration has begun once its queue shows; a few hundred commands later it has
        // made executions (its whole exploration takes thousands).
        await until(LIMIT_MS, "the loop's exploration", async () => (await (watcher as Redis).keys('emq:{*-loop-0}:*')).length > 0, 5);
        const from = await commands();
        await until(LIMIT_MS, "the loop's first executions", async () => (await commands()) > from + 300, 5);
        watcher.disconnect();
        process.kill(server.pid, 'SIGKILL');
        const result = await within(LIMIT_MS, 'explore after its server died', cli.done);
        assert.equal(result.code, 3, result.stderr);
        const json = JSON.parse(result.stdout) as {
          complete: boolean;
          modes: { mode: string; complete: boolean; executions: number }[];
          stopped?: { exit: number };
          notStarted?: string[];
        };
        assert.equal(json.complete, false);
        assert.deepEqual(
          json.modes.map((m) => [m.mode, m.complete]),
          [
            ['atomic', true],
            ['loop', false],
          ],
        );
        assert.ok((json.modes[1]?.executions ?? 0) > 0, 'the executions made before the failure');
        assert.equal(json.stopped?.exit, 3);
        assert.deepEqual(json.notStarted, ['watch']);
        assertMatchesSchema(json, 'explore --json, its server lost');
      } finally {
        watcher?.disconnect();
        await server.stop();
      }
    });

    test('a read-only replica: one line, exit 3, nothing written', async () => {
      const primary = await startEmbeddedServer({ bin: kind.bin });
      const replica = await startEmbeddedServer({ bin: kind.bin, extraArgs: ['--replicaof', '127.0.0.1', String(primary.port)] });
      try {
        const result = await within(LIMIT_MS, 'the run', runCli(['--url', replica.url, '--jobs', '100']));
        assert.equal(result.code, 3, result.stderr);
        assert.match(oneErrorLine(result.stderr) ?? '', /read-only replica/);
      } finally {
        await replica.stop();
        await primary.stop();
      }
    });

    test("the embedded server's keeper killed as the session opens: its death is the error, not the connection it cost", async () => {
      const server = await startEmbeddedServer({ bin: kind.bin });
      try {
        const keeper = descendants(process.pid).find((pid) => commandLine(pid).includes('server-keeper.sh') && descendants(pid).includes(server.pid));
        assert.ok(keeper, 'the keeper of the server just started');
        process.kill(keeper, 'SIGKILL');
        await within(LIMIT_MS, 'the keeper noticed gone', once(server.lost, 'abort'));
        await assert.rejects(sessionFor(parseServerUrl(server.url), server), (err: Error) => {
          assert.match(
            err.message,
            /^the embedded server's keeper process died \(SIGKILL\); the tool stopped its server at redis:\/\/127\.0\.0\.1:\d+ itself$/,
          );
          return true;
        });
        // Killed by the tool (SIGKILL): gone once the kernel has reaped it.
        await until(LIMIT_MS, 'the server to end', () => !alive(server.pid));
      } finally {
        await server.stop();
      }
    });

    test("keys a failed run could not delete on the tool's own server: no line sends the user to a server that goes with them", async () => {
      const server = await startEmbeddedServer({ bin: kind.bin });
      try {
        const session = await sessionFor(parseServerUrl(server.url), server);
        assert.equal(session.target.own, 'command', 'a session on an embedded server knows it');
        assert.equal(parseServerUrl(server.url).own, undefined, 'a URL alone does not');
        // The admin connection closed: the clean-up cannot reach the keys.
        session.admin.disconnect();
        const ownServer = serverError('the run failed');
        assert.equal(await cleanUpRun(session.admin, queueKeys('race-gone'), 10, ownServer, session.target.display, { serverGoes: true }), undefined);
        assert.equal(ownServer.message, 'the run failed');
        const userServer = serverError('the run failed');
        assert.equal(await cleanUpRun(session.admin, queueKeys('race-gone'), 10, userServer, session.target.display), undefined);
        assert.match(
          userServer.message,
          /^the run failed; the keys of queue race-gone \(emq:\{race-gone\}:\*\) may remain on the server: remove them with emq-race clean --queue race-gone/,
        );
      } finally {
        await server.stop();
      }
    });

    test('a server with AUTH renamed away, given a password: the command named, never the password the server echoes back', async () => {
      // The server's own words: "ERR unknown command 'auth', with args beginning with: '<password>'".
      const server = await startEmbeddedServer({ bin: kind.bin, extraArgs: ['--rename-command', 'AUTH', 'auth-renamed-away'] });
      try {
        for (const url of [`redis://:hunter2secret@127.0.0.1:${server.port}`, `redis://bob:hunter2secret@127.0.0.1:${server.port}`]) {
          const result = await runCli(['--url', url, '--jobs', '10']);
          assert.equal(result.code, 3, result.stderr);
          assert.doesNotMatch(result.stderr + result.stdout, /hunter2secret/);
          assert.match(
            oneErrorLine(result.stderr) ?? '',
            /^emq-race: the server at redis:\/\/\w*:\*\*\*@127\.0\.0\.1:\d+ does not know the command AUTH \(renamed or disabled/,
          );
        }
      } finally {
        await server.stop();
      }
    });

    test('a server at its maxclients: one line saying so and what to do, exit 3, nothing written', async () => {
      const server = await startEmbeddedServer({ bin: kind.bin, extraArgs: ['--maxclients', '6'] });
      try {
        // The tool's own sweepers, BullMQ's workers and node-resque's queues: each refused the same way.
        for (const args of [[], ['--lib', 'bullmq', '--mode', 'bullmq'], ['--lib', 'node-resque']]) {
          const result = await runCli(['--url', server.url, '--jobs', '20', '--sweepers', '16', ...args]);
          assert.equal(result.code, 3, result.stderr);
          assert.equal(
            oneErrorLine(result.stderr),
            `emq-race: the server at ${server.url} refused a connection: it already holds as many clients as its maxclients setting allows; a run opens one per sweeper and a few of its own: race with fewer --sweepers, or raise maxclients`,
            args.join(' '),
          );
          const redis = await connect(parseServerUrl(server.url));
          try {
            assert.equal(await redis.dbsize(), 0);
            // No client of the run goes on knocking once it ended (each knock a rejected connection).
            const rejected = async (): Promise<number> => Number(/rejected_connections:(\d+)/.exec(await redis.info('stats'))?.[1]);
            const before = await rejected();
            await new Promise((resolve) => setTimeout(resolve, 1500));
            assert.equal(await rejected(), before, `${args.join(' ')}: a client of the run still reconnects`);
          } finally {
            redis.disconnect();
          }
        }
      } finally {
        await server.stop();
      }
    });

    describe('maxmemory', () => {
      let server: EmbeddedServer;
      let redis: Redis;
      let initial: UnrelatedState;
      useFilledServer({ bin: kind.bin, extraArgs: ['--maxmemory', '8mb', '--maxmemory-policy', 'allkeys-lru'] }, (started, connected, state) => {
        server = started;
        redis = connected;
        initial = state;
      });

      test('allkeys-lru and a run that would not fit: refused before writing, exit 2, the eviction named', async () => {
        const result = await runCli(['--url', server.url, '--jobs', '100000']);
        assert.equal(result.code, 2, result.stderr);
        const line = oneErrorLine(result.stderr) ?? '';
        assert.match(
          line,
          /--jobs 100000( \(with \d+ live jobs\))? needs about [\d.]+ MB .*maxmemory of 8\.0 MB; under maxmemory-policy allkeys-lru the server would evict other keys/,
        );
        assert.deepEqual(await unrelatedState(redis), initial);
      });

      test('noeviction: refused too, saying the seeding would fail with OOM', async () => {
        await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
        const result = await runCli(['--url', server.url, '--jobs', '100000']);
        assert.equal(result.code, 2, result.stderr);
        assert.match(oneErrorLine(result.stderr) ?? '', /noeviction the seeding would fail halfway with OOM/);
        assert.deepEqual(await unrelatedState(redis), initial);
        await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
      });

      test("the server's own OOM refusal reads as one line", async () => {
        await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
        await redis.call('CONFIG', 'SET', 'maxmemory', '1mb');
        try {
          const err = await redis.set('emq:{race-oom}:owner', 'x').then(
            () => undefined,
            (e: unknown) => e,
          );
          assert.ok(err, 'the server refused the write');
          const line = describeServerError(err, server.url);
          assert.equal(line.exitCode, 3);
          assert.match(
            line.message,
            /^the server at redis:\/\/127\.0\.0\.1:\d+ is out of memory \(maxmemory reached\): command not allowed when used memory > 'maxmemory'/,
          );
        } finally {
          await redis.call('CONFIG', 'SET', 'maxmemory', '8mb');
          await redis.call('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
        }
        assert.deepEqual(await unrelatedState(redis), initial);
      });

      // Both modes on 2,000 jobs: what the run holds on the server is its jobs; two sweepers race
      // the loop as well as four, at half the round trips.
      test('a run that fits runs, and every unrelated key survives it', async () => {
        const result = await runCli(['--url', server.url, '--jobs', '2000', '--sweepers', '2']);
        assert.equal(result.code, 0, result.stderr);
        assert.deepEqual(await unrelatedState(redis), initial);
      });
    });
  });
}

test('no folder for the embedded server (TMPDIR missing, or not a folder): one line saying where and why, exit 3, no stack', async () => {
  const before = process.env.TMPDIR;
  try {
    for (const [dir, why] of [
      ['/nonexistent-emq-race', 'no such folder'],
      ['/etc/hostname', 'not a folder'],
    ] as const) {
      // The system's temporary folder is read from the process's own environment.
      process.env.TMPDIR = dir;
      for (const args of [['--jobs', '10'], ['explain'], ['--jobs', '10', '--json']]) {
        const result = await runCli(args);
        assert.equal(result.code, 3, result.stderr);
        assert.equal(
          oneErrorLine(result.stderr),
          `emq-race: cannot start the embedded server: cannot make its folder in ${dir} (TMPDIR): ${why}; point TMPDIR at a folder you can write, or give --url`,
        );
      }
    }
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
});

test('no server on PATH: the line names the install script where this copy of the tool has it, a path that exists', () => {
  const path = process.env.PATH;
  process.env.PATH = tempDir('emq-race-nopath-');
  try {
    assert.throws(
      () => findServerBinary(),
      (err: Error & { exitCode?: number }) => {
        assert.equal(err.exitCode, 3);
        const script = /or run (\S+install-servers\.sh)\)/.exec(err.message)?.[1];
        assert.ok(script?.startsWith('/') && existsSync(script), err.message);
        return true;
      },
    );
  } finally {
    process.env.PATH = path;
  }
});

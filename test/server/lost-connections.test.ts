/**
 * A run one of whose own connections is closed under it (CLIENT KILL) on a server that still
 * answers: the eviction watch opens another and still counts what was evicted meanwhile, or stops
 * the run when it cannot; a lost admin connection's clean-up goes over a fresh one, and names
 * `clean` only when that fails too. The run is held at its first sweep call (held-call.ts) while
 * the test kills a connection, found by CLIENT LIST: the run opens its admin connection first,
 * its eviction watch next (cli/race-report.ts).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { readmeAclRules, userUrl } from '../helpers/acl.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { oneErrorLine, until, within } from '../helpers/cli-process.js';
import { holdCall, holdFirst } from '../helpers/held-call.js';
import { startProxy } from '../helpers/proxy.js';
import { forOneServerKind } from '../helpers/servers.js';
import { startTestServer } from '../helpers/test-server.js';

const LIMIT_MS = 60_000;

forOneServerKind(import.meta.url, 'a connection of the run closed under it', (handle) => {
  let redis: Redis;
  let queues = 0;
  before(async () => {
    redis = await connect(parseServerUrl(handle.url));
  });
  after(() => redis?.disconnect());

  /** The run's own connections, oldest first: every client but the test's. */
  const runConnections = async (): Promise<string[]> => {
    const own = String(await redis.client('ID'));
    const ids = String(await redis.client('LIST')).match(/^id=\d+/gm) ?? [];
    return ids.map((id) => id.slice(3)).filter((id) => id !== own);
  };
  const left = async (queue: string): Promise<string[]> => (await redis.scan('0', 'MATCH', `emq:{${queue}}*`, 'COUNT', 100_000))[1];
  /** 'present' once for each of the tool's function libraries on the server. */
  const libraries = async (): Promise<string[]> => {
    const list = (await redis.call('FUNCTION', 'LIST', 'LIBRARYNAME', 'emq_race_*')) as unknown[];
    return list.map(() => 'present');
  };

  /**
   * A run of `queue` (as `user`, whose password `during` changes while it is held, when given),
   * held at its first sweep call while `during` acts on its connections (admin first, watch next).
   */
  const heldRun = async (during: (ids: string[], user: string) => Promise<unknown>, queue: string): Promise<CliResult> => {
    const user = `lost-${queues++}`;
    await redis.call('ACL', 'SETUSER', user, 'reset', ...readmeAclRules('pw'));
    const hold = await holdCall(handle.url, ['sweep-stalled']);
    try {
      const run = runCli(['--url', userUrl(hold.url, user, 'pw'), '--mode', 'atomic', '--jobs', '500', '--queue', queue]);
      // A run that ends before its sweep (a refusal) ends the wait too, and fails the test below.
      const ended = await within(LIMIT_MS, 'the sweep held', Promise.race([hold.held.then(() => undefined), run]));
      if (ended) return ended;
      await during(await runConnections(), user);
      hold.release();
      return await within(LIMIT_MS, 'the run', run);
    } finally {
      await hold.close();
    }
  };
  /** How many logins of `user` the server has refused (ACL LOG counts them). */
  const refusedLogins = async (user: string): Promise<number> => {
    const log = (await redis.call('ACL', 'LOG')) as unknown[][];
    const entry = log.map((fields) => new Map(fields.map((v, i) => [fields[i - 1], v]))).find((e) => e.get('username') === user && e.get('reason') === 'auth');
    return Number(entry?.get('count') ?? 0);
  };
  /** New connections of `user` are refused from now on; the open ones stay logged in. */
  const refuseNew = (user: string): Promise<unknown> => redis.call('ACL', 'SETUSER', user, 'resetpass', '>another');

  test('the admin connection killed: the run ends exit 3 with one line, its keys removed over a new connection', async () => {
    const result = await heldRun(([admin]) => redis.client('KILL', 'ID', String(admin)), 'race-lost-admin');
    assert.equal(result.code, 3, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', /^emq-race: lost the connection to the server at \S+; its keys were removed over a new connection$/);
    assert.deepEqual(await left('race-lost-admin'), []);
  });

  /**
   * A run (`args`, through a relay) held at the first call `matches` picks, while the test kills its
   * admin connection (`during` is handed the kill, to act around it), then let go; the run's result.
   */
  const adminKilledWhileHeld = async (
    matches: (chunk: string, sentBefore: string) => boolean,
    args: readonly string[],
    what: string,
    during: (killAdmin: () => Promise<void>) => Promise<void> = (killAdmin) => killAdmin(),
  ): Promise<CliResult> => {
    const hold = await holdFirst(handle.url, matches);
    try {
      const run = runCli(['--url', hold.url, ...args]);
      const ended = await within(LIMIT_MS, what, Promise.race([hold.held.then(() => undefined), run]));
      assert.equal(ended, undefined, ended?.stderr);
      await during(async () => {
        const [admin] = await runConnections();
        await redis.client('KILL', 'ID', String(admin));
      });
      hold.release();
      return await within(LIMIT_MS, 'the run', run);
    } finally {
      await hold.close();
    }
  };
  /** The clean-up's first deletion of `queue`'s job hashes (its lists and sets are gone by then, its hashes not). */
  const jobHashesUnlinked =
    (queue: string) =>
    (chunk: string, sentBefore: string): boolean =>
      new RegExp(`unlink\\r\\n\\$\\d+\\r\\nemq:\\{${queue}\\}:job:\\d+\\r\\n`, 'i').test(sentBefore + chunk);

  test('the admin connection killed in --mode function: the function library is deleted over the new connection too', async () => {
    // Held at the first sweep's FCALL: the library is loaded by then, over the admin connection.
    const result = await adminKilledWhileHeld(
      (chunk, sentBefore) => (sentBefore + chunk).includes('$5\r\nFCALL\r\n'),
      ['--mode', 'function', '--jobs', '500', '--queue', 'race-lost-admin-function'],
      'the sweep held',
      async (killAdmin) => {
        assert.deepEqual(await libraries(), ['present'], 'the library is loaded while the sweep is held');
        await killAdmin();
      },
    );
    assert.equal(result.code, 3, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', /^emq-race: lost the connection to the server at \S+; its keys were removed over a new connection$/);
    assert.doesNotMatch(result.stderr, /FUNCTION DELETE/);
    assert.deepEqual(await libraries(), []);
    assert.deepEqual(await left('race-lost-admin-function'), []);
  });

  test('the admin connection killed during the clean-up itself: the deletion goes on over a new connection, and the run ends as it would have', async () => {
    const queue = 'race-lost-cleanup';
    const result = await adminKilledWhileHeld(
      jobHashesUnlinked(queue),
      ['--mode', 'atomic', '--jobs', '500', '--queue', queue, '--json'],
      'the clean-up held',
      async (killAdmin) => {
        assert.ok((await left(queue)).length > 500, 'the job hashes are there while the deletion is held');
        await killAdmin();
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).runs[0].clean, true);
    assert.deepEqual(await left(queue), []);
  });

  test("the admin connection killed during the clean-up, and another run's claim on the queue by then: no more is deleted, and the line says why", async () => {
    const queue = 'race-lost-cleanup-claimed';
    const result = await adminKilledWhileHeld(
      jobHashesUnlinked(queue),
      ['--mode', 'atomic', '--jobs', '500', '--queue', queue],
      'the clean-up held',
      async (killAdmin) => {
        await killAdmin();
        await redis.set(`emq:{${queue}}:owner`, 'another run of somebody else');
      },
    );
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      oneErrorLine(result.stderr) ?? '',
      new RegExp(`^emq-race: lost the connection to the server at \\S+; another run has claimed queue ${queue} since, so no more of its keys were deleted$`),
    );
    assert.equal(await redis.get(`emq:{${queue}}:owner`), 'another run of somebody else');
    await redis.unlink(...(await left(queue)));
  });

  test('the admin connection killed and no new one let in: the line names emq-race clean, and the keys are there for it', async () => {
    const result = await heldRun(async ([admin], user) => {
      await refuseNew(user);
      await redis.client('KILL', 'ID', String(admin));
    }, 'race-lost-admin-refused');
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      oneErrorLine(result.stderr) ?? '',
      /^emq-race: lost the connection to the server at \S+; the keys of queue race-lost-admin-refused .* emq-race clean --queue race-lost-admin-refused/,
    );
    const keys = await left('race-lost-admin-refused');
    assert.ok(keys.length > 0);
    await redis.unlink(...keys);
  });

  test('the eviction watch killed and no new one let in: the run stops, exit 3, one line, its keys removed', async () => {
    // Node's own warnings go to the process's stderr, past the Io seam: heard here. The watch
    // tries a new connection at every reading, and must not pile a listener on the dead one each time.
    const warnings: string[] = [];
    const hear = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', hear);
    const result = await heldRun(async ([, watch], user) => {
      await refuseNew(user);
      await redis.client('KILL', 'ID', String(watch));
      // More refused logins than the listeners Node lets a socket hold before it warns (10).
      await until(LIMIT_MS, 'the watch trying again', async () => (await refusedLogins(user)) >= 12, 50);
    }, 'race-blind-watch').finally(() => process.off('warning', hear));
    assert.deepEqual(warnings, []);
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      oneErrorLine(result.stderr) ?? '',
      /^emq-race: the eviction watch lost its connection to the server at \S+ and could not read it again \(the server at \S+ refused the credentials .*\): evictions while the run wrote could no longer be seen, so the run stopped and removed its own keys$/,
    );
    assert.deepEqual(await left('race-blind-watch'), []);
  });

  test('the eviction watch killed, then the server evicts before it reads again: the eviction is reported, exit 3, the keys removed', async () => {
    await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const pipeline = redis.pipeline();
      for (let i = 0; i < 20_000; i++) pipeline.set(`others:${i}`, 'v'.repeat(100));
      await pipeline.exec();
      const result = await heldRun(async ([, watch]) => {
        const used = Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1]);
        // The kill and a limit below what the server holds, at once: the server evicts once the
        // transaction is over, with the watch's connection already gone.
        await redis
          .multi()
          .client('KILL', 'ID', String(watch))
          .config('SET', 'maxmemory', String(used - 1_000_000))
          .exec();
      }, 'race-gap-eviction');
      assert.equal(result.code, 3, result.stderr);
      assert.match(
        oneErrorLine(result.stderr) ?? '',
        /^emq-race: the server at \S+ evicted \d+ keys? while the run was live \(maxmemory-policy allkeys-lru\): the run stopped/,
      );
      assert.deepEqual(await left('race-gap-eviction'), []);
    } finally {
      await redis.config('SET', 'maxmemory', '0');
      await redis.config('SET', 'maxmemory-policy', 'noeviction');
    }
  });
});

test('a connection closed while connecting to a server the command already reached is a lost connection, not a hint at TLS', async () => {
  const server = await startTestServer('redis-server');
  // The first connection goes through; every later one is closed at its first command.
  const proxy = await startProxy(Number(new URL(server.url).port), (_chunk, connection) => (connection === 0 ? 'pass' : 'cut'));
  try {
    const target = parseServerUrl(proxy.url);
    const first = await connect(target);
    first.disconnect();
    await assert.rejects(connect(target), (err: Error) => {
      assert.match(err.message, /^lost the connection to the server at redis:\/\/127\.0\.0\.1:\d+/);
      assert.doesNotMatch(err.message, /TLS/);
      return true;
    });
    // A server never reached before: the same close is most likely a TLS port.
    await assert.rejects(connect(parseServerUrl(proxy.url)), /closed the connection while connecting: if it speaks TLS on this port, use a rediss:\/\/ URL/);
  } finally {
    await proxy.close();
    await server.stop();
  }
});

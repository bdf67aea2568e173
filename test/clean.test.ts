/**
 * `emq-race clean` on real servers: it removes a crashed run's keys by name from the job count in
 * its marker, leaves keys a run does not create, refuses a queue whose run is alive here, and
 * refuses `--all` without a terminal unless `--yes`.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { which } from '../src/server/embedded-server.js';
import { BIN } from './helpers/cli.js';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../src/server/connection.js';
import { ownerValue, newOwnerMarker } from '../src/queue/owner-marker.js';
import { runCli } from './helpers/cli.js';
import { oneErrorLine } from './helpers/cli-process.js';
import { allKeys } from './helpers/keyspace.js';
import { forEachServer } from './helpers/servers.js';

forEachServer('clean', (handle) => {
  let redis: Redis;
  before(async () => {
    redis = await connect(parseServerUrl(handle.url));
  });
  after(() => redis?.disconnect());

  /** What a run that crashed after seeding `jobs` jobs leaves (no pending yet), with `marker`. */
  async function crashedRun(queue: string, jobs: number, marker: string): Promise<void> {
    await redis.set(`emq:{${queue}}:owner`, marker);
    for (let id = 1; id <= jobs; id++) {
      await redis.zadd(`emq:{${queue}}:active`, id, String(id));
      await redis.hset(`emq:{${queue}}:job:${id}`, 'state', 'active', 'stalled', 0);
    }
  }

  test("a crashed run's keys go, by name; a key a run does not create stays and is reported", async () => {
    await crashedRun('race-crashed', 25, ownerValue({ ...newOwnerMarker('feedfacefeedface', 25), pid: 0 }));
    await redis.set('emq:{race-crashed}:notes', 'kept by someone');
    const result = await runCli(['clean', '--url', handle.url, '--queue', 'race-crashed']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^removed queue race-crashed: 27 keys$/m);
    assert.match(result.stderr, /left 1 key\(s\) under emq:\{race-crashed\}: that emq-race does not create \(e\.g\. emq:\{race-crashed\}:notes\)/);
    assert.deepEqual(await allKeys(redis), ['emq:{race-crashed}:notes']);
    await redis.unlink('emq:{race-crashed}:notes');
  });

  test('a queue whose run is still alive on this machine is refused', async () => {
    // This test process stands in for the live run.
    await crashedRun('race-alive', 3, ownerValue({ ...newOwnerMarker('0badc0de0badc0de', 3), host: hostname(), pid: process.pid }));
    const result = await runCli(['clean', '--url', handle.url, '--queue', 'race-alive']);
    assert.equal(result.code, 2, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', new RegExp(`in use by a run still going on this machine \\(pid ${process.pid}\\)`));
    assert.equal((await allKeys(redis)).length, 5);
    await redis.unlink(...(await allKeys(redis)));
  });

  test('--all without a terminal refuses unless --yes; with nothing to clean it says so', async () => {
    await crashedRun('race-one', 2, ownerValue({ ...newOwnerMarker('1111222233334444', 2), pid: 0 }));
    const refused = await runCli(['clean', '--url', handle.url, '--all']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stdout, /race-one: 2 jobs, run 1111222233334444/);
    assert.match(oneErrorLine(refused.stderr) ?? '', /no terminal to confirm on, so pass --yes/);
    assert.equal((await allKeys(redis)).length, 4);
    const done = await runCli(['clean', '--url', handle.url, '--all', '--yes']);
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual(await allKeys(redis), []);
    const empty = await runCli(['clean', '--url', handle.url, '--all']);
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stdout, /^no emq-race queues on redis:\/\/127\.0\.0\.1:\d+$/m);
  });

  test('--all on a terminal asks first: "n" keeps the queues, "y" removes them', { skip: which('script') ? false : 'script(1) is not installed' }, async () => {
    await crashedRun('race-asked', 2, ownerValue({ ...newOwnerMarker('5555666677778888', 2), pid: 0 }));
    for (const answer of ['n', 'y']) {
      // script(1) gives the command a pseudo-terminal, as a person at a shell would have.
      const child = spawn('script', ['-qec', `${process.execPath} ${BIN} clean --url ${handle.url} --all`, '/dev/null'], {
        env: { ...process.env, REDIS_URL: '', NO_COLOR: '1' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (/\[y\/N\]/.test(output) && child.stdin.writable) child.stdin.end(`${answer}\r`);
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 0, output);
      assert.match(output, /race-asked: 2 jobs/);
      if (answer === 'n') {
        assert.match(output, /nothing removed/);
        assert.equal((await allKeys(redis)).length, 4);
      } else {
        assert.match(output, /removed queue race-asked: 4 keys/);
        assert.deepEqual(await allKeys(redis), []);
      }
    }
  });
});

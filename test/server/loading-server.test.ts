/**
 * A server still loading its data set after a restart answers almost every command with LOADING,
 * for as long as the load takes (a minute and more on a big one). The tool says so in one line,
 * exit 3, at its first connection, for the race, clean and explain alike, and writes nothing:
 * it does not wait out the load without a word. The load is made slow on purpose
 * (key-load-delay) and the server stopped once the commands have ended.
 */
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine, until, within } from '../helpers/cli-process.js';
import { forEachServer } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** Guards against a hang, not timings. */
const LIMIT_MS = 30_000;
const KEYS = 30_000;

/** Whether a PING on a raw socket is answered with LOADING. */
function answersLoading(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.once('data', (chunk: Buffer) => {
      socket.destroy();
      resolve(chunk.toString().startsWith('-LOADING'));
    });
    socket.once('error', () => resolve(false));
  });
}

forEachServer('a server still loading its data set', (handle, kind) => {
  test('the race, clean and explain: one line saying so, exit 3, nothing written', async () => {
    // A data set to load: the suite's server saves KEYS keys, and its file is copied to a folder of the test's.
    const dir = tempDir('emq-race-loading-');
    const source = await connect(parseServerUrl(handle.url));
    let loading: TestServer | undefined;
    try {
      for (let at = 0; at < KEYS; at += 5_000) await source.mset(...Array.from({ length: 5_000 }, (_, i) => [`loading-test:${at + i}`, 'x'.repeat(16)]).flat());
      await source.call('SAVE');
      const [, from] = (await source.call('CONFIG', 'GET', 'dir')) as [string, string];
      copyFileSync(join(from, 'dump.rdb'), join(dir, 'dump.rdb'));
      await source.unlink(...Array.from({ length: KEYS }, (_, i) => `loading-test:${i}`));
      // 4 ms a key: two minutes of loading, during which the server answers between keys. It is up
      // once it says it loads: it listens first. Kept as every test's server is (test-server.ts).
      loading = await startTestServer(kind.bin, ['--key-load-delay', '4000', '--loading-process-events-interval-bytes', '1024'], {
        dir,
        upLine: /Loading RDB/i,
      });
      const { port, url } = loading;
      await until(LIMIT_MS, 'the server answering LOADING', () => answersLoading(port), 20);
      const line = `emq-race: the server at ${url} is still loading its data set into memory (LOADING): run again once it has loaded (INFO persistence shows loading_eta_seconds)`;
      for (const args of [['--mode', 'atomic', '--jobs', '10'], ['clean', '--all', '--yes'], ['explain']]) {
        const result = await within(LIMIT_MS, `${args[0]} on a loading server`, runCli([...args, '--url', url]));
        assert.equal(result.code, 3, `${args[0]}: ${result.stderr}`);
        assert.equal(oneErrorLine(result.stderr), line, args[0]);
        assert.equal(result.stdout, '', args[0]);
      }
      assert.ok(await answersLoading(port), 'the server was still loading at the end');
    } finally {
      await loading?.stop();
      source.disconnect();
    }
  });
});

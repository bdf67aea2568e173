/**
 * A server without Functions (as before Redis 7), made from a real one by renaming FUNCTION away:
 * `--mode function` alone is refused with one line and exit 3, writing nothing; in a list of
 * modes it is skipped with a note and the other modes run.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { runCli } from '../helpers/cli.js';
import { allKeys } from '../helpers/keyspace.js';
import { forEachServer } from '../helpers/servers.js';

forEachServer(
  'a server without Functions',
  (handle) => {
    let admin: Redis;
    before(async () => {
      admin = new Redis(handle.url);
    });
    after(async () => {
      await admin.quit();
    });

    test('the server really lacks FUNCTION', async () => {
      await assert.rejects(admin.call('FUNCTION', 'LIST'), /unknown command/i);
    });

    test('--mode function alone: one line, exit 3, no keys written', async () => {
      const result = await runCli(['--url', handle.url, '--mode', 'function', '--jobs', '200', '--sweepers', '2']);
      assert.equal(result.code, 3, result.stderr);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0] ?? '', /function mode needs a server with Functions/);
      assert.equal(result.stdout, '');
      assert.deepEqual(await allKeys(admin), []);
    });

    test('--mode all: the function mode is skipped with a note, the others run', async () => {
      const result = await runCli(['--url', handle.url, '--mode', 'all', '--jobs', '150', '--sweepers', '4', '--json']);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /no Functions .*skipping the function mode/);
      const report = JSON.parse(result.stdout) as { runs: { mode: string; doubleRecoveries: number }[] };
      assert.deepEqual(
        report.runs.map((run) => run.mode),
        ['atomic', 'loop', 'watch', 'claim'],
      );
      for (const run of report.runs) if (run.mode !== 'loop') assert.equal(run.doubleRecoveries, 0, run.mode);
      assert.deepEqual(await allKeys(admin), []);
    });
  },
  ['--rename-command', 'FUNCTION', ''],
);

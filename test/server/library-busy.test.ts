/**
 * Bee-Queue's own check, one script call, on a server whose busy-reply-threshold is low (100 ms):
 * one caller's checkStalledJobs on 8,000 jobs (an LREM per job, each scanning `active`) holds the
 * server past it, and the other caller's call is refused with BUSY. The run ends exit 3 with that
 * said in words, never as the abort the race sent the caller it stopped.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { forOneServerKind } from '../helpers/servers.js';

const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));

forOneServerKind(
  import.meta.url,
  'a library script past busy-reply-threshold',
  (handle) => {
    test("BUSY from Bee-Queue's own script: exit 3, one line saying the library's script held the server, not 'aborted'", async () => {
      const result = await runCli([
        '--url',
        handle.url,
        '--lib',
        'bee-queue',
        '--lib-from',
        PROJECT,
        '--mode',
        'bee-queue',
        '--sweepers',
        '2',
        '--jobs',
        '8000',
      ]);
      assert.equal(result.code, 3, result.stderr);
      assert.match(
        oneErrorLine(result.stderr) ?? result.stderr,
        /^emq-race: Bee-Queue's own checkStalledJobs script held the server past its busy-reply-threshold, and the server refused other calls with BUSY meanwhile\. That is a finding in itself/,
      );
      assert.doesNotMatch(result.stderr, /aborted/);
    });
  },
  ['--busy-reply-threshold', '100'],
);

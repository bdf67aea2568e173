/**
 * --processes with a sweeper child whose channel outlives it: each child, once started, hands its
 * end of the channel to a process of its own that lives on (as a child that started a helper
 * might; test/helpers/hold-channel.ts). The tool's process must end once the children have exited
 * and their records are in, not wait for the channel to close, and judge the race from those
 * records as any run does. Spawned: the process's own end is the subject.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { spawnCli } from '../helpers/cli.js';
import { alive } from '../helpers/processes.js';
import { forOneServerKind } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

forOneServerKind(import.meta.url, '--processes, a channel held open past its child', (handle) => {
  test("the run ends on the children's exit with their records in, while the processes holding their channels live on", async () => {
    const holders = join(tempDir('emq-race-channel-'), 'holders');
    writeFileSync(holders, '');
    const hook = new URL('../helpers/hold-channel.js', import.meta.url).href;
    let pids: number[] = [];
    try {
      const result = await spawnCli(
        ['--url', handle.url, '--queue', 'race-held-channel', '--mode', 'atomic', '--jobs', '300', '--sweepers', '2', '--processes', '--json'],
        { EMQ_RACE_TEST_HOLDERS: holders, NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${hook}`].filter(Boolean).join(' ') },
      );
      pids = readFileSync(holders, 'utf8').split('\n').filter(Boolean).map(Number);
      assert.equal(result.code, 0, result.stderr);
      // Both children started a holder, and every holder still held its channel when the run ended.
      assert.equal(pids.length, 2, readFileSync(holders, 'utf8'));
      // Its fd 3 in /proc: a holder that ended (a zombie too) has none.
      assert.ok(
        pids.every((pid) => existsSync(`/proc/${pid}/fd/3`)),
        `holders ${pids.join(', ')}: one no longer held its channel, so the run may have waited for it`,
      );
      const run = (JSON.parse(result.stdout) as { runs: { mode: string; recoveries: number; duplicatePending: number }[] }).runs[0];
      assert.equal(run?.mode, 'atomic');
      assert.equal(run?.recoveries, 300);
      assert.equal(run?.duplicatePending, 0);
    } finally {
      for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

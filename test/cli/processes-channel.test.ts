/**
 * --processes with a sweeper child whose channel outlives it: each child, once started, hands its
 * end of the channel to a process of its own that lives on (as a child that started a helper
 * might). The run must end once the children have exited and their records are in, not wait for
 * the channel to close, and judge the race from those records as any run does.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { alive } from '../helpers/processes.js';
import { forOneServerKind } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * Loaded into every process started with it (NODE_OPTIONS): in one started with a channel (a
 * sweeper child; its channel is fd 3), a `sleep` that holds a copy of that fd, its pid noted.
 */
const HOLD_CHANNEL = `
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
if (typeof process.send === 'function') {
  const holder = spawn('sleep', ['60'], { stdio: ['ignore', 'ignore', 'ignore', 3], detached: true });
  appendFileSync(process.env.EMQ_TEST_HOLDERS, holder.pid + '\\n');
  holder.unref();
}
`;

forOneServerKind(import.meta.url, '--processes, a channel held open past its child', (handle) => {
  test("the run ends on the children's exit with their records in, while the processes holding their channels live on", async () => {
    const dir = tempDir('emq-race-channel-');
    const hook = join(dir, 'hold-channel.mjs');
    const holders = join(dir, 'holders');
    writeFileSync(hook, HOLD_CHANNEL);
    writeFileSync(holders, '');
    const saved = { NODE_OPTIONS: process.env.NODE_OPTIONS, EMQ_TEST_HOLDERS: process.env.EMQ_TEST_HOLDERS };
    // The children are forked with this process's environment.
    process.env.NODE_OPTIONS = `${saved.NODE_OPTIONS ?? ''} --import ${hook}`.trim();
    process.env.EMQ_TEST_HOLDERS = holders;
    let pids: number[] = [];
    try {
      const result = await runCli([
        '--url',
        handle.url,
        '--queue',
        'race-held-channel',
        '--mode',
        'atomic',
        '--jobs',
        '300',
        '--sweepers',
        '2',
        '--processes',
        '--json',
      ]);
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
      if (saved.NODE_OPTIONS === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved.NODE_OPTIONS;
      if (saved.EMQ_TEST_HOLDERS === undefined) delete process.env.EMQ_TEST_HOLDERS;
      else process.env.EMQ_TEST_HOLDERS = saved.EMQ_TEST_HOLDERS;
      for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

/**
 * Bee-Queue's own check, one script call, on a server whose busy-reply-threshold is low (100 ms):
 * one caller's checkStalledJobs on 8,000 jobs (an LREM per job, each scanning `active`) holds the
 * server past it, and the other caller's call is refused with BUSY. The run ends exit 3 with that
 * said in words, never as the abort the race sent the caller it stopped. A user's --script that
 * spins past it is said the same way: the script's length, not a failure of the script. The
 * eviction watch, refused with BUSY longer than its wait, does not stop the run as blind: the
 * reading after the script counts what the wait hid (a library's recovery on 80,000 jobs ended with
 * the watch's line, not the library's finding). A run whose clean-up the server refuses with BUSY,
 * a script still holding it, says so and how to free it before it says how to remove the keys.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { closeConnection, connect, parseServerUrl } from '../../src/server/connection.js';
import { underEvictionWatch } from '../../src/server/eviction-watch.js';
import type { Interrupts } from '../../src/shared/interrupt.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { onClaimedQueue } from '../../src/queue/claimed-run.js';
import { queueKeys } from '../../src/queue/keys.js';
import { heldServerError, noteStoppedAnswering } from '../../src/shared/errors.js';
import { forOneServerKind } from '../helpers/servers.js';

const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));

/** A script that spins `ms` on the server's clock: past the 100 ms threshold, every other call is refused with BUSY. */
const spinning = (ms: number): string =>
  `local t = redis.call('TIME')\nlocal start = t[1] * 1000000 + t[2]\nrepeat local n = redis.call('TIME') until n[1] * 1000000 + n[2] - start > ${ms * 1000}\nreturn {}\n`;

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

    test("BUSY from the user's own --script: exit 3, one line saying the script held the server, not that it failed", async () => {
      // Each call spins 400 ms on the server's clock, past the 100 ms threshold: the other sweeper's call is refused.
      const dir = mkdtempSync(join(tmpdir(), 'emq-race-busy-'));
      const script = join(dir, 'slow.lua');
      writeFileSync(script, spinning(400));
      try {
        const result = await runCli(['--url', handle.url, '--script', script, '--sweepers', '2', '--jobs', '20']);
        assert.equal(result.code, 3, result.stderr);
        assert.match(
          oneErrorLine(result.stderr) ?? result.stderr,
          /^emq-race: the sweep script \(--script\) held the server past its busy-reply-threshold, and the server refused other calls with BUSY meanwhile/,
        );
        assert.doesNotMatch(result.stderr, /failed while running/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    test('the eviction watch refused with BUSY for longer than its wait: no blindness while the run is live, but blind if the server is still held at the end', async () => {
      const target = parseServerUrl(handle.url);
      const interrupts: Interrupts = { signal: new AbortController().signal, owe: () => () => {}, dispose: () => {} };
      const holder = await connect(target);
      const spin = (ms: number): Promise<unknown> => holder.eval(spinning(ms), 0);
      try {
        // Refused for about 600 ms, the watch's wait 200 ms: the reading after the script counts the wait.
        assert.equal(
          await underEvictionWatch(
            [target],
            interrupts,
            async () => {
              await spin(700);
              return 'done';
            },
            200,
          ),
          'done',
        );
        // Still held when the work ends: the last reading cannot be taken, and the run is not passed.
        let held: Promise<unknown> | undefined;
        await assert.rejects(
          underEvictionWatch(
            [target],
            interrupts,
            async () => {
              held = spin(700);
              await sleep(300);
            },
            200,
          ),
          (err: Error) => {
            assert.match(
              err.message,
              /^the eviction watch lost its connection to the server at \S+ and could not read it again \(the server at \S+ is busy running a script past its busy-reply-threshold \(BUSY\)/,
            );
            return true;
          },
        );
        await held;
      } finally {
        await closeConnection(holder);
      }
    });

    test("a script still holding the server when a run's work fails with BUSY: the line says the server still refuses every call, how to free it, and only then how to remove the keys", async () => {
      // The run's own wait for the script (ANSWER_TIMEOUT_MS) is long: its end is made here at once,
      // as it ends after that wait, with the admin connection dropped and the server seen silent.
      // Last in the file: from here this process counts the server as silent.
      const target = parseServerUrl(handle.url);
      const interrupts: Interrupts = { signal: new AbortController().signal, owe: () => () => {}, dispose: () => {} };
      const admin = await connect(target);
      const holder = await connect(target);
      const watcher = await connect(target);
      let held: Promise<unknown> | undefined;
      try {
        const plan = { admin, target, keys: queueKeys('race-held'), jobs: 0, keep: false };
        await assert.rejects(
          onClaimedQueue(plan, interrupts, async () => {
            held = holder.eval(spinning(1500), 0);
            await sleep(300);
            admin.disconnect();
            // Closed, as the connection that waited is long before a run fails on it (ANSWER_TIMEOUT_MS).
            while (admin.status !== 'end') await sleep(5);
            noteStoppedAnswering(target.display, 10_000);
            throw heldServerError('the sweep script (--script)', ': a call of it ran too long');
          }),
          (err: Error) => {
            assert.match(
              err.message,
              /^the sweep script \(--script\) held the server past its busy-reply-threshold, .*: a call of it ran too long; the server still refuses every call with BUSY, as a script is still running on it: if it is the run's \(--script, or a library's\), stop it with redis-cli SCRIPT KILL, or SHUTDOWN NOSAVE once it has written; once it answers again, the keys of queue race-held \(emq:\{race-held\}:\*\) may remain on the server: remove them with emq-race clean --queue race-held/,
            );
            return true;
          },
        );
        await held;
        // What the line says is so: once the script has ended, the queue's marker is there.
        assert.equal(await watcher.exists('emq:{race-held}:owner'), 1);
        await watcher.del(...(await watcher.keys('emq:{race-held}:*')));
      } finally {
        await held?.catch(() => undefined);
        for (const redis of [admin, holder, watcher]) await closeConnection(redis);
      }
    });
  },
  ['--busy-reply-threshold', '100'],
);

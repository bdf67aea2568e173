/**
 * SIGINT, SIGQUIT, SIGTERM and SIGHUP at each phase of a run (found by watching the queue's keys, or held
 * there at a relay: helpers/held-call.ts), against
 * real servers: the run's keys are deleted, an embedded server is stopped, the exit code is 130 /
 * 143 / 129 (the first signal's); a second signal, of any kind, still deletes the keys; a third
 * leaves at once and says how to finish the clean-up (under --json, with the error object on
 * stdout all the same); the embedded server is stopped however many
 * came; and a tool killed outright (SIGKILL) leaves no server and no folder behind.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { HEARTBEAT_TTL_MS } from '../../src/queue/owner-claim.js';
import { which, type EmbeddedServer } from '../../src/server/embedded-server.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { LONG_LOOP, oneErrorLine, startCli, within, until } from '../helpers/cli-process.js';
import { holdCall, holdFirst, type HeldCall } from '../helpers/held-call.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { allKeys } from '../helpers/keyspace.js';
import { alive, commandLine, connectOnceUp, descendants, embeddedChild, killWithDescendants, namingServer, serverWrapper } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp-dir.js';
import { oneServerKind } from '../helpers/servers.js';
import { unrelatedState, useFilledServer, type UnrelatedState } from '../helpers/unrelated-data.js';

const LIMIT_MS = 15_000;

const EXIT_CODES = { SIGINT: 130, SIGQUIT: 131, SIGTERM: 143, SIGHUP: 129 } as const;

// The subject is signals and the clean-up they start, the same on either server kind: one kind per file (oneServerKind).
for (const kind of oneServerKind(import.meta.url)) {
  describe(`interruptions [${kind.kind}]`, { skip: which(kind.bin) === undefined ? `${kind.bin} is not installed` : false }, () => {
    let server: EmbeddedServer;
    let redis: Redis;
    let initial: UnrelatedState;
    useFilledServer({ bin: kind.bin }, (started, connected, state) => {
      server = started;
      redis = connected;
      initial = state;
    });

    /**
     * Starts a run, sends `signal` once `ready` holds, and checks what every interrupted run must
     * show: its exit code, one line naming the signal, nothing on stdout, the keyspace as it was.
     * With `hold`, the run goes through that relay, its held call let go once the signal is heard.
     */
    const interruptWhen = async (
      args: readonly string[],
      what: string,
      ready: () => Promise<boolean>,
      signal: keyof typeof EXIT_CODES,
      hold?: HeldCall,
    ): Promise<void> => {
      const cli = startCli(['--url', hold?.url ?? server.url, ...args]);
      let result: Awaited<typeof cli.done>;
      try {
        if (hold) await within(LIMIT_MS, what, hold.held);
        await until(LIMIT_MS, what, ready);
        cli.child.kill(signal);
        if (hold) {
          await within(LIMIT_MS, 'the notice', cli.waitForStderr(new RegExp(`${signal} received, cleaning up`)));
          hold.release();
        }
        result = await within(LIMIT_MS, 'the interrupted run', cli.done);
      } finally {
        await hold?.close();
      }
      assert.equal(result.code, EXIT_CODES[signal], result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? '', new RegExp(`interrupted by ${signal}`));
      if (args.includes('--json')) {
        // Under --json the failure is one object on stdout, as the schema describes it.
        const json = JSON.parse(result.stdout) as { error?: { exit: number; message: string } };
        assertMatchesSchema(json, `--json interrupted by ${signal}`);
        assert.deepEqual(json.error, { exit: EXIT_CODES[signal], message: `interrupted by ${signal}` });
      } else assert.equal(result.stdout, '');
      assert.deepEqual(await unrelatedState(redis), initial);
    };

    /**
     * A seed held half done: the expired jobs seeded (two calls), the live ones' call (ids from
     * 10,001) held at the relay, so that a signal meets the run mid-seed however quick the seed.
     */
    const SEED_ARGS = ['--mode', 'atomic', '--jobs', '10000', '--live', '1000'];
    const holdSeed = (): Promise<HeldCall> => holdCall(server.url, ['seed-jobs'], '10001');

    test("SIGINT while seeding: exit 130, the run's keys deleted, nothing else touched", async () => {
      await interruptWhen(
        [...SEED_ARGS, '--queue', 'race-seed'],
        'seeding',
        async () => (await redis.exists('emq:{race-seed}:active')) === 1,
        'SIGINT',
        await holdSeed(),
      );
    });

    test("SIGTERM while sweeping: exit 143, the run's keys deleted, nothing else touched", async () => {
      const args = ['--mode', 'loop', '--jobs', '10000', '--sweepers', '4', '--probe-delay', '5', '--queue', 'race-sweep'];
      await interruptWhen(args, 'sweeping', async () => (await redis.llen('emq:{race-sweep}:pending')) > 0, 'SIGTERM');
    });

    test("SIGQUIT (Ctrl-\\) while sweeping under --json: exit 131, the error object, the run's keys deleted, nothing else touched", async () => {
      const args = [...LONG_LOOP, '--sweepers', '4', '--queue', 'race-quit-sweep', '--json'];
      await interruptWhen(args, 'sweeping', async () => (await redis.llen('emq:{race-quit-sweep}:pending')) > 0, 'SIGQUIT');
    });

    test("a Ctrl-\\ to the process group while sweeper processes sweep: exit 131, one line, the run's keys deleted", async () => {
      // The terminal's SIGQUIT reaches the tool and its sweeper processes alike: the tool decides.
      const args = ['--url', server.url, '--processes', ...LONG_LOOP, '--sweepers', '2', '--queue', 'race-quit-group'];
      const cli = startCli(args, {}, { ownGroup: true });
      const pid = cli.child.pid as number;
      await until(LIMIT_MS, 'sweeping', async () => (await redis.llen('emq:{race-quit-group}:pending')) > 0);
      process.kill(-pid, 'SIGQUIT');
      const result = await within(LIMIT_MS, 'the interrupted run', cli.done);
      assert.equal(result.code, 131, result.stderr);
      assert.equal(oneErrorLine(result.stderr), 'emq-race: interrupted by SIGQUIT');
      assert.deepEqual(await unrelatedState(redis), initial);
    });

    test("SIGINT while sweeping with --keep: the run's keys deleted all the same, as the notice says", async () => {
      const args = ['--mode', 'loop', '--jobs', '10000', '--sweepers', '4', '--probe-delay', '5', '--queue', 'race-keep-sweep', '--keep'];
      await interruptWhen(args, 'sweeping', async () => (await redis.llen('emq:{race-keep-sweep}:pending')) > 0, 'SIGINT');
    });

    test("SIGHUP while seeding (a closed terminal): exit 129, the run's keys deleted, nothing else touched", async () => {
      await interruptWhen(
        [...SEED_ARGS, '--queue', 'race-hup-seed'],
        'seeding',
        async () => (await redis.exists('emq:{race-hup-seed}:active')) === 1,
        'SIGHUP',
        await holdSeed(),
      );
    });

    test("SIGHUP while sweeping: exit 129, the run's keys deleted, nothing else touched", async () => {
      const args = ['--mode', 'loop', '--jobs', '10000', '--sweepers', '4', '--probe-delay', '5', '--queue', 'race-hup-sweep'];
      await interruptWhen(args, 'sweeping', async () => (await redis.llen('emq:{race-hup-sweep}:pending')) > 0, 'SIGHUP');
    });

    test('SIGHUP while sweeping with --json: exit 129, and stdout is the error object', async () => {
      const args = ['--mode', 'loop', '--jobs', '10000', '--sweepers', '4', '--probe-delay', '5', '--queue', 'race-hup-json', '--json'];
      await interruptWhen(args, 'sweeping', async () => (await redis.llen('emq:{race-hup-json}:pending')) > 0, 'SIGHUP');
    });

    test("SIGINT while auditing: exit 130, the run's keys deleted, nothing else touched", async () => {
      // The audit's first read held at the relay: every job stands in `pending`, the sweepers are
      // done and the audit is reading.
      const jobs = 1000;
      const args = ['--mode', 'atomic', '--jobs', String(jobs), '--queue', 'race-audit'];
      const hold = await holdCall(server.url, ['audit-jobs', 'audit-members']);
      await interruptWhen(args, 'the audit', async () => (await redis.llen('emq:{race-audit}:pending')) >= jobs, 'SIGINT', hold);
    });

    /**
     * Starts a seeding run and holds it mid-seed (holdSeed: its connection to the server held at
     * the relay, the heartbeat's writes with it), so that every signal sent next finds the run
     * still at work, before or during its clean-up.
     */
    const heldMidSeed = async (queue: string, more: readonly string[] = []): Promise<{ cli: ReturnType<typeof startCli>; hold: HeldCall }> => {
      const hold = await holdSeed();
      const cli = startCli(['--url', hold.url, ...SEED_ARGS, '--queue', queue, ...more]);
      await within(LIMIT_MS, 'seeding', hold.held);
      assert.equal(await redis.exists(`emq:{${queue}}:active`), 1, 'the expired jobs are seeded');
      return { cli, hold };
    };

    for (const [first, second] of [
      ['SIGINT', 'SIGINT'],
      ['SIGHUP', 'SIGTERM'],
      ['SIGTERM', 'SIGHUP'],
    ] as const) {
      test(`${first} then ${second} (a second signal): the run's keys are still deleted, exit ${EXIT_CODES[first]}`, async () => {
        const queue = `race-${first.toLowerCase()}-${second.toLowerCase()}`;
        const { cli, hold } = await heldMidSeed(queue);
        let result: Awaited<typeof cli.done>;
        try {
          try {
            cli.child.kill(first);
            await within(LIMIT_MS, 'the first notice', cli.waitForStderr(new RegExp(`${first} received, cleaning up`)));
            cli.child.kill(second);
            await within(LIMIT_MS, 'the second notice', cli.waitForStderr(new RegExp(`${second} received, a second signal: still cleaning up`)));
          } finally {
            hold.release();
          }
          result = await within(LIMIT_MS, 'the interrupted run', cli.done);
        } finally {
          await hold.close();
        }
        assert.equal(result.code, EXIT_CODES[first], result.stderr);
        assert.match(oneErrorLine(result.stderr) ?? '', new RegExp(`interrupted by ${first}`));
        assert.deepEqual(
          (await allKeys(redis)).filter((key) => key.startsWith(`emq:{${queue}}:`)),
          [],
        );
        assert.deepEqual(await unrelatedState(redis), initial);
      });
    }

    test('a third signal leaves at once, says so, names the clean command, which then finishes it', async () => {
      const { cli, hold } = await heldMidSeed('race-thrice');
      let result: Awaited<typeof cli.done>;
      try {
        cli.child.kill('SIGINT');
        await within(LIMIT_MS, 'the first notice', cli.waitForStderr(/SIGINT received, cleaning up/));
        cli.child.kill('SIGINT');
        await within(LIMIT_MS, 'the second notice', cli.waitForStderr(/SIGINT received, a second signal: still cleaning up/));
        cli.child.kill('SIGINT');
        // The run's seed is still held: only the third signal can have ended it.
        result = await within(LIMIT_MS, 'the run left by a third signal', cli.done);
      } finally {
        // Closed, never released: the held call does not reach the server after the run left.
        await hold.close();
      }
      assert.equal(result.code, 130, result.stderr);
      assert.match(result.stderr, /SIGINT received, a third signal: leaving now/);
      assert.match(
        result.stderr,
        /remove them with emq-race clean --queue race-thrice .*if it finds the run's heartbeat still there, it lets the queue go within 15 s/,
      );
      assert.match(result.stderr, /interrupted by SIGINT\n$/);
      // The heartbeat the run left counts it as live until it expires: `clean` refuses the queue
      // meanwhile, and may finish it once it has. The key carries its expiry (at most the 15 s it
      // lives); the test brings that moment forward rather than wait for it, as nothing of the run
      // is left to write the heartbeat again.
      const heartbeat = 'emq:{race-thrice}:heartbeat';
      const ttl = await redis.pttl(heartbeat);
      assert.ok(ttl > 0 && ttl <= HEARTBEAT_TTL_MS, `the heartbeat left expires on its own (PTTL ${ttl})`);
      const refused = await runCli(['clean', '--url', server.url, '--queue', 'race-thrice']);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(
        oneErrorLine(refused.stderr) ?? '',
        // The run's process has ended: the line says so, and that its heartbeat is what still holds the queue.
        /queue race-thrice belongs to a run that has ended \(pid \d+ on .+ is no longer running\), but its heartbeat emq:\{race-thrice\}:heartbeat is still fresh: nothing removed/,
      );
      await redis.pexpire(heartbeat, 1);
      await until(LIMIT_MS, 'the heartbeat to expire', async () => (await redis.exists(heartbeat)) === 0);
      const clean = await runCli(['clean', '--url', server.url, '--queue', 'race-thrice']);
      assert.equal(clean.code, 0, clean.stderr);
      assert.deepEqual(await unrelatedState(redis), initial);
    });

    test('a third signal under --json: stdout is still the one error object', async () => {
      const queue = 'race-thrice-json';
      const { cli, hold } = await heldMidSeed(queue, ['--json']);
      let result: Awaited<typeof cli.done>;
      try {
        cli.child.kill('SIGTERM');
        await within(LIMIT_MS, 'the first notice', cli.waitForStderr(/SIGTERM received, cleaning up/));
        cli.child.kill('SIGINT');
        await within(LIMIT_MS, 'the second notice', cli.waitForStderr(/SIGINT received, a second signal: still cleaning up/));
        cli.child.kill('SIGHUP');
        result = await within(LIMIT_MS, 'the run left by a third signal', cli.done);
      } finally {
        await hold.close();
      }
      assert.equal(result.code, 143, result.stderr);
      assert.match(result.stderr, /SIGHUP received, a third signal: leaving now/);
      const json = JSON.parse(result.stdout) as { error?: { exit: number; message: string } };
      assertMatchesSchema(json, '--json left by a third signal');
      assert.deepEqual(json.error, { exit: 143, message: 'interrupted by SIGTERM' });
      // What the third signal left is the test's to remove: its own server, the run's keys by name.
      const left = (await allKeys(redis)).filter((key) => key.startsWith(`emq:{${queue}}:`));
      assert.ok(left.length > 0, 'a third signal leaves the keys it did not finish deleting');
      await redis.del(...left);
      assert.deepEqual(await unrelatedState(redis), initial);
    });

    /** Starts a run on the embedded server and waits until `ready` holds there (`what`); resolves with the run and the server. */
    const onEmbedded = async (
      args: readonly string[],
      what: string,
      ready: (own: Redis) => Promise<boolean>,
      bin: string = kind.bin,
    ): Promise<{ cli: ReturnType<typeof startCli>; server: { pid: number; port: number; dir: string } }> => {
      const cli = startCli(['--server-bin', bin, ...args]);
      const child = await within(LIMIT_MS, 'the embedded server', embeddedChild(cli.child.pid ?? 0));
      const own = await within(LIMIT_MS, 'connecting', connectOnceUp(child.port));
      try {
        await until(LIMIT_MS, what, () => ready(own), 10);
      } finally {
        own.disconnect();
      }
      return { cli, server: child };
    };
    const seedingOnEmbedded = () => onEmbedded(['--mode', 'atomic', '--jobs', '60000'], 'seeding', async (own) => (await own.dbsize()) > 0);
    const sweepingOnEmbedded = (bin: string = kind.bin) =>
      onEmbedded(
        ['--mode', 'loop', '--jobs', '10000', '--sweepers', '4', '--probe-delay', '5', '--queue', 'race-gone'],
        'sweeping',
        async (own) => (await own.llen('emq:{race-gone}:pending')) > 0,
        bin,
      );

    test('embedded server: two SIGINTs mid-seed still stop the server and remove its folder', async () => {
      const { cli, server: child } = await seedingOnEmbedded();
      cli.child.kill('SIGINT');
      await within(LIMIT_MS, 'the first notice', cli.waitForStderr(/SIGINT received, cleaning up/));
      cli.child.kill('SIGINT');
      const result = await within(LIMIT_MS, 'the interrupted run', cli.done);
      assert.equal(result.code, 130, result.stderr);
      assert.equal(alive(child.pid), false, 'the embedded server is stopped');
      assert.equal(existsSync(child.dir), false, "the embedded server's folder is removed");
    });

    test('embedded server: three SIGINTs mid-seed, the server stopped with its keys, and no clean line sends the user to it', async () => {
      const { cli, server: child } = await seedingOnEmbedded();
      // One at a time: signals of a kind sent together may arrive as one.
      cli.child.kill('SIGINT');
      await within(LIMIT_MS, 'the first notice', cli.waitForStderr(/SIGINT received, cleaning up/));
      cli.child.kill('SIGINT');
      await within(LIMIT_MS, 'the second notice', cli.waitForStderr(/a second signal/));
      cli.child.kill('SIGINT');
      const result = await within(LIMIT_MS, 'the interrupted run', cli.done);
      assert.equal(result.code, 130, result.stderr);
      // However far the clean-up got before the third: nothing it says names a clean on a server gone.
      assert.doesNotMatch(result.stderr, /emq-race clean|may remain/);
      await until(LIMIT_MS, 'the embedded server to stop', () => !alive(child.pid));
      await until(LIMIT_MS, "the embedded server's folder to go", () => !existsSync(child.dir));
    });

    test('the embedded server is stopped after a single SIGTERM while sweeping', async () => {
      const { cli, server: child } = await sweepingOnEmbedded();
      cli.child.kill('SIGTERM');
      const result = await within(LIMIT_MS, 'the interrupted run', cli.done);
      assert.equal(result.code, 143, result.stderr);
      assert.equal(alive(child.pid), false, 'the embedded server is stopped');
    });

    test('SIGHUP on the embedded server: exit 129, the server stopped and its folder removed', async () => {
      const { cli, server: child } = await sweepingOnEmbedded();
      cli.child.kill('SIGHUP');
      const result = await within(LIMIT_MS, 'the interrupted run', cli.done);
      assert.equal(result.code, 129, result.stderr);
      assert.match(result.stderr, /SIGHUP received, cleaning up/);
      assert.equal(alive(child.pid), false, 'the embedded server is stopped');
      assert.equal(existsSync(child.dir), false, "the embedded server's folder is removed");
    });

    test('SIGKILL of the tool (no clean-up of its own at all): its server still goes, folder and all', async () => {
      const { cli, server: child } = await sweepingOnEmbedded();
      cli.child.kill('SIGKILL');
      const result = await within(LIMIT_MS, 'the killed run', cli.done);
      assert.equal(result.signal, 'SIGKILL');
      // The keeper notices the closed pipe and stops the server: a guard against a hang, not a timing.
      await until(LIMIT_MS, 'the server to go', async () => !alive(child.pid));
      await until(LIMIT_MS, 'its folder to go', async () => !existsSync(child.dir));
    });

    // A --server-bin wrapper script runs the server as its child: the pid its keeper starts is the
    // script's, and the server must go all the same, however the tool ends.
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      test(`${signal} of the tool on a --server-bin wrapper script: the server goes, its wrapper, keeper and folder too`, async () => {
        const { cli, server: child } = await sweepingOnEmbedded(serverWrapper(which(kind.bin) ?? kind.bin).path);
        try {
          cli.child.kill(signal);
          const result = await within(LIMIT_MS, 'the interrupted run', cli.done);
          if (signal === 'SIGTERM') assert.equal(result.code, 143, result.stderr);
          else assert.equal(result.signal, 'SIGKILL');
          // A guard against a hang, not a timing: the keeper stops the server once the lifeline closes.
          await until(LIMIT_MS, 'the server, its wrapper and keeper gone', () => namingServer(child.port, child.dir).length === 0, 20);
          await until(LIMIT_MS, 'its folder to go', () => !existsSync(child.dir), 20);
        } finally {
          for (const pid of namingServer(child.port, child.dir)) killWithDescendants(pid);
        }
      });
    }

    test('a signal while the program still loads: exit 130, and under --json the one object, never a run that goes on', async () => {
      // Sent ever later after the start, across the time the program loads and the command begins.
      // Wherever it lands, a process that ends with a code ends with 130 and one JSON object: the
      // error object when the command line's own listeners took it (Node 20 hands a signal out
      // while modules load), or the stopped command's report once the command watches signals.
      // Before, a signal there could end the process by the signal, or (Node 24) be lost, the
      // command then running to its end with exit 0.
      let handled = 0;
      // A loaded machine may take longer than 300 ms to run the tool's first line: the delays go
      // on past it until one signal lands once the tool runs.
      for (let delayMs = 20; delayMs <= 300 || (handled === 0 && delayMs <= 3000); delayMs += 20) {
        const cli = startCli(['explore', '--url', server.url, '--mode', 'loop', '--json']);
        await sleep(delayMs);
        cli.child.kill('SIGINT');
        const result = await within(LIMIT_MS, 'the interrupted start', cli.done);
        // Before Node has run a line of the tool, the signal's default ends it: nothing to check.
        if (result.signal === 'SIGINT') continue;
        assert.equal(result.code, 130, `${delayMs} ms: ${result.stderr}`);
        const json = JSON.parse(result.stdout) as { error?: { exit: number; message: string }; complete?: boolean; stopped?: { exit: number } };
        assertMatchesSchema(json, 'interrupted while loading');
        if (json.error) assert.deepEqual(json.error, { exit: 130, message: 'interrupted by SIGINT' });
        else assert.equal(json.stopped?.exit, 130);
        handled++;
      }
      assert.ok(handled > 0, 'no signal landed once the tool ran');
      assert.deepEqual(await unrelatedState(redis), initial);
    });

    test("a signal once the report is out, while the session closes: the signal's code all the same, and the line saying so", async () => {
      // The session's own QUIT on its admin connection (the first the run opens), the last thing
      // the run sends, held at a relay: the report is printed by then, and the signal meets the
      // run closing its session.
      const hold = await holdFirst(server.url, (chunk, before, connection) => connection === 0 && /\$4\r\nquit\r\n/i.test(before + chunk));
      try {
        const cli = startCli(['--url', hold.url, '--mode', 'atomic', '--jobs', '200', '--queue', 'race-late-signal']);
        await within(LIMIT_MS, 'the session closing', hold.held);
        cli.child.kill('SIGINT');
        await cli.waitForStderr(/SIGINT received/);
        hold.release();
        const result = await within(LIMIT_MS, 'the run', cli.done);
        assert.equal(result.code, 130, result.stderr);
        assert.match(result.stdout, /jobs\/s/, 'the report was out');
        assert.equal(oneErrorLine(result.stderr), 'emq-race: interrupted by SIGINT, once its output was complete');
      } finally {
        await hold.close();
      }
      assert.deepEqual(await unrelatedState(redis), initial);
    });

    test("a signal as the process ends, its command done: the signal's code, the output whole, and the line saying so", async () => {
      // The process lingers once its command is done (test/helpers/slow-exit.ts), and the verdict
      // line, the last thing the command writes, says when it is.
      const slowExit = new URL('../helpers/slow-exit.js', import.meta.url).href;
      const env = { NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${slowExit}`].filter(Boolean).join(' ') };
      const cli = startCli(['--url', server.url, '--mode', 'atomic', '--jobs', '200', '--queue', 'race-after-end', '--json', '--expect', 'atomic=clean'], env);
      await within(LIMIT_MS, 'the verdict line', cli.waitForStderr(/expectation met: atomic=clean/));
      // The command's signal listeners are gone by then, or going: the next moments are the process's own.
      await sleep(300);
      cli.child.kill('SIGTERM');
      const result = await within(LIMIT_MS, 'the run', cli.done);
      assert.equal(result.signal, null, 'not ended by the signal itself');
      assert.equal(result.code, 143, result.stderr);
      const report = JSON.parse(result.stdout) as { runs: { mode: string; clean: boolean }[] };
      assert.deepEqual(
        report.runs.map((r) => [r.mode, r.clean]),
        [['atomic', true]],
        'one JSON object, the whole report, and no error object after it',
      );
      assert.equal(result.stderr.trimEnd().split('\n').at(-1), 'emq-race: interrupted by SIGTERM, once its output was complete');
      assert.deepEqual(await unrelatedState(redis), initial);
    });

    test('a Ctrl-C to the process group while --server-bin is checked: exit 130, not the binary refused', async () => {
      // A server binary whose --version answers after a second: the check is under way when the
      // group's SIGINT comes, as a terminal's Ctrl-C reaches the tool and its children alike.
      const dir = tempDir('emq-race-slow-bin-');
      const bin = join(dir, 'slow-server');
      writeFileSync(bin, `#!/bin/sh\n[ "$1" = --version ] && sleep 1\nexec ${which(kind.bin)} "$@"\n`, { mode: 0o755 });
      const cli = startCli(['--server-bin', bin, '--mode', 'atomic', '--jobs', '200'], {}, { ownGroup: true });
      const pid = cli.child.pid as number;
      await until(LIMIT_MS, 'the --version check', () => descendants(pid).some((child) => commandLine(child).includes('--version')));
      process.kill(-pid, 'SIGINT');
      const result = await within(LIMIT_MS, 'the interrupted run', cli.done);
      assert.equal(result.code, 130, result.stderr);
      assert.equal(oneErrorLine(result.stderr), 'emq-race: interrupted by SIGINT');
    });

    test('explore, SIGINT: what was explored so far, marked incomplete, the modes not started named; every queue deleted; exit 130', async () => {
      const cli = startCli(['explore', '--url', server.url, '--mode', 'loop,atomic', '--json']);
      // The exploration's queue is NAME-loop-0: the exploration is under way once it shows.
      await until(LIMIT_MS, 'an execution', async () => (await allKeys(redis)).some((key) => /^emq:\{race-[0-9a-f]+-loop-\d+\}:/.test(key)));
      cli.child.kill('SIGINT');
      const result = await within(LIMIT_MS, 'the interrupted exploration', cli.done);
      assert.equal(result.code, 130, result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? '', /interrupted by SIGINT/);
      const json = JSON.parse(result.stdout) as {
        complete: boolean;
        modes: { mode: string; complete: boolean }[];
        stopped?: { exit: number };
        notStarted?: string[];
      };
      assertMatchesSchema(json, 'explore --json, interrupted');
      assert.equal(json.complete, false);
      assert.deepEqual(
        json.modes.map((m) => [m.mode, m.complete]),
        [['loop', false]],
      );
      assert.equal(json.stopped?.exit, 130);
      assert.deepEqual(json.notStarted, ['atomic'], 'the mode the stop came before');
      assert.deepEqual(await unrelatedState(redis), initial);
    });

    test('clean, SIGINT mid-removal: it stops between calls, keeps the marker, names what is left; clean again removes the rest', async () => {
      const queue = 'race-clean-stop';
      // Kept by a process that has ended: clean refuses a queue whose run's process lives.
      const kept = await spawnCli(['--url', server.url, '--mode', 'atomic', '--jobs', '5000', '--live', '0', '--queue', queue, '--keep']);
      assert.equal(kept.code, 0, kept.stderr);
      // Every write held: the clean reads its marker and the heartbeat, then waits at its first
      // deletion, where the signal meets it however quick the removal.
      await redis.call('CLIENT', 'PAUSE', String(LIMIT_MS), 'WRITE');
      const cli = startCli(['clean', '--url', server.url, '--queue', queue]);
      try {
        await until(LIMIT_MS, 'the first deletion', async () => Number(/blocked_clients:(\d+)/.exec(await redis.info('clients'))?.[1]) > 0);
        cli.child.kill('SIGINT');
        await within(LIMIT_MS, 'the notice', cli.waitForStderr(/SIGINT received, stopping after the deletions in flight/));
      } finally {
        await redis.call('CLIENT', 'UNPAUSE');
      }
      const result = await within(LIMIT_MS, 'the stopped clean', cli.done);
      assert.equal(result.code, 130, result.stderr);
      assert.equal(
        oneErrorLine(result.stderr),
        `emq-race: interrupted by SIGINT: queue ${queue} stopped midway, its owner marker kept; emq-race clean --queue ${queue} (and the same --url) removes the rest`,
      );
      assert.equal(result.stdout, '');
      // The call in flight ran (the pending list went with it); no job hash was asked for after it.
      assert.notEqual(await redis.get(`emq:{${queue}}:owner`), null);
      assert.equal(await redis.exists(`emq:{${queue}}:pending`), 0);
      assert.equal(await redis.exists(`emq:{${queue}}:job:1`, `emq:{${queue}}:job:5000`), 2);
      const again = await runCli(['clean', '--url', server.url, '--queue', queue]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, new RegExp(`^removed queue ${queue}: 5,001 keys$`, 'm'));
      assert.deepEqual(await unrelatedState(redis), initial);
    });

    test('nothing of the runs is left', async () => {
      assert.deepEqual(await unrelatedState(redis), initial);
      assert.ok((await allKeys(redis)).every((key) => !key.startsWith('emq:{race-') || key.startsWith('emq:{race-0000beef}')));
    });
  });
}

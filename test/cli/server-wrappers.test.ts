/**
 * --server-bin wrapper scripts that do more than run the server as their child: one whose server
 * is still starting when the tool is killed, one that goes on once its server has ended, one that
 * starts its server in the background and exits, one that puts it in a session of its own
 * (setsid), one that forks it into one and leaves at once (setsid -f), and one whose server
 * daemonizes. The keeper runs the wrapper in a process group of its own and watches and stops that
 * whole group, and a server outside it that the tool shows to be the run's own or that the keeper
 * finds once the group is empty, so each run ends promptly and leaves no server, wrapper, wrapper's
 * child, keeper or folder behind, and stops no process of the user's.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { BIN, cliEnv, runCli, type CliResult } from '../helpers/cli.js';
import { LONG_LOOP, startCli, until, within } from '../helpers/cli-process.js';
import {
  askServer,
  assertServerGone,
  commandLine,
  killWithDescendants,
  namingServer,
  running,
  serverWrapper,
  wrappedServer,
  wrappedStarts,
} from '../helpers/processes.js';
import { oneServerKind } from '../helpers/servers.js';

const LIMIT_MS = 15_000;

/** The pids a wrapper noted in its log on lines starting with `name` (its other children). */
const noted = (log: string, name: string): number[] =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(`${name} `))
    .map((line) => Number(line.slice(name.length + 1)))
    .filter((pid) => pid > 0);

/**
 * A parent that adopts the orphans below it and never reaps them (PR_SET_CHILD_SUBREAPER), as a
 * container's first process may: it runs its arguments as a child, prints that child's pid, reaps
 * only it, and stays until its stdin closes.
 */
const NON_REAPING_PARENT = `
import ctypes, subprocess, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(child.pid, flush=True)
child.wait()
sys.stdin.read()
`;

/** Nothing left of the last server a wrapper started (assertServerGone), `others` it noted included. */
const assertNothingLeft = (log: string, others: readonly number[] = []): Promise<void> => assertServerGone(wrappedServer(log), others, LIMIT_MS);

/** Nothing left of any server a wrapper started, on every port the tool tried: each looked at (and what is left of it killed) before the first that failed is reported. */
const attemptsGone = async (log: string): Promise<void> => {
  const checked = await Promise.allSettled(wrappedStarts(log).map((attempt) => assertServerGone(attempt, [], LIMIT_MS)));
  const failed = checked.find((one) => one.status === 'rejected');
  if (failed) throw failed.reason;
};

/** A wrapper that puts its server in a session of its own: outside the group the keeper stops. */
const SETSID = { skip: which('setsid') ? false : 'needs setsid(1) from util-linux' };

/** A small atomic run through `wrapper`, and nothing of its server left afterwards, whatever the run did. */
const runWrapped = async (wrapper: { path: string; log: string }): Promise<CliResult> => {
  try {
    return await runCli(['--server-bin', wrapper.path, '--mode', 'atomic', '--jobs', '20']);
  } finally {
    await assertNothingLeft(wrapper.log);
  }
};

/** A small atomic run through `wrapper` that is to fail its start, and nothing left on any port it tried. */
const startFails = async (wrapper: { path: string; log: string }): Promise<CliResult> => {
  try {
    return await runCli(['--server-bin', wrapper.path, '--mode', 'atomic', '--jobs', '20']);
  } finally {
    await attemptsGone(wrapper.log);
  }
};

/**
 * The tool run through `wrapper` with `args`, SIGKILLed once its wrapper has noted a start and
 * `ready` holds for that start's port and folder; then nothing of its server is left.
 */
const killedOnce = async (
  wrapper: { path: string; log: string },
  args: readonly string[],
  what: string,
  ready: (port: number, dir: string) => boolean,
): Promise<void> => {
  const cli = startCli(['--server-bin', wrapper.path, ...args]);
  try {
    await until(LIMIT_MS, 'the wrapper started', () => existsSync(wrapper.log) && wrappedServer(wrapper.log).port > 0, 20);
    const { port, dir } = wrappedServer(wrapper.log);
    await until(LIMIT_MS, what, () => ready(port, dir), 20);
    cli.child.kill('SIGKILL');
    const result = await within(LIMIT_MS, 'the killed run', cli.done);
    assert.equal(result.signal, 'SIGKILL');
  } finally {
    cli.child.kill('SIGKILL');
    await assertNothingLeft(wrapper.log);
  }
};

for (const kind of oneServerKind(import.meta.url)) {
  const bin = which(kind.bin) ?? kind.bin;
  describe(`--server-bin wrappers [${kind.kind}]`, { skip: which(kind.bin) === undefined ? `${kind.bin} is not installed` : false }, () => {
    test("SIGKILL of the tool while a wrapper's server is still starting: the server goes, wrapper, keeper and folder too", async () => {
      // The server's readiness line held back: the tool never learns its pid, and is killed while
      // it waits, the server up and its wrapper's child.
      const wrapper = serverWrapper(bin, `SERVER | grep --line-buffered -v 'Ready to accept'`);
      await killedOnce(wrapper, ['--mode', 'atomic', '--jobs', '20'], 'the server running', (port, dir) =>
        namingServer(port, dir).some((pid) => commandLine(pid).includes(`127.0.0.1:${port}`)),
      );
    });

    test('a wrapper that goes on once its server has ended: the run ends at once, exit 0, and its other child goes too', async () => {
      const wrapper = serverWrapper(bin, 'SERVER; sleep 30 & echo "sleep $!" >>LOG; wait');
      const started = Date.now();
      let result: CliResult | undefined;
      try {
        result = await runCli(['--server-bin', wrapper.path, '--mode', 'atomic', '--jobs', '20']);
      } finally {
        await assertNothingLeft(wrapper.log, noted(wrapper.log, 'sleep'));
      }
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^server: \S+ \S+ \(embedded, now stopped\)$/m);
      // The wrapper's 30 s sleep is stopped with its server, not waited out.
      assert.ok(Date.now() - started < LIMIT_MS, `the run took ${Date.now() - started} ms`);
    });

    test("a wrapper's server left a zombie by a parent that never reaps it: the tool SIGKILLed mid-run, the keeper still ends and its folder goes", async () => {
      // The wrapper's other child outlives the stop's TERM by a second, orphaned, adopted by that
      // parent, and then ends as a zombie, which kill -0 still finds in the server's group: it has
      // ended all the same. (A server orphaned by a wrapper that dies first ends the same way,
      // but only when it outlives the wrapper, which a test cannot make sure of.)
      const wrapper = serverWrapper(bin, "(trap '' TERM; sleep 1) & SERVER");
      const parent = spawn('python3', ['-c', NON_REAPING_PARENT, process.execPath, BIN, '--server-bin', wrapper.path, ...LONG_LOOP], {
        env: cliEnv({}),
        stdio: ['pipe', 'pipe', 'ignore'],
      });
      let said = '';
      parent.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
      try {
        await until(LIMIT_MS, 'the tool started', () => /^\d+\n/.test(said), 20);
        await until(LIMIT_MS, 'the wrapper started', () => existsSync(wrapper.log) && wrappedServer(wrapper.log).port > 0, 20);
        const { port } = wrappedServer(wrapper.log);
        const connected = async (): Promise<boolean> => (await askServer(port, async (server) => (await server.dbsize()) > 0)) === true;
        await until(LIMIT_MS, 'the run seeding its queue', connected, 50);
        process.kill(Number(said.trim()), 'SIGKILL');
        await assertNothingLeft(wrapper.log);
      } finally {
        parent.stdin.end();
        parent.kill('SIGKILL');
      }
    });

    for (const [how, run] of [
      ['the server its child, in the foreground, no exec', 'SERVER'],
      ['& exit 0', 'SERVER & exit 0'],
      ['(… &)', '(SERVER &)'],
      ['in a session of its own, the wrapper waiting: setsid -w', 'setsid -w SERVER'],
      ['in a session of its own: setsid, not exec', 'setsid SERVER'],
      // Both leave before their server is up: setsid forks it into a session of its own.
      ['in a session of its own, the wrapper gone at once: setsid -f', 'setsid -f SERVER'],
      ['in a session of its own, from the group leader: exec setsid', 'exec setsid SERVER'],
    ] as const) {
      test(`a wrapper that starts its server (${how}): the run goes, exit 0, and nothing is left`, run.startsWith('setsid') ? SETSID : {}, async () => {
        const result = await runWrapped(serverWrapper(bin, run));
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /^server: \S+ \S+ \(embedded, now stopped\)$/m);
      });
    }

    test('SIGKILL of the tool mid-run, its server in a session of its own (setsid -w): the keeper stops that server too', SETSID, async () => {
      // The keeper notes the real server's pid in its folder once the tool has told it.
      await killedOnce(serverWrapper(bin, 'setsid -w SERVER'), LONG_LOOP, "the server's pid told to the keeper", (_port, dir) =>
        existsSync(`${dir}/.emq-race-server-pid`),
      );
    });

    for (const run of ['setsid -f', 'exec setsid']) {
      test(`SIGKILL of the tool while a server the wrapper forked away (${run}) is not yet named: the keeper, which found it, stops it`, SETSID, async () => {
        // The forked process waits before it becomes the server, so the tool, which names a server
        // only once it is up, cannot have named it: the pid the keeper notes is one it found itself.
        const wrapper = serverWrapper(bin, `${run} sh -c 'sleep 5; exec "$@"' sh SERVER`);
        await killedOnce(wrapper, LONG_LOOP, 'the forked server found by the keeper', (_port, dir) => existsSync(`${dir}/.emq-race-server-pid`));
      });
    }

    test("a user's process in the server's folder, naming the server's address as a title would, is not the keeper's: it is left running", SETSID, async () => {
      const wrapper = serverWrapper(bin);
      const cli = startCli(['--server-bin', wrapper.path, ...LONG_LOOP]);
      let client: ChildProcess | undefined;
      try {
        await until(LIMIT_MS, 'the wrapper started', () => existsSync(wrapper.log) && wrappedServer(wrapper.log).port > 0, 20);
        const { port, dir } = wrappedServer(wrapper.log);
        // The wrapper's server named to the keeper: it is up.
        await until(LIMIT_MS, 'the server up', () => existsSync(`${dir}/.emq-race-server-pid`), 20);
        // A session of its own, in the folder, with an argument just like a server's title: all a
        // forked-away server has but the run's output pipe.
        client = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)', `redis-server 127.0.0.1:${port}`, `redis://127.0.0.1:${port}`], {
          cwd: dir,
          detached: true,
          stdio: 'ignore',
        });
        const pid = client.pid ?? 0;
        await until(LIMIT_MS, 'the client running', () => commandLine(pid).includes(`127.0.0.1:${port}`), 20);
        cli.child.kill('SIGTERM');
        await within(LIMIT_MS, 'the stopped run', cli.done);
        await until(LIMIT_MS, 'the folder removed', () => !existsSync(dir), 20);
        assert.equal(running(pid), true, "the user's process still runs");
      } finally {
        cli.child.kill('SIGKILL');
        if (client?.pid) killWithDescendants(client.pid);
        await assertNothingLeft(wrapper.log);
      }
    });

    test("a wrapper whose server daemonizes (--daemonize yes after the tool's arguments): the start fails, exit 3, and no server is left on any port tried", async () => {
      const wrapper = serverWrapper(bin, 'SERVER --daemonize yes');
      const result = await startFails(wrapper);
      assert.equal(result.code, 3);
      assert.match(result.stderr, /^emq-race: could not start \S+: /);
      // Not a port taken meanwhile: not tried again.
      assert.equal(wrappedStarts(wrapper.log).length, 1);
    });

    test("a wrapper that raises the server's log level past notice: after the wait, one line naming the readiness line it never printed, not the server's last warning; exit 3, nothing left", async () => {
      // A healthy server, but at --loglevel warning it never prints "Ready to accept connections".
      const wrapper = serverWrapper(bin, 'exec SERVER --loglevel warning');
      const result = await startFails(wrapper);
      assert.equal(result.code, 3);
      const lines = result.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(
        lines[0] ?? '',
        /^emq-race: could not start \S+: it did not say "Ready to accept connections" within 10 s \(the tool reads that line of the server's log on its standard output, at --loglevel notice or more verbose\)(; its last line: .+|; it printed nothing)$/,
      );
      assert.equal(wrappedStarts(wrapper.log).length, 1);
    });

    test('a port taken between its probe and the bind: the start is tried again on another port, and the run goes', async () => {
      // The first start fails as a server does whose port another process bound first.
      const wrapper = serverWrapper(
        bin,
        `if [ ! -e LOG.taken ]; then : >LOG.taken; echo '# Warning: Could not create server TCP listening socket: bind: Address already in use'; exit 1; fi; SERVER`,
      );
      const result = await runWrapped(wrapper);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(wrappedStarts(wrapper.log).length, 2, 'two starts');
    });

    for (const [how, run, queue] of [
      ['the server its child, no exec', 'SERVER', 'race-keepwrapped'],
      ['the server in the background, the wrapper gone', 'SERVER & exit 0', 'race-keepbackground'],
      ['the server in a session of its own, the wrapper gone', 'setsid SERVER', 'race-keepsession'],
      ['the server forked into a session of its own, the wrapper gone at once', 'setsid -f SERVER', 'race-keepforked'],
    ] as const) {
      test(`--keep with a wrapper (${how}): the pid it names is the server's, and stopping it leaves nothing`, async () => {
        const wrapper = serverWrapper(bin, run);
        try {
          const result = await runCli(['--server-bin', wrapper.path, '--mode', 'atomic', '--jobs', '20', '--queue', queue, '--keep']);
          assert.equal(result.code, 0, result.stderr);
          const { port, dir } = wrappedServer(wrapper.log);
          const pid = Number(/kept: embedded server at \S+, pid (\d+);/.exec(result.stdout)?.[1]);
          assert.match(commandLine(pid), new RegExp(`127\\.0\\.0\\.1:${port}\\b`), `pid ${pid} is the kept server`);
          assert.equal(existsSync(dir), true, 'the kept server keeps its folder while it runs');
          process.kill(pid, 'SIGTERM');
        } finally {
          await assertNothingLeft(wrapper.log);
        }
      });
    }
  });
}

/**
 * --server-bin wrapper scripts that do more than run the server as their child: one whose server
 * is still starting when the tool is killed, one that goes on once its server has ended, and one
 * that starts its server in the background and exits. The keeper runs the wrapper in a process
 * group of its own and watches and stops that whole group, so each run ends promptly and leaves no
 * server, wrapper, wrapper's child, keeper or folder behind.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { BIN, cliEnv, runCli, type CliResult } from '../helpers/cli.js';
import { LONG_LOOP, startCli, until, within } from '../helpers/cli-process.js';
import { alive, askServer, commandLine, killWithDescendants, namingServer, serverWrapper, wrappedServer } from '../helpers/processes.js';
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

/**
 * Waits (a guard against a hang, not a timing) until nothing of the wrapper's last run is left: no
 * process naming its server's port or folder, none of the `others` it noted, and no folder; then
 * kills whatever is left, so that a failure leaves nothing running, and says what it was.
 */
async function assertNothingLeft(log: string, others: readonly number[] = []): Promise<void> {
  const server = wrappedServer(log);
  const left = (): number[] => [...namingServer(server.port, server.dir), ...others.filter(alive)];
  await until(LIMIT_MS, 'the server, its wrapper, keeper and folder gone', () => left().length === 0 && !existsSync(server.dir), 20).catch(() => {});
  const found = left().map((pid) => `${pid} ${commandLine(pid)}`);
  for (const pid of left()) killWithDescendants(pid);
  assert.deepEqual(found, [], 'no process of the run left');
  assert.equal(existsSync(server.dir), false, "the server's folder is removed");
}

for (const kind of oneServerKind(import.meta.url)) {
  const bin = which(kind.bin) ?? kind.bin;
  describe(`--server-bin wrappers [${kind.kind}]`, { skip: which(kind.bin) === undefined ? `${kind.bin} is not installed` : false }, () => {
    test("SIGKILL of the tool while a wrapper's server is still starting: the server goes, wrapper, keeper and folder too", async () => {
      // The server's readiness line held back: the tool never learns its pid, and is killed while
      // it waits, the server up and its wrapper's child.
      const wrapper = serverWrapper(bin, `SERVER | grep --line-buffered -v 'Ready to accept'`);
      const cli = startCli(['--server-bin', wrapper.path, '--mode', 'atomic', '--jobs', '20']);
      try {
        await until(LIMIT_MS, 'the wrapper started', () => existsSync(wrapper.log) && wrappedServer(wrapper.log).port > 0, 20);
        const { port, dir } = wrappedServer(wrapper.log);
        await until(LIMIT_MS, 'the server running', () => namingServer(port, dir).some((pid) => commandLine(pid).includes(`127.0.0.1:${port}`)), 20);
        cli.child.kill('SIGKILL');
        const result = await within(LIMIT_MS, 'the killed run', cli.done);
        assert.equal(result.signal, 'SIGKILL');
      } finally {
        cli.child.kill('SIGKILL');
        await assertNothingLeft(wrapper.log);
      }
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
      ['& exit 0', 'SERVER & exit 0'],
      ['(… &)', '(SERVER &)'],
    ] as const) {
      test(`a wrapper that starts its server in the background and exits (${how}): the run goes, exit 0, and nothing is left`, async () => {
        const wrapper = serverWrapper(bin, run);
        let result: CliResult | undefined;
        try {
          result = await runCli(['--server-bin', wrapper.path, '--mode', 'atomic', '--jobs', '20']);
        } finally {
          await assertNothingLeft(wrapper.log);
        }
        assert.equal(result.code, 0, result.stderr);
        assert.match(result.stdout, /^server: \S+ \S+ \(embedded, now stopped\)$/m);
      });
    }

    test("--keep with a wrapper that starts its server in the background and exits: the pid it names is the server's, and stopping it leaves nothing", async () => {
      const wrapper = serverWrapper(bin, 'SERVER & exit 0');
      try {
        const result = await runCli(['--server-bin', wrapper.path, '--mode', 'atomic', '--jobs', '20', '--queue', 'race-keepbackground', '--keep']);
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
  });
}

/**
 * A terminal closed under a `--url` run, as a closed window, tmux kill-session or a dropped SSH
 * session closes it: the built CLI runs on a real pseudo-terminal (helpers/closed-terminal.py), the
 * terminal's master side is closed mid-run (the kernel hangs it up and sends SIGHUP) and a second
 * SIGHUP follows, as the shell sends it. The run's keys must be gone, the exit code 129, and Node
 * must not abort on its way out (it did, on Node 20, restoring a terminal that was gone).
 *
 * The CLI runs on the Node that runs this file: `.node24/bin/node --test
 * dist/test/closed-terminal.test.js` checks Node 24. Needs python3 (its standard pty module).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { which, type EmbeddedServer } from '../../src/server/embedded-server.js';
import { BIN } from '../helpers/cli.js';
import { within, until } from '../helpers/cli-process.js';
import { killWithDescendants, whereStuck } from '../helpers/processes.js';
import { holdCall, type HeldCall } from '../helpers/held-call.js';
import { allKeys } from '../helpers/keyspace.js';
import { oneServerKind } from '../helpers/servers.js';
import { unrelatedState, useFilledServer, type UnrelatedState } from '../helpers/unrelated-data.js';

const HELPER = fileURLToPath(new URL('../../../test/helpers/closed-terminal.py', import.meta.url));
const LIMIT_MS = 30_000;
const PYTHON = which('python3');

interface Ended {
  readonly exit: number | null;
  readonly signal: number | null;
  readonly output: string;
}

/**
 * The CLI with `args` on a pseudo-terminal of its own. `close()` closes the terminal, calls
 * `hungUp` once the CLI has taken both hang-ups, and resolves with how the CLI ended.
 */
function onTerminal(args: readonly string[]): { started: Promise<number>; close(hungUp?: () => void): Promise<Ended>; printed(): string[] } {
  const helper = spawn(PYTHON ?? 'python3', [HELPER, process.execPath, BIN, ...args], {
    env: { ...process.env, REDIS_URL: '', NO_COLOR: '1' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const lines: ((line: string) => void)[] = [];
  const printed: string[] = [];
  helper.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (let at = out.indexOf('\n'); at >= 0; at = out.indexOf('\n')) {
      const line = out.slice(0, at);
      out = out.slice(at + 1);
      printed.push(line);
      lines.shift()?.(line);
    }
  });
  const nextLine = (): Promise<string> => new Promise((resolve) => lines.push(resolve));
  const started = nextLine().then((line) => (JSON.parse(line) as { pid: number }).pid);
  return {
    started,
    printed: () => [...printed, ...(out ? [out] : [])],
    async close(hungUp) {
      const taken = nextLine();
      const ended = nextLine();
      helper.stdin.end('close\n');
      // A program already gone takes no hang-up: the helper then says how it ended at once.
      const first = JSON.parse(await taken) as Ended | { hungup: true };
      if ('hungup' in first) {
        hungUp?.();
        return JSON.parse(await ended) as Ended;
      }
      return first;
    },
  };
}

// The subject is a terminal closed under the tool, the same on either server kind: one kind per file (oneServerKind).
for (const kind of oneServerKind(import.meta.url)) {
  const skip =
    which(kind.bin) === undefined
      ? `${kind.bin} is not installed`
      : PYTHON === undefined
        ? 'python3 is not installed (Debian: apt-get install python3)'
        : false;
  describe(`a closed terminal [${kind.kind}]`, { skip }, () => {
    let server: EmbeddedServer;
    let redis: Redis;
    let initial: UnrelatedState;
    useFilledServer({ bin: kind.bin }, (started, connected, state) => {
      server = started;
      redis = connected;
      initial = state;
    });

    /** With `hold`, the run goes through that relay, its held call let go once both hang-ups are taken. */
    const closeWhen = async (queue: string, args: readonly string[], what: string, ready: () => Promise<boolean>, hold?: HeldCall): Promise<void> => {
      const cli = onTerminal(['--url', hold?.url ?? server.url, '--queue', queue, ...args]);
      let ended: Ended;
      try {
        await within(LIMIT_MS, 'the CLI on its terminal', cli.started);
        if (hold) await within(LIMIT_MS, what, hold.held);
        await until(LIMIT_MS, what, ready);
        const pid = await cli.started;
        ended = await within(
          LIMIT_MS,
          'the run after its terminal closed',
          cli.close(() => hold?.release()),
        ).catch((err: Error) => {
          // Where the run stands, for the failure's message, then the run killed: nothing left running.
          const stuck = whereStuck(pid);
          killWithDescendants(pid);
          throw new Error(`${err.message}; the helper printed: ${JSON.stringify(cli.printed())}\n${stuck}`);
        });
      } finally {
        await hold?.close();
      }
      assert.equal(ended.signal, null, `ended by signal ${ended.signal} (6 is Node's abort)`);
      assert.equal(ended.exit, 129);
      assert.deepEqual(
        (await allKeys(redis)).filter((key) => key.startsWith(`emq:{${queue}}:`)),
        [],
        "the run's keys are gone",
      );
      assert.deepEqual(await unrelatedState(redis), initial);
    };

    test('closed while the program still loads, at moments a few ms apart: 129 or the hang-up itself, never an abort', async () => {
      // The window between the first signal listener and the rest of the program lasts some tens
      // of ms on a 2-core machine: closes spread over the first 200 ms land in it several times.
      // On a loaded machine the start-up itself can outlast those 200 ms, every close then landing
      // before any listener (SIGHUP): the closes go on, 100 ms apart, until one reaches the tool's
      // handlers (129), up to 3 s.
      const endings: string[] = [];
      const next = (delayMs: number): number => (delayMs < 200 ? delayMs + 12 : delayMs + 100);
      for (let delayMs = 0; delayMs <= 200 || (!endings.includes('exit 129') && delayMs <= 3000); delayMs = next(delayMs)) {
        const cli = onTerminal(['--url', server.url, '--queue', `race-tty-load-${delayMs}`, '--mode', 'atomic', '--jobs', '100000']);
        const pid = await within(LIMIT_MS, 'the CLI on its terminal', cli.started);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        const ended = await within(LIMIT_MS, 'the CLI after its terminal closed', cli.close()).catch((err: Error) => {
          killWithDescendants(pid);
          throw err;
        });
        endings.push(ended.signal === null ? `exit ${ended.exit}` : `signal ${ended.signal}`);
      }
      // Never Node's abort on its way out: SIGABRT (6), SIGSEGV (11), or exit 134. (Mostly 129, the
      // tool's own code, or SIGHUP (1), the hang-up before any listener, as the docs allow; Node 24
      // has been seen to end one close in about 50 with exit 1, not yet explained.)
      assert.deepEqual(
        endings.filter((e) => e === 'signal 6' || e === 'signal 11' || e === 'exit 134'),
        [],
        endings.join(', '),
      );
      assert.ok(endings.includes('exit 129'), `some closes reached the tool's own handlers (129): ${endings.join(', ')}`);
      assert.deepEqual(
        (await allKeys(redis)).filter((key) => key.startsWith('emq:{race-tty-load-')),
        [],
        "no run's keys left",
      );
    });

    test("closed while seeding: exit 129, the run's keys gone, no abort", async () => {
      const queue = 'race-tty-seed';
      // The expired jobs seeded, the call that seeds the live ones (ids from 10,001) held at the
      // relay until the terminal is gone: the run is mid-seed however quick its seed.
      const hold = await holdCall(server.url, ['seed-jobs'], '10001');
      await closeWhen(
        queue,
        ['--mode', 'atomic', '--jobs', '10000', '--live', '1000'],
        'seeding',
        async () => (await redis.exists(`emq:{${queue}}:active`)) === 1,
        hold,
      );
    });

    test("closed while sweeping: exit 129, the run's keys gone, no abort", async () => {
      const queue = 'race-tty-sweep';
      // Seconds of sweeping (a pause after each probe): however late a busy machine lets the test see
      // the sweep begin, the run is still sweeping when its terminal closes.
      const args = ['--mode', 'loop', '--jobs', '10000', '--sweepers', '4', '--probe-delay', '5'];
      await closeWhen(queue, args, 'sweeping', async () => (await redis.llen(`emq:{${queue}}:pending`)) > 0);
    });

    test("closed while sweepers of their own processes sweep (they share the terminal): exit 129, the run's keys gone, no abort", async () => {
      const queue = 'race-tty-processes';
      // Two sweeper processes share the terminal: each more is another Node start-up.
      const args = ['--processes', '--mode', 'loop', '--jobs', '10000', '--sweepers', '2', '--probe-delay', '5'];
      await closeWhen(queue, args, 'sweeping', async () => (await redis.llen(`emq:{${queue}}:pending`)) > 0);
    });
  });
}

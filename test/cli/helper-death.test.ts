/**
 * The helper processes a run relies on, each killed (SIGKILL) from outside at each phase where it
 * lives: the embedded server's keeper while seeding, sweeping and auditing and during `explain`, and a sweeper child of
 * `--processes` while it prepares and while it sweeps; and a sweeper child stopped (SIGSTOP), with
 * and without a Ctrl-C after. The tool must notice, end within the
 * documented bound (HELPER_DEATH_BOUND_MS, docs/shared-servers.md "Every way a run can end") with
 * one line and exit 3, and leave no process of the run (server, keeper, children) and, on a
 * `--url` server, none of the run's keys. The latency proxy's thread cannot be killed from outside
 * the process: its failure path is tested in-process (latency-thread-loss.test.ts).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { which, type EmbeddedServer } from '../../src/server/embedded-server.js';
import { LONG_LOOP, oneErrorLine, startCli, within, type RunningCli, until } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import { alive, commandLine, connectOnceUp, descendants, embeddedChild } from '../helpers/processes.js';
import { oneServerKind } from '../helpers/servers.js';
import { unrelatedState, useFilledServer, type UnrelatedState } from '../helpers/unrelated-data.js';

/** docs/shared-servers.md: a run ends within 20 s of a helper's death (its longest own waits). */
const HELPER_DEATH_BOUND_MS = 20_000;
const LIMIT_MS = 15_000;

/** The first process below the CLI whose command line names `file`. */
async function helperOf(cli: RunningCli, file: string): Promise<number> {
  let found: number | undefined;
  await until(LIMIT_MS, `a ${file} process`, () => (found = descendants(cli.child.pid ?? 0).find((pid) => commandLine(pid).includes(file))) !== undefined);
  return found ?? 0;
}

/**
 * Kills `helper` (SIGKILL) with every process of the run noted first, then checks the end: exit 3
 * within the bound, one line matching `says`, and no process of the run left.
 */
async function killAndCheck(cli: RunningCli, helper: number, says: RegExp): Promise<void> {
  const ofRun = descendants(cli.child.pid ?? 0);
  process.kill(helper, 'SIGKILL');
  const result = await within(HELPER_DEATH_BOUND_MS, 'the run after a helper died', cli.done);
  assert.equal(result.code, 3, result.stderr);
  assert.match(oneErrorLine(result.stderr) ?? result.stderr, says);
  // The tool has ended; its helpers were to go with it (a guard, not a timing).
  await until(LIMIT_MS, 'every process of the run to end', () => ofRun.every((pid) => !alive(pid)));
}

// The subject is the tool's own helper processes, the same on either server kind: one kind per file (oneServerKind).
for (const kind of oneServerKind(import.meta.url)) {
  describe(`a helper process killed [${kind.kind}]`, { skip: which(kind.bin) === undefined ? `${kind.bin} is not installed` : false }, () => {
    let server: EmbeddedServer;
    let redis: Redis;
    let initial: UnrelatedState;
    useFilledServer({ bin: kind.bin }, (started, connected, state) => {
      server = started;
      redis = connected;
      initial = state;
    });

    const keeperPhases = [
      { phase: 'seeding', args: ['--mode', 'atomic', '--jobs', '60000'], ready: async (own: Redis) => (await own.exists('emq:{race-keeper}:active')) === 1 },
      {
        phase: 'sweeping',
        args: ['--mode', 'loop', '--jobs', '10000', '--sweepers', '4', '--probe-delay', '5'],
        ready: async (own: Redis) => (await own.llen('emq:{race-keeper}:pending')) > 0,
      },
      // Once every job stands in `pending`, the sweepers are done and the audit is reading.
      {
        phase: 'auditing',
        args: ['--mode', 'atomic', '--jobs', '50000', '--batch', '3000'],
        ready: async (own: Redis) => (await own.llen('emq:{race-keeper}:pending')) >= 50_000,
      },
    ];
    for (const { phase, args, ready } of keeperPhases) {
      test(`the embedded server's keeper killed while ${phase}: exit 3 saying so, the server stopped by the tool, nothing left`, async () => {
        const cli = startCli(['--server-bin', kind.bin, '--queue', 'race-keeper', ...args]);
        const child = await within(LIMIT_MS, 'the embedded server', embeddedChild(cli.child.pid ?? 0));
        const keeper = await helperOf(cli, 'server-keeper.sh');
        const own = await within(LIMIT_MS, 'connecting', connectOnceUp(child.port));
        try {
          await until(LIMIT_MS, phase, () => ready(own));
        } finally {
          own.disconnect();
        }
        await killAndCheck(
          cli,
          keeper,
          /^emq-race: the embedded server's keeper process died \(SIGKILL\); the tool stopped its server at redis:\/\/127\.0\.0\.1:\d+ itself$/,
        );
        assert.equal(alive(child.pid), false, 'the embedded server is stopped');
        assert.equal(existsSync(child.dir), false, "the embedded server's folder is removed");
      });
    }

    /**
     * An `explain` on its embedded server, its writes held once it has claimed its first queue and
     * is replaying on it, so that a helper killed then dies mid-replay. A replay takes a moment only:
     * on a busy machine explain can finish before the test gets its connection in, and then (having
     * ended clean) it is started again, three times at most.
     */
    const explainHeldMidReplay = async (): Promise<{ cli: RunningCli; child: { pid: number; port: number; dir: string }; keeper: number }> => {
      for (let attempt = 1; ; attempt++) {
        const cli = startCli(['explain', '--server-bin', kind.bin, '--queue', `race-explain-keeper-${attempt}`]);
        try {
          const child = await within(LIMIT_MS, 'the embedded server', embeddedChild(cli.child.pid ?? 0));
          const keeper = await helperOf(cli, 'server-keeper.sh');
          const own = await within(LIMIT_MS, 'connecting', connectOnceUp(child.port));
          try {
            await until(LIMIT_MS, 'the replay', async () => (await own.dbsize()) > 0);
            await own.call('CLIENT', 'PAUSE', '60000', 'WRITE');
            if ((await own.dbsize()) === 0) {
              // Between the two readings explain finished and removed its queue: let it end.
              await own.call('CLIENT', 'UNPAUSE');
              throw new Error('explain finished its replay before its writes were held');
            }
          } finally {
            own.disconnect();
          }
          return { cli, child, keeper };
        } catch (err) {
          const ended = await within(LIMIT_MS, 'explain', cli.done);
          if (attempt === 3 || ended.code !== 0) throw err;
        }
      }
    };

    test("the embedded server's keeper killed during explain: exit 3 saying so, the server stopped by the tool, nothing left", async () => {
      const { cli, child, keeper } = await explainHeldMidReplay();
      await killAndCheck(
        cli,
        keeper,
        /^emq-race: the embedded server's keeper process died \(SIGKILL\); the tool stopped its server at redis:\/\/127\.0\.0\.1:\d+ itself$/,
      );
      const result = await cli.done;
      assert.equal(result.stdout, '', 'no replay is printed');
      assert.equal(alive(child.pid), false, 'the embedded server is stopped');
      assert.equal(existsSync(child.dir), false, "the embedded server's folder is removed");
    });

    /**
     * A --processes race on the test's server, with a sweeper child killed once `ready` holds. Two
     * sweepers: a child to kill and one that lives on; each more is another Node start-up.
     */
    const killSweeperChild = async (queue: string, ready: () => Promise<boolean>): Promise<void> => {
      const cli = startCli(['--url', server.url, '--processes', ...LONG_LOOP, '--sweepers', '2', '--queue', queue]);
      const child = await helperOf(cli, 'sweeper-process.js');
      await until(LIMIT_MS, 'the phase', ready);
      await killAndCheck(cli, child, /a sweeper process ended early \(killed by SIGKILL\)/);
      assert.deepEqual(
        (await allKeys(redis)).filter((key) => key.startsWith(`emq:{${queue}}:`)),
        [],
        "the run's keys are gone",
      );
      assert.deepEqual(await unrelatedState(redis), initial);
    };

    test('a sweeper child killed while it prepares: exit 3 saying so, no child and no key left', async () => {
      // Killed as soon as it exists: before it can have connected, let alone reported ready.
      await killSweeperChild('race-child-setup', async () => true);
    });

    test('a sweeper child killed while it sweeps: exit 3 saying so, no child and no key left', async () => {
      await killSweeperChild('race-child-sweep', async () => (await redis.llen('emq:{race-child-sweep}:pending')) > 0);
    });

    /**
     * A --processes race whose first sweeper child is stopped (SIGSTOP) once it sweeps, then `then`
     * done to the tool; the end must show `code` and a line matching `says`, and leave no process
     * of the run and no key. A stopped child answers nothing and holds a SIGTERM until it runs again.
     */
    const stopSweeperChild = async (queue: string, then: (cli: RunningCli) => void, code: number, says: RegExp): Promise<void> => {
      const args = ['--url', server.url, '--processes', '--mode', 'loop', '--jobs', '10000', '--sweepers', '2', '--probe-delay', '5', '--queue', queue];
      const cli = startCli(args);
      const child = await helperOf(cli, 'sweeper-process.js');
      await until(LIMIT_MS, 'the sweep', async () => (await redis.llen(`emq:{${queue}}:pending`)) > 0);
      const ofRun = descendants(cli.child.pid ?? 0);
      process.kill(child, 'SIGSTOP');
      then(cli);
      const result = await within(HELPER_DEATH_BOUND_MS, 'the run with a stopped sweeper child', cli.done);
      assert.equal(result.code, code, result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? result.stderr, says);
      await until(LIMIT_MS, 'every process of the run to end', () => ofRun.every((pid) => !alive(pid)));
      assert.deepEqual(
        (await allKeys(redis)).filter((key) => key.startsWith(`emq:{${queue}}:`)),
        [],
        "the run's keys are gone",
      );
      assert.deepEqual(await unrelatedState(redis), initial);
    };

    test('a sweeper child stopped (SIGSTOP) while it sweeps, then SIGINT: exit 130, the stopped child ended, no key left', async () => {
      await stopSweeperChild('race-child-stop-int', (cli) => cli.child.kill('SIGINT'), 130, /^emq-race: interrupted by SIGINT$/);
    });

    test('a sweeper child stopped (SIGSTOP) while it sweeps, and nothing else: exit 3 saying it fell silent, no child and no key left', async () => {
      await stopSweeperChild(
        'race-child-stop',
        () => {},
        3,
        /^emq-race: a sweeper process \(pid \d+\) sent nothing for 10 s: is it paused \(SIGSTOP\) or stuck\? The race cannot be judged without its record/,
      );
    });
  });
}

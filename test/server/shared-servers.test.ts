/**
 * A shared server holding somebody else's queue, `race-payments` (job:1, job:2, job:50 and
 * pending, the very names a run would create), beside other unrelated data. Whatever stops a
 * claim halfway (an ACL user without SCAN, EVAL, GET or DEL; the connection cut, or the tool
 * killed, between the claim and its confirmation) leaves at most an expiring, unconfirmed marker,
 * and `clean --all --yes` afterwards leaves every foreign key byte-identical (DEBUG DIGEST-VALUE,
 * type and expiry). A live run's heartbeat makes `clean` refuse its queue; a run whose claim is
 * taken from it stops without deleting anything; one whose marker another client deleted stops
 * and deletes what is left of its keys; a frozen server (SIGSTOP) ends a run in one
 * bounded wait. Real servers, started with the DEBUG command enabled.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { HEARTBEAT_EVERY_MS } from '../../src/queue/owner-claim.js';
import { ANSWER_TIMEOUT_MS, connect, parseServerUrl } from '../../src/server/connection.js';
import { startEmbeddedServer, which } from '../../src/server/embedded-server.js';
import { parseOwnerValue } from '../../src/queue/owner-marker.js';
import { readmeAclRules, userUrl } from '../helpers/acl.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { oneErrorLine, startCli, within, type RunningCli } from '../helpers/cli-process.js';
import { allKeys, valueDigests } from '../helpers/keyspace.js';
import { sends, startProxy } from '../helpers/proxy.js';
import { forEachServer, SERVER_KINDS } from '../helpers/servers.js';
import { fillPaymentsQueue, fillUnrelated } from '../helpers/unrelated-data.js';

const PASSWORD = 'shared-servers-pw-5Vb';
/** A guard against hangs, not a timing. */
const LIMIT_MS = 20_000;
const DEBUG = ['--enable-debug-command', 'local'];

const PAYMENTS_OWNER = 'emq:{race-payments}:owner';

interface FrozenOutcome {
  readonly port: number;
  readonly result: CliResult;
  readonly explain: CliResult;
}

/**
 * A run on a server of its own, frozen (SIGSTOP) once it sweeps, with explain started beside it on
 * the frozen server: what each ended with. One wait of ANSWER_TIMEOUT_MS, then the end: the
 * documented bound, with room for a busy machine.
 */
async function frozenScenario(bin: string): Promise<FrozenOutcome> {
  const frozen = await startEmbeddedServer({ bin });
  let stopped = false;
  try {
    const watcher = await connect(parseServerUrl(frozen.url));
    const run = runCli(['--url', frozen.url, '--queue', 'race-frozen', '--mode', 'loop', '--jobs', '2000', '--sweepers', '4', '--probe-delay', '2']);
    try {
      await within(
        LIMIT_MS,
        'the run sweeping',
        (async () => {
          while ((await watcher.llen('emq:{race-frozen}:pending')) === 0) await sleep(2);
        })(),
      );
    } finally {
      watcher.disconnect();
    }
    process.kill(frozen.pid, 'SIGSTOP');
    stopped = true;
    const bound = ANSWER_TIMEOUT_MS + 5000;
    // explain, started on the frozen server, waits alongside the run.
    const [result, explain] = await Promise.all([
      within(bound, 'the run on a frozen server', run),
      within(bound, 'explain on a frozen server', runCli(['explain', '--url', frozen.url])),
    ]);
    return { port: frozen.port, result, explain };
  } finally {
    if (stopped) process.kill(frozen.pid, 'SIGCONT');
    await frozen.stop();
  }
}

/**
 * Each kind's frozen-server scenario, started as the file starts and asserted in its test: its
 * wait is idle, on a server no other test uses, so it goes on beside the other tests rather than
 * after them. A failure is kept for the test to report.
 */
const frozenScenarios = new Map<string, Promise<FrozenOutcome>>();
before(() => {
  for (const kind of SERVER_KINDS) {
    if (which(kind.bin) === undefined) continue;
    const scenario = frozenScenario(kind.bin);
    scenario.catch(() => undefined);
    frozenScenarios.set(kind.kind, scenario);
  }
});

forEachServer(
  "a shared server with somebody else's queue",
  (handle, kind) => {
    let admin: Redis;
    let foreign: string[];
    let initial: Map<string, string>;
    before(async () => {
      admin = await connect(parseServerUrl(handle.url));
      await fillUnrelated(admin);
      await fillPaymentsQueue(admin);
      foreign = await allKeys(admin);
      initial = await valueDigests(admin, foreign);
    });
    after(() => admin?.disconnect());

    const untouched = async (): Promise<void> => assert.deepEqual(await valueDigests(admin, foreign), initial);

    /** No marker on race-payments, or only an unconfirmed one that expires. */
    const noTrustedMarker = async (): Promise<void> => {
      const value = await admin.get(PAYMENTS_OWNER);
      if (value === null) return;
      assert.equal(parseOwnerValue(value)?.phase, 'claiming', value);
      assert.ok((await admin.pttl(PAYMENTS_OWNER)) > 0, 'an unconfirmed marker expires');
    };

    /** An admin's clean of every queue: nothing of race-payments goes but, at most, the marker. */
    const cleanAll = async (): Promise<void> => {
      const clean = await within(LIMIT_MS, 'clean --all', runCli(['clean', '--url', handle.url, '--all', '--yes']));
      assert.equal(clean.code, 0, clean.stderr);
      assert.doesNotMatch(clean.stdout, /removed queue race-payments/);
      assert.equal(await admin.exists(PAYMENTS_OWNER), 0);
      assert.deepEqual(await allKeys(admin), foreign);
      await untouched();
    };

    for (const command of ['scan', 'eval', 'get', 'del']) {
      test(`a user without ${command}: exit 3 naming it, no marker clean would trust, and clean --all leaves race-payments as it was`, async () => {
        const user = `emq-race-no-${command}`;
        await admin.call('ACL', 'SETUSER', user, 'reset', ...readmeAclRules(PASSWORD), `-${command}`);
        // With the scripts cached by an earlier run, a user without EVAL would never be refused.
        await admin.call('SCRIPT', 'FLUSH');
        const result = await within(
          LIMIT_MS,
          'the run',
          runCli(['--url', userUrl(handle.url, user, PASSWORD), '--queue', 'race-payments', '--mode', 'atomic', '--jobs', '50']),
        );
        assert.equal(result.code, 3, result.stderr);
        const line = oneErrorLine(result.stderr);
        assert.ok(line, `one line, no stack trace: ${result.stderr}`);
        assert.match(line, new RegExp(`permission denied on \\S+ \\(${command.toUpperCase()}[,)]`));
        await noTrustedMarker();
        await cleanAll();
      });
    }

    for (const how of ['the connection cut', 'the tool killed'] as const) {
      test(`${how} between the claim and its confirmation: an expiring, unconfirmed marker at most, and clean --all removes only it`, async () => {
        let cli: RunningCli | undefined;
        let claimed = false;
        // The first command after the claim's SET (the SCAN that would confirm it) never reaches the server.
        const proxy = await startProxy(handle.server.port, (chunk) => {
          if (!claimed) {
            claimed = sends(chunk, 'SET') && chunk.includes(PAYMENTS_OWNER);
            return 'pass';
          }
          if (how === 'the tool killed') cli?.child.kill('SIGKILL');
          return 'cut';
        });
        try {
          cli = startCli(['--url', proxy.url, '--queue', 'race-payments', '--mode', 'atomic', '--jobs', '50']);
          const result = await within(LIMIT_MS, how, cli.done);
          if (how === 'the tool killed') {
            assert.equal(result.signal, 'SIGKILL');
          } else {
            assert.equal(result.code, 3, result.stderr);
            assert.match(oneErrorLine(result.stderr) ?? '', /lost the connection to the server/);
          }
        } finally {
          await proxy.close();
        }
        assert.ok(claimed, 'the claim was sent');
        assert.equal(parseOwnerValue(await admin.get(PAYMENTS_OWNER))?.phase, 'claiming', 'the claim was made, never confirmed');
        await noTrustedMarker();
        const clean = await runCli(['clean', '--url', handle.url, '--all', '--yes']);
        assert.match(clean.stdout, /removed the marker of queue race-payments \(1 key\); no other key is removed under an unconfirmed or older marker/);
        assert.match(clean.stderr, /left 4 keys under emq:\{race-payments\}:/);
        await cleanAll();
      });
    }

    test("a later mode's queue that is taken refuses the whole command before its first mode writes anything", async () => {
      const taken = 'emq:{race-second-loop}:x';
      await admin.set(taken, 'foreign');
      try {
        const writes = async (): Promise<string> =>
          (await admin.info('commandstats'))
            .split('\n')
            .filter((line) => /^cmdstat_(set|evalsha|eval|unlink|del|zadd|hset|rpush):/.test(line))
            .map((line) => line.replace(/,usec=.*/, ''))
            .join('\n');
        const before = await writes();
        const run = await runCli(['--url', handle.url, '--queue', 'race-second', '--jobs', '500']);
        assert.equal(run.code, 2, run.stderr);
        assert.equal(
          oneErrorLine(run.stderr),
          `emq-race: queue race-second-loop already has keys (${taken}): refusing to write over them; pick another --queue`,
        );
        assert.equal(run.stdout, '');
        assert.equal(await writes(), before, 'the atomic queue was never claimed, seeded nor cleaned');
        assert.deepEqual(await allKeys(admin), [...foreign, taken].sort());
      } finally {
        await admin.del(taken);
      }
    });

    /** Until the run on `queue` has moved a job to pending: it is sweeping. */
    const untilSweeping = (queue: string): Promise<void> =>
      within(
        LIMIT_MS,
        'the run sweeping',
        (async () => {
          while ((await admin.llen(`emq:{${queue}}:pending`)) === 0) await sleep(5);
        })(),
      );

    test('clean refuses a queue whose run is alive (its heartbeat, whatever the host), and leaves its keys; the run still cleans up after itself', async () => {
      // Long enough (at least 15 s of probe delays) to outlast both cleans on a busy machine; it is stopped after them.
      const cli = startCli(['--url', handle.url, '--queue', 'race-alive', '--mode', 'loop', '--jobs', '6000', '--sweepers', '2', '--probe-delay', '5']);
      await untilSweeping('race-alive');
      const owner = await admin.get('emq:{race-alive}:owner');
      assert.equal(await admin.get('emq:{race-alive}:heartbeat'), parseOwnerValue(owner)?.run);
      const one = await runCli(['clean', '--url', handle.url, '--queue', 'race-alive']);
      assert.equal(one.code, 2, one.stderr);
      assert.match(
        oneErrorLine(one.stderr) ?? '',
        /queue race-alive is in use by a live run \(pid \d+ on .+\): its heartbeat emq:\{race-alive\}:heartbeat is fresh; nothing removed/,
      );
      const all = await runCli(['clean', '--url', handle.url, '--all', '--yes']);
      assert.equal(all.code, 2, all.stderr);
      assert.match(all.stderr, /race-alive is in use by a live run/);
      assert.equal(await admin.get('emq:{race-alive}:owner'), owner);
      assert.equal(await admin.exists('emq:{race-alive}:job:1', 'emq:{race-alive}:active'), 2, 'the live run keeps its keys');
      // The run need not sweep to its end to show that it still owns its queue.
      cli.child.kill('SIGTERM');
      const result = await within(LIMIT_MS, 'the run', cli.done);
      assert.equal(result.code, 143, result.stderr);
      assert.deepEqual(await allKeys(admin), foreign);
      await untouched();
    });

    test("a run whose claim is taken from it (another run's marker in place of its own) stops with exit 3 and deletes none of its keys", async () => {
      // In this process: what is checked is the run's own stop, not a process's.
      const run = runCli(['--url', handle.url, '--queue', 'race-taken', '--mode', 'loop', '--jobs', '4000', '--sweepers', '2', '--probe-delay', '5']);
      await untilSweeping('race-taken');
      // What the clean of an emq-race from before heartbeats, then another run, might do.
      const theirs = parseOwnerValue(await admin.get('emq:{race-taken}:owner'));
      assert.ok(theirs);
      await admin.set('emq:{race-taken}:owner', JSON.stringify({ ...theirs, run: 'another-run' }));
      const result = await within(HEARTBEAT_EVERY_MS + LIMIT_MS, 'the run', run);
      assert.equal(result.code, 3, result.stderr);
      assert.match(
        oneErrorLine(result.stderr) ?? '',
        /queue race-taken was taken from this run while it ran: its owner marker emq:\{race-taken\}:owner now holds another run's claim; .*none of the queue's keys deleted/,
      );
      const left = (await allKeys(admin)).filter((key) => key.startsWith('emq:{race-taken}:'));
      assert.ok(left.includes('emq:{race-taken}:job:1') && left.includes('emq:{race-taken}:active'), 'the keys stay');
      await admin.unlink(...left);
      await untouched();
    });

    test('a run whose marker is overwritten with a value no emq-race run writes stops with exit 3 saying so, and deletes none of its keys', async () => {
      const run = runCli(['--url', handle.url, '--queue', 'race-overwritten', '--mode', 'loop', '--jobs', '4000', '--sweepers', '2', '--probe-delay', '5']);
      await untilSweeping('race-overwritten');
      // What a relay that turned to +OK to everything answers a GET, and what another client might write.
      await admin.set('emq:{race-overwritten}:owner', 'OK');
      const result = await within(HEARTBEAT_EVERY_MS + LIMIT_MS, 'the run', run);
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr) ?? '';
      assert.match(
        line,
        /the owner marker emq:\{race-overwritten\}:owner of queue race-overwritten now holds a value that no emq-race run writes: another client overwrote it, or the server at .+ stopped answering as Redis does; stopped, and none of the queue's keys deleted/,
      );
      assert.doesNotMatch(line, /another run's claim/);
      const left = (await allKeys(admin)).filter((key) => key.startsWith('emq:{race-overwritten}:'));
      assert.ok(left.includes('emq:{race-overwritten}:job:1') && left.includes('emq:{race-overwritten}:active'), 'the keys stay');
      assert.equal(await admin.get('emq:{race-overwritten}:owner'), 'OK', 'the value written over the marker stays');
      await admin.unlink(...left);
      await untouched();
    });

    test('a run whose marker is deleted by another client stops with exit 3 saying so, blames no person, and removes what is left of its keys', async () => {
      const run = runCli(['--url', handle.url, '--queue', 'race-unmarked', '--mode', 'loop', '--jobs', '4000', '--sweepers', '2', '--probe-delay', '5']);
      await untilSweeping('race-unmarked');
      await admin.del('emq:{race-unmarked}:owner');
      const result = await within(LIMIT_MS, 'the run', run);
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr) ?? '';
      assert.match(line, /the keys of queue race-unmarked vanished from the server at \S+ while the run was live \(emq:\{race-unmarked\}:owner gone\)/);
      assert.doesNotMatch(line, /by hand/);
      assert.deepEqual(await allKeys(admin), foreign, 'nothing of the run is left for clean to refuse');
      await untouched();
    });

    test('a frozen server (SIGSTOP): the run and explain each end in one bounded wait, saying the server stopped answering', async () => {
      const { port, result, explain } = await (frozenScenarios.get(kind.kind) ?? Promise.reject(new Error('the scenario did not start')));
      const silent = new RegExp(`the server at redis://127\\.0\\.0\\.1:${port} stopped answering \\(no reply within ${ANSWER_TIMEOUT_MS / 1000} s\\)`);
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr) ?? '';
      assert.match(line, silent);
      assert.match(line, /emq-race clean --queue race-frozen/);
      assert.equal(explain.code, 3, explain.stderr);
      assert.match(oneErrorLine(explain.stderr) ?? '', silent);
    });
  },
  DEBUG,
);

/**
 * `emq-race explain` on a shared server claims its queue exactly as the race does (an owned marker
 * `clean` recognises, a job hash carrying the run's id, a heartbeat while it runs), refuses
 * somebody else's queue, ends without a hang for a user without +info, and a SIGINT or SIGTERM
 * while a step of the loop waits for its reply (the read step, and the replay's last step, B's
 * write) ends it with 130 / 143 after cleaning up, printing nothing of the replay (on one server
 * kind: the signal handling is the tool's own). The steps are held at the exact command by a relay
 * between the tool and the real server.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { parseOwnerValue } from '../../src/queue/owner-marker.js';
import { readmeAclRules, userUrl } from '../helpers/acl.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine, startCli, within } from '../helpers/cli-process.js';
import { allKeys, keyspaceDigest } from '../helpers/keyspace.js';
import { sends, startProxy } from '../helpers/proxy.js';
import { forEachServer, oneServerKind } from '../helpers/servers.js';
import { fillPaymentsQueue, fillUnrelated } from '../helpers/unrelated-data.js';

const PASSWORD = 'explain-claim-pw-8Hn';
/** A guard against hangs, not a timing. */
const LIMIT_MS = 20_000;

/**
 * The signal tests' one kind: what they check is the tool's own process (its signal handling, its
 * exit code, its clean-up by name), which comes out the same on either server, and each costs a
 * spawned CLI. The claim, the refusal and the ACL error, the server's own answers, run on both.
 */
const SIGNAL_KIND = oneServerKind(import.meta.url)[0]?.kind;

forEachServer('explain on a shared server', (handle, kind) => {
  let admin: Redis;
  let initial: Map<string, string>;
  before(async () => {
    admin = await connect(parseServerUrl(handle.url));
    await fillUnrelated(admin);
    await fillPaymentsQueue(admin);
    initial = await keyspaceDigest(admin);
  });
  after(() => admin?.disconnect());

  const untouched = async (): Promise<void> => assert.deepEqual(await keyspaceDigest(admin), initial);

  test("explain's queue carries the race's owned marker and run id, so clean removes a kept replay", async () => {
    const result = await runCli(['explain', '--url', handle.url, '--mode', 'atomic', '--queue', 'race-explained', '--keep', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const marker = parseOwnerValue(await admin.get('emq:{race-explained}:owner'));
    assert.equal(marker?.phase, 'owned');
    assert.equal(marker?.jobs, 1);
    assert.equal(await admin.hget('emq:{race-explained}:job:1', 'run'), marker?.run);
    assert.equal(await admin.exists('emq:{race-explained}:heartbeat'), 0, 'the heartbeat ends with the replay');
    const clean = await runCli(['clean', '--url', handle.url, '--queue', 'race-explained']);
    assert.equal(clean.code, 0, clean.stderr);
    assert.match(clean.stdout, /^removed queue race-explained: \d+ keys$/m);
    assert.equal(clean.stderr, '');
    await untouched();
  });

  test("explain on somebody else's queue: refused, exit 2, nothing touched", async () => {
    const result = await runCli(['explain', '--url', handle.url, '--mode', 'loop', '--queue', 'race-payments']);
    assert.equal(result.code, 2, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', /queue race-payments already has keys/);
    assert.equal(result.stdout, '');
    await untouched();
  });

  test('explain as a user without +info: one line naming INFO, exit 3, no hang', async () => {
    await admin.call('ACL', 'SETUSER', 'emq-race-noinfo', 'reset', ...readmeAclRules(PASSWORD), '-info');
    const result = await within(LIMIT_MS, 'explain', runCli(['explain', '--url', userUrl(handle.url, 'emq-race-noinfo', PASSWORD)]));
    assert.equal(result.code, 3, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', /permission denied on \S+ \(INFO\)/);
    assert.equal(result.stderr.split('\n').filter(Boolean).length, 1, result.stderr);
    await untouched();
  });

  // The session's connection comes first (0), then sweep A's (1) and sweep B's (2). In the default
  // schedule B's read follows A's, and B's write is the replay's very last step.
  const steps = [
    { step: 'read', command: 'HGET' },
    { step: 'write', command: 'HSET' },
  ];
  if (kind.kind !== SIGNAL_KIND) return;
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    for (const { step, command } of steps) {
      test(`${signal} while the loop's ${step} step waits for its reply: exit ${code} after cleaning up, nothing of the replay printed`, async () => {
        const queue = `race-${step}-${signal.toLowerCase()}`;
        let reached!: () => void;
        const atStep = new Promise<void>((resolve) => (reached = resolve));
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const proxy = await startProxy(handle.server.port, (chunk, connection) => {
          if (connection !== 2 || !sends(chunk, command)) return 'pass';
          reached();
          return held;
        });
        try {
          const cli = startCli(['explain', '--url', proxy.url, '--mode', 'loop', '--queue', queue]);
          await within(LIMIT_MS, `B's ${step} step`, atStep);
          cli.child.kill(signal);
          await within(LIMIT_MS, 'the notice', cli.waitForStderr(new RegExp(`${signal} received, cleaning up`)));
          // The reply comes only now, after the signal, as it would from a slow server.
          release();
          const result = await within(LIMIT_MS, 'explain', cli.done);
          assert.equal(result.code, code, result.stderr);
          assert.equal(result.stdout, '');
          assert.match(oneErrorLine(result.stderr) ?? '', new RegExp(`interrupted by ${signal}`));
        } finally {
          release();
          await proxy.close();
        }
        assert.deepEqual(
          (await allKeys(admin)).filter((key) => key.includes(`{${queue}}`)),
          [],
        );
        await untouched();
      });
    }
  }
});

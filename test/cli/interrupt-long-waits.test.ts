/**
 * A signal heard in the phases whose one wait is long: the re-leaser of `--cycles` (each call of
 * its script, and what it had left to lease again once the sweepers stopped), the latency proxy's
 * measuring before the race (hundreds of PINGs, a minute and more at `--latency 1000`), and
 * node-resque's own cleanOldWorkers (one call, a round trip per worker). Each run is held at a relay
 * (helpers/held-call.ts) on a call of that phase and never let go: only a run that stops waiting
 * when the signal comes can end, and it must end as any interrupted run does — the first signal's
 * exit code, one line naming it, nothing of the run left on the server.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { oneErrorLine, startCli, within } from '../helpers/cli-process.js';
import { holdCall, holdFirst, type HeldCall } from '../helpers/held-call.js';
import { allKeys } from '../helpers/keyspace.js';
import { sends } from '../helpers/proxy.js';
import { oneServerKind } from '../helpers/servers.js';
import { filledServer, unrelatedState } from '../helpers/unrelated-data.js';

const LIMIT_MS = 15_000;

for (const kind of oneServerKind(import.meta.url)) {
  describe(`interruptions of long waits [${kind.kind}]`, { skip: which(kind.bin) === undefined ? `${kind.bin} is not installed` : false }, () => {
    const filled = filledServer({ bin: kind.bin });

    /**
     * Runs `args` through `hold`'s relay, sends SIGINT once the held call is there and the run
     * has heard it, and closes the relay only once the run has ended: the held call never reaches
     * the server, so the run can end only by no longer waiting for it.
     */
    const interruptHeld = async (hold: HeldCall, args: readonly string[], queue: string): Promise<void> => {
      const cli = startCli(['--url', hold.url, '--queue', queue, ...args]);
      let result: Awaited<typeof cli.done>;
      try {
        await within(LIMIT_MS, 'the held call', hold.held);
        cli.child.kill('SIGINT');
        await within(LIMIT_MS, 'the notice', cli.waitForStderr(/SIGINT received, cleaning up/));
        result = await within(LIMIT_MS, 'the interrupted run, its call still held', cli.done);
      } finally {
        await hold.close();
      }
      assert.equal(result.code, 130, result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? '', /^emq-race: interrupted by SIGINT$/);
      assert.equal(result.stdout, '');
      assert.deepEqual(
        (await allKeys(filled.redis)).filter((key) => key.startsWith(`emq:{${queue}}`)),
        [],
      );
      assert.deepEqual(await unrelatedState(filled.redis), filled.initial);
    };

    test("--cycles: SIGINT while the re-leaser's call is held: exit 130, the run's keys deleted", async () => {
      // The re-leaser's first call, sent as the race starts (by its key: the script's SHA alone
      // also matches the check that it is loaded): the sweepers race on meanwhile, and the run
      // then waits for the re-leaser, as it did for every job left to lease again.
      const queue = 'race-cycles-stop';
      const hold = await holdCall(filled.server.url, ['release-stalled'], `emq:{${queue}}:active`);
      await interruptHeld(hold, ['--mode', 'atomic', '--jobs', '2000', '--cycles', '3'], queue);
    });

    test("--latency: SIGINT while the proxy's round trip is measured: exit 130, nothing written", async () => {
      // The second PING on one connection past the admin's (connection 0, which sends one beside
      // each INFO it checks): the warm-up through the proxy (at least three in a row), before the
      // first of the measured ones; no other connection sends two.
      const hold = await holdFirst(filled.server.url, (chunk, sentBefore, connection) => connection > 0 && sends(chunk, 'PING') && sends(sentBefore, 'PING'));
      await interruptHeld(hold, ['--mode', 'atomic', '--jobs', '100', '--latency', '20'], 'race-latency-stop');
    });

    test('SIGINT while the check for a cluster is held, before the queue is claimed: exit 130, nothing written', async () => {
      // INFO cluster on the admin connection, the race's first question once the session is open.
      const hold = await holdFirst(
        filled.server.url,
        (chunk, sentBefore, connection) => connection === 0 && /cluster/i.test(sentBefore + chunk) && sends(chunk, 'INFO'),
      );
      await interruptHeld(hold, ['--mode', 'atomic', '--jobs', '100'], 'race-cluster-check-stop');
    });

    test("--lib node-resque: SIGINT during node-resque's own cleanOldWorkers: exit 130, the namespace deleted", async () => {
      // The first worker node-resque cleans: its MULTI counts a failure in stat:failed, which the
      // seeding (dead workers, no failure) never does.
      const hold = await holdFirst(filled.server.url, (chunk, sentBefore) => {
        const text = sentBefore + chunk;
        return sends(text, 'INCR') && text.includes(':stat:failed');
      });
      await interruptHeld(hold, ['--lib', 'node-resque', '--mode', 'node-resque', '--jobs', '200', '--sweepers', '2'], 'race-resque-stop');
    });
  });
}

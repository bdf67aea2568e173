/**
 * A queue's slot moved by hand (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE) while
 * its run sweeps, on a real 3-primary cluster per server kind: the run stops with one line saying
 * the slot moved (exit 3, the JSON error object under --json), and deletes its keys wherever they
 * lie, the slot's new owner and, for a migration left half done, both nodes. The run is paused
 * (SIGSTOP) while the slot moves, so that it meets the move at its next call, whichever form it
 * then takes: MOVED after a finished move, ASK or TRYAGAIN during one. And `clean` met by a move
 * under way says so, and removes the queue once the move has ended.
 */
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { after, before, describe, test } from 'node:test';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../src/server/cluster/embedded-cluster.js';
import { slotsFromReply } from '../../src/server/cluster/topology.js';
import { which } from '../../src/server/embedded-server.js';
import { queueKeys, queueSlot } from '../../src/queue/keys.js';
import { deleteFollowingSlot } from '../../src/queue/slot-follow.js';
import { parseServerUrl } from '../../src/server/connection.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine, startCli, until, within } from '../helpers/cli-process.js';
import { commandsBySource } from '../helpers/monitor.js';
import { SERVER_KINDS } from '../helpers/servers.js';

const QUEUE = 'mig';
const SLOT = queueSlot(QUEUE);

/** A loop race that sweeps for several seconds: the slot moves while it does. */
const RUN = ['--queue', QUEUE, '--mode', 'loop', '--jobs', '2000', '--sweepers', '2', '--probe-delay', '2'] as const;

for (const kind of SERVER_KINDS) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed (run scripts/install-servers.sh)` : false;
  describe(`a queue's slot moved during the run [${kind.kind}]`, { skip }, () => {
    let cluster: EmbeddedCluster;
    let nodes: Redis[] = [];
    before(async () => {
      cluster = await startEmbeddedCluster(3, kind.bin);
      nodes = cluster.nodes.map((node) => new Redis({ host: '127.0.0.1', port: node.port, maxRetriesPerRequest: 0 }));
    });
    after(async () => {
      for (const node of nodes) node.disconnect();
      await cluster?.stop();
    });

    /** The index of the node owning the queue's slot now. */
    const owner = async (): Promise<number> => {
      const slots = slotsFromReply(await (nodes[0] as Redis).call('CLUSTER', 'SLOTS'), '127.0.0.1');
      const port = Number(slots[SLOT]?.[0]?.split(':')[1]);
      return cluster.nodes.findIndex((node) => node.port === port);
    };

    /** Moves the queue's slot from node `from` to node `to`: `share` of its keys, and, with `finish`, the rest and the slot's ownership. */
    const moveSlot = async (from: number, to: number, share: number, finish: boolean): Promise<void> => {
      const source = nodes[from] as Redis;
      const target = nodes[to] as Redis;
      const targetId = String(await target.call('CLUSTER', 'MYID'));
      await target.call('CLUSTER', 'SETSLOT', SLOT, 'IMPORTING', String(await source.call('CLUSTER', 'MYID')));
      await source.call('CLUSTER', 'SETSLOT', SLOT, 'MIGRATING', targetId);
      const keys = (await source.call('CLUSTER', 'GETKEYSINSLOT', SLOT, 100_000)) as string[];
      const moving = finish ? keys : keys.slice(0, Math.floor(keys.length * share));
      for (let at = 0; at < moving.length; at += 500) {
        await source.call('MIGRATE', '127.0.0.1', cluster.nodes[to]?.port ?? 0, '', 0, 5000, 'KEYS', ...moving.slice(at, at + 500));
      }
      // The new owner first, then the old, as a resharding tool does; then the third.
      if (finish)
        for (const node of [target, source, ...nodes.filter((n) => n !== target && n !== source)])
          await node.call('CLUSTER', 'SETSLOT', SLOT, 'NODE', targetId);
    };

    /** Where a test left a migration open: the slot back to its owner's alone, for the next test. */
    const settle = async (): Promise<void> => {
      for (const node of nodes) await node.call('CLUSTER', 'SETSLOT', SLOT, 'STABLE');
    };

    /**
     * The run started, paused once it sweeps, the slot moved from its owner to the next node (all
     * of its keys and the move ended, or half of them and the migration left open), the run let go.
     */
    const moveMidRun = async (finish: boolean, json: boolean) => {
      const from = await owner();
      const to = (from + 1) % nodes.length;
      const source = nodes[from] as Redis;
      const run = startCli(['--url', cluster.url, ...RUN, ...(json ? ['--json'] : [])]);
      try {
        await until(30_000, 'the run sweeping', async () => (await source.llen(queueKeys(QUEUE).pending)) > 0, 20);
        run.child.kill('SIGSTOP');
        assert.ok(Number(await source.call('CLUSTER', 'COUNTKEYSINSLOT', SLOT)) > 2000, "the run's keys on the source");
        await moveSlot(from, to, 0.5, finish);
      } finally {
        run.child.kill('SIGCONT');
      }
      const result = await within(30_000, 'the run after its slot moved', run.done);
      return { result, from: cluster.nodes[from]?.port, to: cluster.nodes[to]?.port };
    };

    /** No key of the queue on any node (the slot's keys counted wherever they lie, a migrating slot's on both sides). */
    const assertNothingLeft = async (): Promise<void> => {
      for (const [i, node] of nodes.entries()) {
        assert.equal(Number(await node.call('CLUSTER', 'COUNTKEYSINSLOT', SLOT)), 0, `keys of ${QUEUE} left on node ${cluster.nodes[i]?.port}`);
        assert.equal(await node.dbsize(), 0, `keys left on node ${cluster.nodes[i]?.port}`);
      }
    };

    test('a finished move (MOVED): exit 3, one line naming the slot and its new node, every key removed there; the JSON error object under --json', async () => {
      const { result, from, to } = await moveMidRun(true, true);
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr) ?? result.stderr;
      const said = `the queue's slot ${SLOT} moved to 127.0.0.1:${to} during the run (MOVED from redis://127.0.0.1:${from}: the cluster was resharded): the run stops, as a queue must stay on one primary while it races; its keys were removed, following the slot to 127.0.0.1:${to}`;
      assert.equal(line, `emq-race: ${said}`);
      const report = JSON.parse(result.stdout) as { error: { exit: number; message: string } };
      assert.deepEqual(report.error, { exit: 3, message: said });
      await assertNothingLeft();
    });

    test('a move left half done (ASK or TRYAGAIN): exit 3, one line saying the slot is moving, every key removed from both nodes', async () => {
      const { result, from, to } = await moveMidRun(false, false);
      try {
        assert.equal(result.code, 3, result.stderr);
        const line = oneErrorLine(result.stderr) ?? result.stderr;
        const moving = new RegExp(
          `^emq-race: the queue's slot (${SLOT} began moving from redis://127\\.0\\.0\\.1:${from} to 127\\.0\\.0\\.1:${to} during the run \\(ASK|began moving off redis://127\\.0\\.0\\.1:${from} during the run \\(TRYAGAIN): the cluster is being resharded\\): the run stops, as a queue must stay on one primary while it races; its keys were removed, following the slot to 127\\.0\\.0\\.1:${to}$`,
        );
        assert.match(line, moving);
        assert.doesNotMatch(result.stderr, /server error|emq-race clean/);
        await assertNothingLeft();
      } finally {
        await settle();
      }
    });

    test("keys followed to the node the slot is migrating to, the marker gone: the marker is set there as the run's with SET NX before any key there is deleted, as on MOVED", async () => {
      // A kept run's keys, its marker removed, all moved to the next node with the migration left
      // open: the old owner answers ASK for each of them.
      const kept = await runCli(['--url', cluster.url, '--queue', QUEUE, '--mode', 'atomic', '--jobs', '200', '--live', '0', '--keep']);
      assert.equal(kept.code, 0, kept.stderr);
      const keys = queueKeys(QUEUE);
      const from = await owner();
      const to = (from + 1) % nodes.length;
      try {
        await (nodes[from] as Redis).del(keys.owner);
        await moveSlot(from, to, 1, false);
        const ownerValue = 'the-run-deleting';
        const { result, bySource } = await commandsBySource(nodes[to] as Redis, () =>
          deleteFollowingSlot(nodes[from] as Redis, parseServerUrl(cluster.url), keys, 200, ownerValue),
        );
        assert.deepEqual(result, [`127.0.0.1:${cluster.nodes[to]?.port}`]);
        const sent = [...bySource.values()].find((commands) => commands.some((c) => c.startsWith('UNLINK '))) ?? [];
        const held = sent.indexOf(`SET ${keys.owner} ${ownerValue} NX`);
        assert.ok(held > 0 && sent[held - 1] === 'ASKING', sent.slice(0, 8).join('\n'));
        assert.ok(held < sent.findIndex((c) => c.startsWith('UNLINK ')), sent.slice(0, 8).join('\n'));
        await assertNothingLeft();
      } finally {
        await settle();
      }
    });

    test('clean while the slot of a kept queue is being moved: one line saying so, exit 3; once the move has ended, clean removes every key', async () => {
      const kept = await runCli(['--url', cluster.url, '--queue', QUEUE, '--mode', 'atomic', '--jobs', '500', '--keep']);
      assert.equal(kept.code, 0, kept.stderr);
      const from = await owner();
      const to = (from + 1) % nodes.length;
      try {
        await moveSlot(from, to, 0.5, false);
        const midway = await runCli(['clean', '--url', cluster.url, '--queue', QUEUE]);
        assert.equal(midway.code, 3, midway.stderr);
        assert.match(
          oneErrorLine(midway.stderr) ?? midway.stderr,
          new RegExp(
            `^emq-race: (the queue's slot ${SLOT} is being moved to 127\\.0\\.0\\.1:${cluster.nodes[to]?.port} \\(ASK|a queue's slot is being moved to another node \\(TRYAGAIN): the cluster is being resharded\\): clean stops; run it again once the move has ended$`,
          ),
        );
        await moveSlot(from, to, 1, true);
      } finally {
        await settle();
      }
      const cleaned = await runCli(['clean', '--url', cluster.url, '--queue', QUEUE]);
      assert.equal(cleaned.code, 0, cleaned.stderr);
      assert.match(cleaned.stdout, new RegExp(`^removed queue ${QUEUE}: \\d+ keys\\n$`));
      await assertNothingLeft();
    });
  });
}

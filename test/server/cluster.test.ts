/**
 * A real 3-primary cluster per server kind (started the way --embedded-cluster starts one): queues
 * spread over at least two primaries, the atomic script clean and the loop racy on every queue,
 * every key of a queue in the queue's slot (so nothing can raise CROSSSLOT), nothing left behind.
 */
import assert from 'node:assert/strict';
import { runResult } from '../helpers/run-result.js';
import { Redis } from 'ioredis';
import { after, before, describe, test } from 'node:test';
import { startEmbeddedCluster, type EmbeddedCluster, MAX_PORT, BUS_OFFSET } from '../../src/server/cluster/embedded-cluster.js';
import { pickQueueNames } from '../../src/queue/placement.js';
import { queueSlot } from '../../src/queue/keys.js';
import { crc16, keySlot } from '../../src/server/cluster/slot.js';
import { isClusterInfo, isClusterNode, nodeUrl, slotsFromReply, topologyFromSlots } from '../../src/server/cluster/topology.js';
import { startEmbeddedServer, which } from '../../src/server/embedded-server.js';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { EmqError, ExitCode } from '../../src/shared/errors.js';
import { createdKeys, queueKeys } from '../../src/queue/keys.js';
import { totalsPerMode } from '../../src/report/totals.js';
import { runCli } from '../helpers/cli.js';
import { readmeAclRules, userUrl } from '../helpers/acl.js';
import { oneErrorLine, until, within } from '../helpers/cli-process.js';
import { SERVER_KINDS } from '../helpers/servers.js';
import { ANOMALIES, type RunResult } from '../../src/shared/model.js';

interface JsonRun extends Record<string, unknown> {
  mode: string;
  queue: string;
  node: string;
  jobs: number;
  duplicatePending: number;
  lostIncrements: number;
}

test('CRC16/XModem and the hash-tag rule', () => {
  assert.equal(crc16(Buffer.from('123456789')), 0x31c3);
  assert.equal(keySlot('foo'), 12182);
  assert.equal(keySlot('{user1000}.following'), keySlot('user1000'));
  assert.equal(queueSlot('q1'), keySlot('q1'));
});

test('queue names are picked so that queue i lands on primary i mod P', () => {
  const primaries = ['a:1', 'b:2', 'c:3'];
  const ownerOf = (slot: number): string => primaries[Math.floor((slot * 3) / 16384)] as string;
  const names = pickQueueNames('race-x', 7, primaries, ownerOf);
  assert.equal(new Set(names).size, 7);
  names.forEach((name, i) => assert.equal(ownerOf(queueSlot(name)), primaries[i % 3], name));
  assert.deepEqual(pickQueueNames('solo', 1, primaries, ownerOf), ['solo']);
  assert.deepEqual(
    pickQueueNames('one', 2, [], () => undefined),
    ['one-0', 'one-1'],
  );
});

test('cluster detection, node URLs and per-mode totals', () => {
  assert.equal(isClusterInfo('# Cluster\r\ncluster_enabled:1\r\n'), true);
  assert.equal(isClusterInfo('# Cluster\r\ncluster_enabled:0\r\n'), false);
  assert.equal(nodeUrl('redis://u:p%40ss@seed:7000/0', '10.0.0.2:7001'), 'redis://u:p%40ss@10.0.0.2:7001');
  // A primary is reached with the --url's TLS settings, not the defaults.
  const tls = { ca: Buffer.from('ca'), rejectUnauthorized: false };
  const slots = Array.from({ length: 16384 }, () => ['10.0.0.2:7001']);
  const primary = topologyFromSlots(slots, { url: 'rediss://seed:7000', display: 'rediss://seed:7000', tls }).targetOf('10.0.0.2:7001');
  assert.deepEqual(primary.tls, tls);
  assert.equal(primary.url, 'rediss://10.0.0.2:7001');
  // CLUSTER SLOTS as the map: a node announced without an address is reached at the --url's host.
  const map = slotsFromReply(
    [
      [0, 8191, ['10.0.0.1', 7000, 'a'], ['10.0.0.9', 7009, 'r']],
      [8192, 16383, ['', 7001, 'b']],
    ],
    'seed',
  );
  assert.deepEqual(
    [map[0], map[8191], map[8192], map[16383]],
    [['10.0.0.1:7000', '10.0.0.9:7009'], ['10.0.0.1:7000', '10.0.0.9:7009'], ['seed:7001'], ['seed:7001']],
  );
  assert.deepEqual(topologyFromSlots(map, { url: 'redis://seed:7000', display: 'redis://seed:7000' }).primaries, ['10.0.0.1:7000', 'seed:7001']);
  for (const bad of ['OK', [[0, 16384, ['h', 1]]], [[5, 1, ['h', 1]]], [[0, 1, 'h']]]) assert.throws(() => slotsFromReply(bad, 'seed'), /CLUSTER SLOTS/);
  // A clean atomic run of 10 jobs on `queue`, with the call times the totals take the worst of.
  const run = (queue: string, over: Partial<RunResult>): RunResult =>
    runResult({ queue, trial: 1, wallMs: 10, jobsPerSec: 1000, callMsP50: 1, callMsP99: 2, callMsMax: 3, serverCallMsP99: null, ...over });
  const [total] = totalsPerMode([run('a', { node: 'n1:1', wallMs: 20 }), run('b', { node: 'n2:2', callMsP99: 5, recoveries: 12, doubleRecoveries: 2 })]);
  assert.ok(total);
  assert.equal(total.jobs, 20);
  assert.equal(total.recoveries, 22);
  assert.equal(total.doubleRecoveries, 2);
  assert.equal(total.wallMs, 20);
  assert.equal(total.jobsPerSec, 1000);
  assert.equal(total.callMsP99, 5);
  assert.equal(total.serverCallMsP99, null);
  assert.equal(total.node, 'n1:1,n2:2');
  const byTrial = totalsPerMode([run('a', { trial: 1 }), run('b', { trial: 1 }), run('a-t2', { trial: 2, doubleRecoveries: 3 }), run('b-t2', { trial: 2 })]);
  assert.deepEqual(
    byTrial.map((t) => [t.mode, t.trial, t.jobs, t.doubleRecoveries, t.queue]),
    [
      ['atomic', 1, 20, 0, '2 queues'],
      ['atomic', 2, 20, 3, '2 queues'],
    ],
  );
});

/**
 * Each installed kind's cluster, started as the file starts: forming one is mostly waiting (the
 * nodes' join, then cluster_state:ok on each), so the kinds form at once rather than one after the
 * other. Each kind's suite takes its own; every one is stopped when the file ends.
 */
const clusters = new Map<string, Promise<EmbeddedCluster>>();
before(() => {
  for (const kind of SERVER_KINDS) {
    if (which(kind.bin) === undefined) continue;
    const starting = startEmbeddedCluster(3, kind.bin);
    starting.catch(() => undefined);
    clusters.set(kind.kind, starting);
  }
});
after(async () => {
  await Promise.allSettled([...clusters.values()].map(async (starting) => (await starting).stop()));
});

for (const kind of SERVER_KINDS) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed (run scripts/install-servers.sh)` : false;
  describe(`cluster [${kind.kind}]`, { skip }, () => {
    let cluster: EmbeddedCluster;
    let nodes: Redis[] = [];
    before(async () => {
      cluster = await (clusters.get(kind.kind) ?? Promise.reject(new Error('the cluster was not started')));
      nodes = cluster.nodes.map((node) => new Redis({ host: '127.0.0.1', port: node.port, maxRetriesPerRequest: 0 }));
    });
    after(() => {
      for (const node of nodes) node.disconnect();
    });

    test('three primaries on ports below 55000, bus ports beside them', () => {
      assert.equal(cluster.nodes.length, 3);
      for (const node of cluster.nodes) assert.ok(node.port <= MAX_PORT && node.port + BUS_OFFSET < 65536, String(node.port));
    });

    test('an ACL user with the documented line and +cluster|slots races on the cluster; without it, one line names CLUSTER SLOTS', async () => {
      for (const node of nodes) await node.call('ACL', 'SETUSER', 'emq-race', 'reset', ...readmeAclRules('pw'), '+cluster|slots');
      for (const node of nodes) await node.call('ACL', 'SETUSER', 'emq-race-noslots', 'reset', ...readmeAclRules('pw'));
      try {
        const ok = await runCli(['--url', userUrl(cluster.url, 'emq-race', 'pw'), '--queues', '3', '--mode', 'atomic', '--jobs', '100']);
        assert.equal(ok.code, 0, ok.stderr);
        const refused = await runCli(['--url', userUrl(cluster.url, 'emq-race-noslots', 'pw'), '--queues', '3', '--mode', 'atomic', '--jobs', '100']);
        assert.equal(refused.code, 3, refused.stderr);
        assert.match(oneErrorLine(refused.stderr) ?? '', /^emq-race: permission denied on \S+ \(CLUSTER\b.*"Least privilege"/);
        for (const node of nodes) assert.equal(await node.dbsize(), 0, 'every key deleted');
      } finally {
        for (const node of nodes) await node.call('ACL', 'DELUSER', 'emq-race', 'emq-race-noslots');
      }
    });

    test('--queues 3 (cluster found from INFO cluster): atomic clean and loop racy on every queue, queues on every primary', async () => {
      const result = await runCli(['--url', cluster.url, '--queues', '3', '--mode', 'both', '--jobs', '300', '--sweepers', '4', '--json']);
      assert.equal(result.code, 0, result.stderr);
      const report = JSON.parse(result.stdout) as { server: { primaries: string[] }; runs: JsonRun[]; totals: JsonRun[] };
      assert.equal(report.server.primaries.length, 3);
      assert.equal(report.runs.length, 6);
      for (const run of report.runs) {
        assert.ok(report.server.primaries.includes(run.node), run.node);
        if (run.mode === 'atomic') for (const name of ANOMALIES) assert.equal(run[name] ?? 0, 0, `${run.queue} ${name}`);
        else {
          assert.ok(run.duplicatePending > 0, `${run.queue} raced`);
          assert.ok(run.lostIncrements > 0, `${run.queue} lost increments`);
        }
      }
      for (const mode of ['atomic', 'loop']) {
        const used = new Set(report.runs.filter((r) => r.mode === mode).map((r) => r.node));
        assert.ok(used.size >= 2, `${mode} queues on ${[...used].join(', ')}`);
      }
      assert.deepEqual(
        report.totals.map((t) => [t.mode, t.jobs]),
        [
          ['atomic', 900],
          ['loop', 900],
        ],
      );
      for (const node of nodes) assert.equal(await node.dbsize(), 0, 'every key deleted');
    });

    test('every key a queue writes hashes to the queue slot on the server itself (no CROSSSLOT possible)', async () => {
      const node = nodes[0] as Redis;
      for (const key of ['foo', 'foo{}{bar}', 'foo{{bar}}zap', 'foo{bar}{zap}', '{user1000}.following', 'emq:{é}:x']) {
        assert.equal(keySlot(key), Number(await node.call('CLUSTER', 'KEYSLOT', key)), key);
      }
      for (const queue of ['race-a', 'race-b-1-7', 'q']) {
        const keys = queueKeys(queue);
        for (const key of [...createdKeys(keys, 3)]) {
          assert.equal(Number(await node.call('CLUSTER', 'KEYSLOT', key)), queueSlot(queue), key);
        }
      }
    });

    test('--latency against a cluster node (found from INFO cluster) is a usage error, nothing written', async () => {
      const result = await runCli(['--url', cluster.url, '--latency', '2', '--mode', 'atomic', '--jobs', '10']);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /^emq-race: --latency: the server at redis:\/\/127\.0\.0\.1:\d+ is a cluster node; the latency proxy stands for one server/);
      for (const node of nodes) assert.equal(await node.dbsize(), 0);
    });

    test('explain, explore, --shrink and --export-test against a cluster node: a usage error naming it, nothing written (not a MOVED from whichever node the queue is not on)', async () => {
      for (const command of [
        ['explain', '--mode', 'atomic'],
        ['explore', '--mode', 'atomic,loop'],
        ['explain', '--counter', 'client', '--json'],
        // The race's witness is replayed as explain replays, on one server.
        ['--shrink', '--seed', '7', '--mode', 'loop', '--jobs', '50'],
        ['--export-test', 'never-written.test.mjs', '--seed', '7', '--mode', 'loop', '--jobs', '50', '--json'],
      ]) {
        const result = await runCli([...command, '--url', cluster.url]);
        assert.equal(result.code, 2, result.stderr);
        const line = `${command[0]} runs on one server, and redis://127.0.0.1:\\d+ is a node of a cluster: give --url a server outside a cluster`;
        if (command.includes('--json')) assert.match(result.stdout, new RegExp(`"exit":2,"message":"${line}`));
        else assert.match(result.stderr, new RegExp(`^emq-race: ${line}`));
        for (const node of nodes) assert.equal(await node.dbsize(), 0);
      }
    });

    test('clean on a cluster: --queue through any node reaches the primary of the queue, --all finds the queues on every primary', async () => {
      const kept = await runCli(['--url', cluster.url, '--queues', '3', '--mode', 'atomic', '--jobs', '50', '--queue', 'kept', '--keep', '--json']);
      assert.equal(kept.code, 0, kept.stderr);
      const queues = (JSON.parse(kept.stdout) as { runs: JsonRun[] }).runs.map((run) => run.queue);
      assert.equal(new Set((JSON.parse(kept.stdout) as { runs: JsonRun[] }).runs.map((run) => run.node)).size, 3, 'one queue on each primary');
      // Through a node that does not own the first queue's slot: no MOVED.
      const first = queues[0] as string;
      const holds = await Promise.all(nodes.map(async (node) => Number(await node.call('CLUSTER', 'COUNTKEYSINSLOT', queueSlot(first)))));
      const elsewhere = cluster.nodes[holds.indexOf(0)];
      assert.ok(elsewhere, 'a node without the queue');
      const one = await runCli(['clean', '--url', `redis://127.0.0.1:${elsewhere.port}`, '--queue', first]);
      assert.equal(one.code, 0, one.stderr);
      assert.match(one.stdout, new RegExp(`^removed queue ${first}: \\d+ keys\\n$`));
      const all = await runCli(['clean', '--url', cluster.url, '--all', '--yes']);
      assert.equal(all.code, 0, all.stderr);
      assert.match(all.stdout, /^emq-race queues on the cluster of redis:\/\/127\.0\.0\.1:\d+ \(3 primaries\):\n/);
      for (const queue of queues.slice(1)) assert.match(all.stdout, new RegExp(`^removed queue ${queue}: \\d+ keys$`, 'm'));
      for (const node of nodes) assert.equal(await node.dbsize(), 0, 'every kept key removed');
    });

    test('--cluster with a single queue runs on the primary that owns its slot', async () => {
      const result = await runCli(['--url', cluster.url, '--cluster', '--mode', 'atomic', '--queue', 'solo-queue', '--jobs', '300', '--json']);
      assert.equal(result.code, 0, result.stderr);
      const report = JSON.parse(result.stdout) as { runs: JsonRun[] };
      const owner = cluster.nodes.find((n) => report.runs[0]?.node === `127.0.0.1:${n.port}`);
      assert.ok(owner, 'ran on one of the nodes');
      const slot = queueSlot('solo-queue');
      const ownerConnection = nodes[cluster.nodes.indexOf(owner)] as Redis;
      const slots = (await ownerConnection.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      assert.ok(
        slots.some(([from, to, [, port]]) => from <= slot && slot <= to && port === owner.port),
        'its node owns the slot',
      );
    });
  });
}

test('--embedded-cluster 3 runs the race on a cluster of its own and tears it down', async () => {
  const result = await runCli(['--embedded-cluster', '3', '--queues', '2', '--mode', 'atomic', '--jobs', '300', '--sweepers', '2']);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /cluster: 3 primaries/);
  assert.match(result.stdout, /^each column sums its mode's queues \(2 queues in all/m);
  assert.match(result.stdout, /^jobs +600$/m);
  assert.match(result.stdout, /queue \S+ on 127\.0\.0\.1:\d+: atomic/);
});

test('a node of a --url cluster killed mid-run stops every queue at once: exit 3 naming that node, the others left empty', async () => {
  const kind = SERVER_KINDS.find((k) => which(k.bin) !== undefined);
  assert.ok(kind, 'a server to cluster');
  const own = await startEmbeddedCluster(3, kind.bin);
  const nodes = own.nodes.map((node) => new Redis({ host: '127.0.0.1', port: node.port, maxRetriesPerRequest: 0 }));
  try {
    // Each queue's loop pauses 50 ms after each probe: every queue sweeps for about 50 s, far past
    // the bound below, unless the run stops the others when one fails.
    const run = runCli(['--url', own.url, '--queues', '3', '--mode', 'loop', '--jobs', '2000', '--sweepers', '2', '--probe-delay', '50']);
    const sweeping = async (node: Redis): Promise<boolean> => {
      const [, found] = await node.scan('0', 'MATCH', '*:pending', 'COUNT', 10_000);
      return found.length > 0 && (await node.llen(found[0] as string)) > 0;
    };
    await until(30_000, 'every queue sweeping', async () => (await Promise.all(nodes.map(sweeping))).every(Boolean));
    const [victim] = own.nodes;
    assert.ok(victim);
    process.kill(victim.pid, 'SIGKILL');
    const result = await within(20_000, 'the run after a node died', run);
    assert.equal(result.code, 3, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? result.stderr, new RegExp(`127\\.0\\.0\\.1:${victim.port}`));
    for (const node of nodes.slice(1)) assert.equal(await node.dbsize(), 0, 'the other queues cleaned up on their nodes');
  } finally {
    for (const node of nodes) node.disconnect();
    await own.stop();
  }
});

test('the cluster check on a connection lost meanwhile is one line and exit 3, not an unexpected error', async () => {
  const server = await startEmbeddedServer({});
  try {
    const redis = await connect(parseServerUrl(server.url));
    assert.equal(await isClusterNode(redis, server.url), false);
    redis.disconnect();
    await assert.rejects(isClusterNode(redis, server.url), (err: unknown) => {
      assert.ok(err instanceof EmqError, String(err));
      assert.equal(err.exitCode, ExitCode.server);
      assert.ok(err.message.includes(server.url), err.message);
      return true;
    });
  } finally {
    await server.stop();
  }
});

test('--cluster against a server that is not a cluster node is a usage error', async () => {
  const result = await runCli(['--cluster', '--jobs', '10']);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /^emq-race: --cluster: the server at redis:\/\/127\.0\.0\.1:\d+ is not a cluster node/);
});

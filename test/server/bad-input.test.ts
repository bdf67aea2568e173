/**
 * Every bad input ends in exit 2 and one line on stderr that names the flag, before anything is
 * written: the server's keyspace stays byte-for-byte what it was. A new flag is one line in CASES.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { which, type EmbeddedServer } from '../../src/server/embedded-server.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { unrelatedState, useFilledServer, type UnrelatedState } from '../helpers/unrelated-data.js';
import { JSON_SCHEMA } from '../../src/report/json.js';
import { LIMITS, VERSION, type IntLimit } from '../../src/shared/model.js';

interface BadInput {
  readonly args: readonly string[];
  /** What the one line must contain: the flag, and any more words that matter. */
  readonly says: readonly string[];
  /** Run without the test server's --url appended (cases about the server itself). */
  readonly noUrl?: boolean;
}

const bad = (args: readonly string[], ...says: string[]): BadInput => ({ args, says: says.length > 0 ? says : [args[0] ?? ''] });
const noUrl = (args: readonly string[], ...says: string[]): BadInput => ({ ...bad(args, ...says), noUrl: true });

/** Non-numeric, fractional, negative, zero (where 0 is out of range), just past the limit, absurd. */
function intFlagCases(flag: string, limit: IntLimit): BadInput[] {
  const values = ['abc', '1.5', '-5', String(limit.max + 1), '99999999999999999999'];
  if (limit.min > 0) values.push('0');
  return values.map((value) => bad([flag, value], flag));
}

const CASES: readonly BadInput[] = [
  ...intFlagCases('--jobs', LIMITS.jobs),
  bad(['--jobs', ''], '--jobs'),
  bad(['--jobs', '1e3'], '--jobs'),
  bad(['--jobs', '0x10'], '--jobs'),
  ...intFlagCases('--sweepers', LIMITS.sweepers),
  ...intFlagCases('--batch', LIMITS.batch),
  ...intFlagCases('--max-stalled', LIMITS.maxStalled),
  ...intFlagCases('--stalled-before', LIMITS.stalledBefore),
  ...intFlagCases('--probe-delay', LIMITS.probeDelay),
  ...intFlagCases('--trials', LIMITS.trials),
  ...intFlagCases('--cycles', LIMITS.cycles),
  ...intFlagCases('--workers', LIMITS.workers),
  ...intFlagCases('--max-sweeps', LIMITS.maxSweeps),
  ...intFlagCases('--live', LIMITS.live),
  ...intFlagCases('--interval', LIMITS.interval),
  ...intFlagCases('--jitter', LIMITS.jitter),
  ...intFlagCases('--loop-jobs', LIMITS.loopJobs),
  ...intFlagCases('--queues', LIMITS.queues),
  ...intFlagCases('--embedded-cluster', LIMITS.embeddedCluster),
  ...['abc', '-1', '10001', '', '1e3', '2ms'].map((value) => bad(['--latency', value], '--latency')),
  ...['abc', '-0.5', '10001'].map((value) => bad(['--latency', '2', '--latency-jitter', value], '--latency-jitter')),
  bad(['--latency-jitter', '1'], '--latency-jitter', 'needs --latency'),
  bad(['--latency', '2', '--cluster'], '--latency', '--cluster'),
  noUrl(['--latency', '2', '--embedded-cluster', '3'], '--latency', '--embedded-cluster'),
  noUrl(['--latency', '2', '--url', 'unix:///tmp/emq-race-no-such.sock'], '--latency', 'unix'),
  bad(['--fault', 'meteor'], '--fault', 'sweeper-crash'),
  bad(['--fault', 'failover'], '--fault failover', '--url'),
  bad(['--fault', 'failover', '--cluster'], '--fault failover'),
  noUrl(['--fault', 'failover', '--embedded-cluster', '3'], '--fault failover', 'cluster'),
  noUrl(['--failover-after', '3'], '--failover-after', '--fault failover'),
  noUrl(['--failover-calls', '3'], '--failover-calls', '--fault failover'),
  noUrl(['--wait-replicas', '1'], '--wait-replicas', '--fault failover'),
  noUrl(['--fault', 'failover', '--wait-replicas', '2'], '--wait-replicas'),
  noUrl(['--fault', 'failover', '--wait-replicas', '1:abc'], '--wait-replicas'),
  noUrl(['--fault', 'failover', '--fault', 'client-kill'], '--fault failover', 'alone'),
  noUrl(['--fault', 'failover', '--queues', '2'], '--fault failover', '--queues'),
  // --workers goes with the drill (failover-workers.test.ts); the re-leaser and the observer do not.
  noUrl(['--fault', 'failover', '--cycles', '2'], '--fault failover', '--cycles'),
  noUrl(['--fault', 'failover', '--observe'], '--fault failover', '--observe'),
  noUrl(['--replica-lag', '20'], '--replica-lag', '--fault failover'),
  noUrl(['--sentinel'], '--sentinel', '--fault failover'),
  ...intFlagCases('--replica-lag', LIMITS.replicaLag),
  noUrl(['grid', '--vary', 'replica-lag=0,5'], '--replica-lag', '--fault failover'),
  ...intFlagCases('--failover-after', LIMITS.failoverAfter),
  bad(['--pending', 'heap'], '--pending'),
  bad(['--workers', '2', '--cycles', '3'], '--workers', '--cycles'),
  bad(['--mode', 'script'], '--script'),
  bad(['--script', '/nonexistent/sweep.lua'], '--script'),
  bad(['--csv', '--json'], '--csv'),
  bad(['--fault', 'script-flush'], 'script-flush', '--allow-server-wide'),
  bad(['--processes', '--workers', '2'], '--processes'),
  bad(['--stalled-before', '3', '--max-stalled', '3'], '--stalled-before', '--max-stalled'),
  bad(['--stalled-before', '9', '--max-stalled', '2'], '--stalled-before'),
  bad(['--mode', 'fast'], '--mode', 'atomic'),
  bad(['--mode', 'atomic,fast'], '--mode'),
  bad(['--mode', ''], '--mode'),
  bad(['--expect', 'dirty'], '--expect'),
  bad(['--expect', 'race', '--mode', 'atomic'], '--expect race'),
  bad(['--expect', 'loop=race', '--mode', 'atomic'], '--expect loop=race', 'not among the modes run'),
  bad(['--expect', 'atomic=dirty'], '--expect', 'not an outcome'),
  bad(['--expect', 'clean', '--expect', 'race'], '--expect', 'disagree on loop'),
  bad(['--expect', 'atomic=clean', '--expect', 'atomic=race'], '--expect', 'disagree on atomic'),
  noUrl(['--url', 'http://127.0.0.1:6379'], '--url', 'scheme'),
  noUrl(['--url', 'localhost:6379'], '--url'),
  noUrl(['--url', 'not a url'], '--url'),
  noUrl(['--url', 'redis://'], '--url'),
  noUrl(['--url', 'redis://127.0.0.1:notaport'], '--url'),
  noUrl(['--url', 'redis://127.0.0.1:6379/abc'], '--url', 'database'),
  noUrl(['--url', 'unix://'], '--url'),
  noUrl(['--url', 'redis://127.0.0.1:6379', '--tls-ca', '/etc/hostname'], '--tls-ca', 'rediss://'),
  noUrl(['--url', 'rediss://127.0.0.1:6379', '--tls-ca', '/nonexistent/ca.pem'], '--tls-ca', 'no such file'),
  noUrl(['--url', 'rediss://127.0.0.1:6379', '--tls-cert', '/etc/hostname'], '--tls-cert', '--tls-key'),
  noUrl(['--tls-insecure'], '--tls-insecure'),
  bad(['--queue', '{x}'], '--queue'),
  bad(['--queue', 'a}b'], '--queue'),
  bad(['--queue', 'a b'], '--queue'),
  bad(['--queue', 'a*'], '--queue'),
  bad(['--queue', 'a:b'], '--queue'),
  bad(['--queue', ''], '--queue'),
  bad(['--queue', 'q'.repeat(101)], '--queue'),
  noUrl(['--server-bin', '/nonexistent/redis-server'], '--server-bin'),
  noUrl(['--server-bin', 'no-such-server-binary'], '--server-bin'),
  noUrl(['--server-bin', '/bin/true'], '--server-bin', 'not a redis-server, valkey-server or redict-server'),
  noUrl(['--server-bin', '/tmp'], '--server-bin'),
  bad(['--server-bin', 'redis-server'], '--server-bin', '--url'),
  bad(['--job', '5'], '--job', 'Did you mean --jobs?'),
  bad(['--sweeper', '3'], '--sweeper', 'Did you mean --sweepers?'),
  bad(['--frobnicate'], '--frobnicate'),
  bad(['cleen'], 'cleen', 'clean'),
  bad(['clean'], 'clean', '--queue', '--all'),
  bad(['clean', 'stray'], 'clean'),
  bad(['clean', '--queu', 'x'], '--queu', 'Did you mean --queue?'),
  bad(['clean', '--queue', 'x', '--all'], 'clean', '--queue', '--all'),
  bad(['clean', '--queue', '{x}'], '--queue'),
  bad(['clean', '--queue', 'x', '--yes'], '--yes'),
  noUrl(['clean', '--all'], 'clean', '--url'),
  // Two --url name two servers: neither wins silently (the harness adds the second), neither is shown.
  bad(['--url', 'redis://:secret@127.0.0.1:1'], '--url: given twice'),
  bad(['explain', '--url', 'redis://127.0.0.1:1'], '--url: given twice'),
  bad(['explore', '--url', 'redis://127.0.0.1:1'], '--url: given twice'),
  bad(['clean', '--queue', 'x', '--url', 'redis://127.0.0.1:1'], '--url: given twice'),
  bad(['grid', '--url', 'redis://127.0.0.1:1'], '--url: given twice'),
  // Any other flag with a value: the last one is not silently taken, and neither value is shown.
  bad(['--jobs', '100', '--jobs', '1000'], '--jobs: given twice; give it once'),
  bad(['--mode', 'atomic', '--mode', 'loop'], '--mode: given twice', '--mode atomic,loop'),
  bad(['--queue', 'race-a', '--queue', 'Zq7w0rd'], '--queue: given twice; give it once'),
  bad(['grid', '--vary', 'sweepers=1,2', '--batch', '10', '--batch', '20'], '--batch: given twice'),
  bad(['explain', '--counter', 'client', '--counter', 'in-script'], '--counter: given twice'),
  bad(['clean', '--queue', 'x', '--queue', 'y'], '--queue: given twice'),
];

/** Cases also run as a spawned process, end to end through bin/emq-race.js. */
const SPAWNED = new Set(['--jobs abc', '--url http://127.0.0.1:6379', '--server-bin /bin/true', '--job 5', 'cleen']);

const kind = which('redis-server') ? 'redis-server' : which('valkey-server') ? 'valkey-server' : undefined;

describe('bad input', { skip: kind ? false : 'no redis-server or valkey-server installed' }, () => {
  let server: EmbeddedServer;
  let redis: Redis;
  let initial: UnrelatedState;
  useFilledServer({ bin: kind ?? 'redis-server' }, (started, connected, state) => {
    server = started;
    redis = connected;
    initial = state;
  });

  for (const input of CASES) {
    test(`${input.args.map((a) => JSON.stringify(a)).join(' ')}`, async () => {
      const args =
        input.noUrl || (input.args[0] === 'clean' && input.args.includes('--all') && !input.args.includes('--queue'))
          ? input.args
          : [...input.args, '--url', server.url];
      const result = SPAWNED.has(input.args.join(' ')) ? await spawnCli(args) : await runCli(args);
      assert.equal(result.code, 2, `exit code; stderr: ${result.stderr}`);
      const line = oneErrorLine(result.stderr);
      // Under --json stdout carries the same error as one object; otherwise nothing.
      const json = input.args.includes('--json')
        ? `${JSON.stringify({ version: VERSION, schema: JSON_SCHEMA, error: { exit: 2, message: line?.replace(/^emq-race: /, '') } })}\n`
        : '';
      assert.equal(result.stdout, json);
      assert.ok(line, `one error line and no stack trace, got: ${result.stderr}`);
      for (const words of input.says) assert.ok(line.includes(words), `${JSON.stringify(line)} should mention ${JSON.stringify(words)}`);
      assert.deepEqual(await unrelatedState(redis), initial);
    });
  }

  test('--help states the limits of the core flags', async () => {
    const result = await runCli(['--help']);
    assert.equal(result.code, 0);
    const help = result.stdout.replace(/\s+/g, ' ');
    for (const limit of [LIMITS.jobs, LIMITS.sweepers, LIMITS.batch, LIMITS.maxStalled, LIMITS.probeDelay]) {
      assert.ok(help.includes(`${limit.min}–${limit.max}`), `help shows ${limit.min}–${limit.max}`);
    }
  });
});

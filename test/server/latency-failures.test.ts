/**
 * --latency where it cannot work: a delay that would reach the 10 s a connection waits for a reply
 * is refused before anything starts (exit 2, one line, in the race and in a grid's axis), and a
 * server lost while the proxy is being measured ends the run like any lost server (exit 3, one line,
 * no stack trace), in a single race and in a grid's later cell (whose earlier cell is still reported).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { LIMITS } from '../../src/shared/model.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine, within } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import { sends, startProxy } from '../helpers/proxy.js';
import { forEachServer } from '../helpers/servers.js';

/** A guard against a hang, not a timing. */
const LIMIT_MS = 60_000;

/** The line a lost server gets anywhere in the tool. */
const LOST = /^emq-race: (lost the connection to the server at|cannot reach the server at|the server at .* closed the connection)/;

forEachServer('--latency that cannot work', (handle) => {
  let admin: Redis;
  before(async () => {
    admin = await connect(parseServerUrl(handle.url));
  });
  after(() => admin?.disconnect());

  test(`above ${LIMITS.latency.max} ms, as a flag, as jitter or as a grid's axis: exit 2, one line saying why, nothing written`, async () => {
    const before = await allKeys(admin);
    const cases: readonly string[][] = [
      ['--url', handle.url, '--latency', '10000'],
      ['--url', handle.url, '--latency', '1', '--latency-jitter', '5000'],
      ['--url', handle.url, '--latency', '10000', '--json'],
      ['grid', '--url', handle.url, '--vary', 'latency=0,10000', '--mode', 'atomic'],
    ];
    for (const args of cases) {
      const result = await runCli(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      const line = oneErrorLine(result.stderr);
      assert.ok(line, `${args.join(' ')}: one line, got ${result.stderr}`);
      assert.match(line, new RegExp(`--latency(-jitter)?: .* out of range; expected 0 to ${LIMITS.latency.max} \\(.*10 s a connection waits for a reply`));
    }
    assert.equal(LIMITS.latencyJitter.max, LIMITS.latency.max);
    assert.deepEqual(await allKeys(admin), before);
  });

  test('the server lost while the proxy is measured: exit 3 and one line, in a race and in a grid', async () => {
    // The relay passes everything until the first PING (the proxy's measurement), then acts as a
    // server that is gone: that chunk and every later one, on any connection, is cut.
    let lost = false;
    const relay = await startProxy(handle.server.port, (chunk) => {
      if (!lost && sends(chunk, 'PING')) lost = true;
      return lost ? 'cut' : 'pass';
    });
    try {
      const result = await within(
        LIMIT_MS,
        'the race that lost its server',
        runCli(['--url', relay.url, '--latency', '2', '--mode', 'atomic', '--jobs', '50', '--queue', 'race-lost-latency']),
      );
      assert.ok(lost, 'the relay saw the measurement begin');
      assert.equal(result.code, 3, result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? '', LOST, result.stderr);
      assert.doesNotMatch(result.stderr, /a bug|\n\s+at /);
    } finally {
      await relay.close();
    }
    assert.deepEqual(
      (await allKeys(admin)).filter((key) => key.includes('race-lost-latency')),
      [],
    );

    // A grid: its first cell measures and races; the server goes once the second cell measures.
    let raced = false;
    lost = false;
    const gridRelay = await startProxy(handle.server.port, (chunk) => {
      if (sends(chunk, 'EVALSHA') || sends(chunk, 'EVAL')) raced = true;
      if (raced && !lost && sends(chunk, 'PING')) lost = true;
      return lost ? 'cut' : 'pass';
    });
    try {
      const grid = await within(
        LIMIT_MS,
        'the grid that lost its server',
        runCli(['grid', '--url', gridRelay.url, '--latency', '2', '--vary', 'sweepers=1,2', '--mode', 'atomic', '--jobs', '50', '--json']),
      );
      assert.ok(lost, 'the relay saw the second measurement begin');
      assert.equal(grid.code, 3, grid.stderr);
      assert.match(oneErrorLine(grid.stderr) ?? '', LOST, grid.stderr);
      assert.doesNotMatch(grid.stderr, /a bug|\n\s+at /);
      const json = JSON.parse(grid.stdout) as { complete: boolean; cells: unknown[]; stopped?: { exit: number; message: string } };
      assert.equal(json.complete, false);
      assert.equal(json.cells.length, 1, 'the first cell is reported');
      assert.equal(json.stopped?.exit, 3);
      assert.match(`emq-race: ${json.stopped?.message ?? ''}`, LOST);
    } finally {
      await gridRelay.close();
    }
  });
});

/**
 * A reply no command asked for, mid-race: a relay in front of a real server adds one `$-1` to a
 * sweeper's connection, at a moment it waits for nothing, and the client throws inside its
 * socket's data handler, past every caller of the tool's. The run ends as its other server errors
 * do: one line (or the JSON error object), exit 3, no stack, its keys removed over a fresh
 * connection. Any other exception past every caller is a bug of the tool's: its stack, "please
 * report it", exit 3, and the run's keys removed all the same.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { runCli, spawnCli, type CliResult } from '../helpers/cli.js';
import { oneErrorLine, within } from '../helpers/cli-process.js';
import { sends, startProxy, startStrayReplyRelay } from '../helpers/proxy.js';
import { queueKeysLeft } from '../helpers/keyspace.js';
import { forOneServerKind } from '../helpers/servers.js';

const LIMIT_MS = 60_000;
const UNASKED = /^emq-race: the server at redis:\/\/127\.0\.0\.1:\d+ does not speak the Redis protocol: it sent a reply no command asked for \(/;
/** The race: enough jobs that the sweepers make several calls each. */
const RACE = ['--mode', 'atomic', '--jobs', '3000', '--batch', '100'];

/** A run that ended on the stray reply: exit 3 and one error line, no stack, the line that says so; that line. */
function unaskedLine(result: CliResult): string {
  assert.equal(result.code, 3, result.stderr);
  const line = oneErrorLine(result.stderr);
  assert.ok(line, `one error line, no stack: ${result.stderr}`);
  assert.match(line, UNASKED);
  return line;
}

forOneServerKind(import.meta.url, 'an exception past every caller, mid-race', (handle) => {
  let redis: Redis;
  before(async () => {
    redis = await connect(parseServerUrl(handle.url));
  });
  after(() => redis?.disconnect());
  const left = (queue: string): Promise<string[]> => queueKeysLeft(redis, queue);

  /** A sweep: the sweep script's call, which alone of the run's script calls names the dead-letter set. */
  const sweep = (command: string): boolean => sends(command, 'EVALSHA') && command.includes(':dead\r\n');
  /** `body` with a relay that adds one `$-1` after the third reply to a call `calls` picks (a sweep's by default), closed after. */
  const withStrayReply = async <T>(body: (relay: Awaited<ReturnType<typeof startStrayReplyRelay>>) => Promise<T>, calls = sweep): Promise<T> => {
    const relay = await startStrayReplyRelay(handle.server.port, calls, 3);
    try {
      return await body(relay);
    } finally {
      await relay.close();
    }
  };

  test('in-process: one line saying the server does not speak Redis, exit 3, and no key of the run left', async () => {
    await withStrayReply(async (relay) => {
      const result = await within(LIMIT_MS, 'the run', runCli([...RACE, '--queue', 'stray-in-process', '--url', relay.url]));
      await relay.injected;
      unaskedLine(result);
      assert.equal(result.stdout, '');
      assert.deepEqual(await left('stray-in-process'), []);
    });
  });

  test("in-process, on the run's own connection while it seeds: the same line, the keys removed over a new connection", async () => {
    // Seeding's script calls, on the connection the run claims, seeds, audits and cleans up over.
    const seeding = (command: string): boolean => sends(command, 'EVALSHA') && !sweep(command);
    await withStrayReply(async (relay) => {
      const result = await within(LIMIT_MS, 'the run', runCli([...RACE, '--queue', 'stray-seeding', '--url', relay.url]));
      await relay.injected;
      assert.match(unaskedLine(result), /; its keys were removed over a new connection$/);
      assert.deepEqual(await left('stray-seeding'), []);
    }, seeding);
  });

  test('the process, --json: the one JSON error object, exit 3, no stack, and no key of the run left', async () => {
    await withStrayReply(async (relay) => {
      const result = await within(LIMIT_MS, 'the run', spawnCli([...RACE, '--queue', 'stray-json', '--json', '--url', relay.url]));
      await relay.injected;
      assert.equal(result.code, 3, result.stderr);
      assert.doesNotMatch(result.stderr, /^\s+at /m);
      const lines = result.stdout.split('\n').filter((text) => text !== '');
      assert.equal(lines.length, 1, result.stdout);
      const error = (JSON.parse(lines[0] ?? '') as { error?: { exit?: number; message?: string } }).error;
      assert.equal(error?.exit, 3, result.stdout);
      assert.match(`emq-race: ${error?.message ?? ''}`, UNASKED);
      assert.deepEqual(await left('stray-json'), []);
    });
  });

  test('--processes: a sweeper process hands its parent the same line, no stack, exit 3, and no key of the run left', async () => {
    await withStrayReply(async (relay) => {
      const result = await within(LIMIT_MS, 'the run', spawnCli([...RACE, '--processes', '--queue', 'stray-processes', '--url', relay.url]));
      await relay.injected;
      assert.equal(result.code, 3, result.stderr);
      assert.doesNotMatch(result.stderr, /^\s+at |TypeError/m);
      assert.match(oneErrorLine(result.stderr) ?? '', UNASKED);
      assert.deepEqual(await left('stray-processes'), []);
    });
  });

  test("in-process: an exception of the tool's own past every caller is reported as a bug, exit 3, and no key of the run left", async () => {
    let thrown = false;
    // Thrown from a callback of this file's at the first sweep: no client's reply handling raised it.
    const proxy = await startProxy(handle.server.port, (chunk) => {
      if (!thrown && sends(chunk, 'EVALSHA')) {
        thrown = true;
        setImmediate(() => {
          throw new TypeError('a callback past every caller');
        });
      }
      return 'pass';
    });
    try {
      const result = await within(LIMIT_MS, 'the run', runCli([...RACE, '--queue', 'stray-bug', '--url', proxy.url]));
      assert.ok(thrown);
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stderr, /^emq-race: unexpected error \(a bug; please report it\):\nTypeError: a callback past every caller\n\s+at /);
      assert.doesNotMatch(result.stderr, /does not speak the Redis protocol/);
      assert.deepEqual(await left('stray-bug'), []);
    } finally {
      await proxy.close();
    }
  });

  test("in-process: a bug of the tool's past every caller once the report is printed is said with its stack after it, exit 3", async () => {
    let thrown = false;
    // Thrown as the session's own connection (the first opened) says goodbye: the report is out by then.
    const proxy = await startProxy(handle.server.port, (chunk, connection) => {
      if (!thrown && connection === 0 && sends(chunk, 'QUIT')) {
        thrown = true;
        setImmediate(() => {
          throw new TypeError('a callback past every caller, as the session closes');
        });
      }
      return 'pass';
    });
    try {
      const args = [...RACE, '--queue', 'late-bug', '--json', '--expect', 'atomic=clean', '--url', proxy.url];
      const listeners = process.listenerCount('uncaughtException');
      const result = await within(LIMIT_MS, 'the run', runCli(args));
      assert.ok(thrown);
      // The command returned: what reaches the top from here is the test runner's to hear again.
      assert.equal(process.hasUncaughtExceptionCaptureCallback(), false);
      assert.equal(process.listenerCount('uncaughtException'), listeners);
      assert.equal(result.code, 3, result.stderr);
      // The report as printed, whole, and no error object after it.
      const lines = result.stdout.split('\n').filter((text) => text !== '');
      assert.equal(lines.length, 1, result.stdout);
      const report = JSON.parse(lines[0] ?? '') as { runs?: { mode: string; clean: boolean }[]; error?: unknown };
      assert.equal(report.error, undefined);
      assert.deepEqual(
        report.runs?.map((run) => [run.mode, run.clean]),
        [['atomic', true]],
      );
      assert.match(
        result.stderr,
        /^emq-race: expectation met: atomic=clean\nemq-race: unexpected error \(a bug; please report it\), once its output was complete:\nTypeError: a callback past every caller, as the session closes\n\s+at /,
      );
      assert.deepEqual(await left('late-bug'), []);
    } finally {
      await proxy.close();
    }
  });
});

/**
 * A run whose own process is stopped (SIGSTOP, what Ctrl-Z does) for longer than its heartbeat
 * lives loses its queue to `emq-race clean` from another host: by design, since a heartbeat that
 * expired is all such a clean can go by. Resumed (SIGCONT), the run must not blame the server for
 * the time it stood still itself, nor report figures: it ends with exit 3 and one line saying it
 * was paused and its queue removed, naming the clean, and deletes what its sweepers wrote after
 * it resumed, so that no key of the queue stays, nothing else is touched and no process is left.
 * The server tier covers the heartbeat's part on Redis and Valkey (server-state.test.ts); one
 * server kind is enough for the process.
 */
import assert from 'node:assert/strict';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import { describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { queueKeys } from '../../src/queue/keys.js';
import { HEARTBEAT_TTL_MS } from '../../src/queue/owner-claim.js';
import { which, type EmbeddedServer } from '../../src/server/embedded-server.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine, startCli, until, within } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import { alive } from '../helpers/processes.js';
import { oneServerKind } from '../helpers/servers.js';
import { unrelatedState, useFilledServer, type UnrelatedState } from '../helpers/unrelated-data.js';

/** Guards against a hang, not timings. */
const LIMIT_MS = 15_000;

/**
 * Runs `work` as a process on another machine would: node:os's hostname() names another host
 * meanwhile. That is all `clean` goes by to tell a run on this machine (whose pid it can ask
 * after) from one elsewhere (whose heartbeat is all it has).
 */
async function onAnotherHost<T>(work: () => Promise<T>): Promise<T> {
  const own = os.hostname;
  os.hostname = () => `not-${own()}`;
  syncBuiltinESMExports();
  try {
    return await work();
  } finally {
    os.hostname = own;
    syncBuiltinESMExports();
  }
}

// The tool's own process is the subject: one server kind for this file (oneServerKind).
const kind = oneServerKind(import.meta.url).find((k) => which(k.bin) !== undefined);

describe(`a run paused past its heartbeat [${kind?.kind ?? 'no server'}]`, {
  skip: kind === undefined ? 'neither redis-server nor valkey-server is installed' : false,
}, () => {
  let server: EmbeddedServer;
  let redis: Redis;
  let initial: UnrelatedState;
  useFilledServer({ bin: kind?.bin ?? 'redis-server' }, (started, connected, state) => {
    server = started;
    redis = connected;
    initial = state;
  });

  test('stopped past its heartbeat while clean from another host removes its queue, then resumed: exit 3, one line saying so, no key of the queue left', async () => {
    const queue = 'race-paused';
    const keys = queueKeys(queue);
    // The loop's sweepers, back to back: each has a command in flight whenever the process stops.
    // 10,000 jobs keep them at it for seconds however late a busy machine lets the test see them
    // start, and the stop lands within 10 ms of that.
    const cli = startCli(['--url', server.url, '--mode', 'loop', '--jobs', '10000', '--sweepers', '4', '--queue', queue]);
    await until(LIMIT_MS, 'the race', async () => (await redis.llen(keys.pending)) > 0, 10);
    cli.child.kill('SIGSTOP');
    try {
      // The server's own clock expires the heartbeat, 15 s after the run last wrote it: nothing of
      // the tool is shortened. The last write was at most 5 s before the stop, so the process stands
      // still for 10 s or more: longer than a connection waits for a reply.
      // Asked every 50 ms: a wait of seconds, which a round trip every few ms would fill with work.
      await until(HEARTBEAT_TTL_MS + LIMIT_MS, 'the heartbeat to expire', async () => (await redis.exists(keys.heartbeat)) === 0, 50);
      const cleaned = await onAnotherHost(() => runCli(['clean', '--url', server.url, '--queue', queue]));
      assert.equal(cleaned.code, 0, cleaned.stderr);
      assert.match(cleaned.stdout, /^removed queue race-paused: [\d,]+ keys\n$/);
    } finally {
      cli.child.kill('SIGCONT');
    }
    const result = await within(LIMIT_MS, 'the resumed run', cli.done);
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      oneErrorLine(result.stderr) ?? result.stderr,
      /^emq-race: this run was paused for \d+ s \(its process stopped: Ctrl-Z, SIGSTOP or the machine asleep\), so its heartbeat emq:\{race-paused\}:heartbeat, last written \d+ s before, expired meanwhile \(it lives 15 s\), and queue race-paused was removed from the server at .*: most likely by emq-race clean --queue race-paused from another host/,
    );
    assert.equal(result.stdout, '');
    // What its sweepers wrote after it resumed is gone with the rest; nothing else was touched.
    assert.deepEqual(
      (await allKeys(redis)).filter((key) => key.startsWith(keys.prefix)),
      [],
    );
    assert.deepEqual(await unrelatedState(redis), initial);
    assert.equal(alive(cli.child.pid ?? 0), false);
  });
});

/**
 * The tool's own server killed under a command: what the command meets first is a lost connection,
 * what it must end with is the server's death (its keeper's news, some ms later), and --keep then
 * keeps nothing, since the keys went with it. withSession on a real embedded server, killed with
 * SIGKILL; the command's own line would otherwise send the user to `clean` a queue on a dead
 * server and to `kill` a pid that may already be another process's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { which } from '../../src/server/embedded-server.js';
import { openSession, withSession } from '../../src/server/session.js';
import { describeServerError, ServerGoneError } from '../../src/shared/errors.js';
import { alive } from '../helpers/processes.js';
import { oneServerKind } from '../helpers/servers.js';

/** Guards against a hang, not timings. */
const LIMIT_MS = 10_000;

for (const kind of oneServerKind(import.meta.url)) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed` : false;
  for (const keep of [true, false]) {
    test(`[${kind.kind}] its server killed${keep ? ' under --keep' : ''}: the death is the error, not the lost connection, and nothing is kept`, {
      skip,
    }, async () => {
      const said: string[] = [];
      let pid = 0;
      const ended = await withSession(
        (signal) => openSession({ serverBin: kind.bin }, {}, signal),
        { err: (line) => void said.push(line), leave: () => assert.fail('the command left') },
        keep,
        async (session) => {
          pid = session.embedded?.pid ?? 0;
          process.kill(pid, 'SIGKILL');
          // The command's next call finds the connection gone: that is the error it throws.
          for (const started = Date.now(); Date.now() - started < LIMIT_MS; await sleep(10)) {
            await session.admin.ping().catch((err: unknown) => Promise.reject(describeServerError(err, session.target.display)));
          }
          assert.fail('the server still answered');
        },
      ).then(
        () => assert.fail('the command went on'),
        (err: unknown) => err,
      );
      assert.ok(ended instanceof ServerGoneError, String(ended));
      assert.match(ended.message, /^the embedded server at redis:\/\/127\.0\.0\.1:\d+ died \(its process ended unasked\)$/);
      assert.deepEqual(said, []);
      assert.equal(alive(pid), false);
    });
  }
}

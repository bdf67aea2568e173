/**
 * A Ctrl-C while the tool connects to a server that takes the connection but answers nothing (a
 * paused one, SIGSTOP): nothing is begun, so the command ends at once with the signal's code and
 * line, not after the bounded wait a silent server is given (ANSWER_TIMEOUT_MS). `clean` says it
 * removed nothing, also when the server fell silent once connected, while clean reads what is
 * there. A relay in front of a real server holds the tool's first command (or every one after the
 * connection's ready check), so the signal meets each command while it waits for a reply.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ANSWER_TIMEOUT_MS } from '../../src/server/connection.js';
import { oneErrorLine, startCli, within } from '../helpers/cli-process.js';
import { holdFirst } from '../helpers/held-call.js';
import { sends } from '../helpers/proxy.js';
import { forOneServerKind } from '../helpers/servers.js';

/** Guards against a hang, not timings. */
const LIMIT_MS = 15_000;

/** A command, its line, and whether the relay first lets the connection's ready check (INFO) through. */
const COMMANDS: readonly (readonly [string, readonly string[], string, boolean])[] = [
  ['the race', ['--mode', 'atomic', '--jobs', '10'], 'emq-race: interrupted by SIGINT', false],
  ['explain', ['explain'], 'emq-race: interrupted by SIGINT', false],
  ['clean --all', ['clean', '--all', '--yes'], 'emq-race: interrupted by SIGINT: nothing removed', false],
  // Connected, then silent while clean reads which queues are there: its connection is dropped, not
  // closed with a QUIT the silent server would hold.
  ['clean --all, once connected', ['clean', '--all', '--yes'], 'emq-race: interrupted by SIGINT: nothing removed', true],
  ['clean --queue, once connected', ['clean', '--queue', 'race-held'], 'emq-race: interrupted by SIGINT: nothing removed', true],
];

// The tool's own process is the subject: one server kind.
forOneServerKind(import.meta.url, 'a signal while connecting to a server that answers nothing', (handle) => {
  for (const [name, args, line, readyFirst] of COMMANDS) {
    test(`${name}: exit 130 at once, with its one line`, async () => {
      // The first command held, or the first after the connection's ready check (its INFO).
      const relay = await holdFirst(handle.url, (_chunk, sentBefore) => !readyFirst || sends(sentBefore, 'INFO'));
      try {
        const cli = startCli([...args, '--url', relay.url]);
        await within(LIMIT_MS, 'the first command held', relay.held);
        cli.child.kill('SIGINT');
        // Half the wait a silent server is given: what ends the command is the signal, not that wait.
        const result = await within(ANSWER_TIMEOUT_MS / 2, `${name} stopped`, cli.done);
        assert.equal(result.code, 130, result.stderr);
        assert.equal(oneErrorLine(result.stderr), line);
        assert.equal(result.stdout, '');
      } finally {
        relay.release();
        await relay.close();
      }
    });
  }
});

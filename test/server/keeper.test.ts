/**
 * The embedded server's keeper ties the server's life to the tool's through a lifeline that a
 * reader of its own watches. The reader killed from outside would leave the lifeline unwatched, so
 * that a tool killed later (SIGKILL) would leave its server running for good: the keeper stops the
 * server at once instead, as at the lifeline's end, and removes its folder.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startEmbeddedServer } from '../../src/server/embedded-server.js';
import { until } from '../helpers/cli-process.js';
import { alive, childrenOf, commandLine, parentOf } from '../helpers/processes.js';

for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
  test(`the keeper's lifeline reader killed (${signal}): the keeper stops the server at once, nothing of it left`, async () => {
    const server = await startEmbeddedServer();
    try {
      const keeper = parentOf(server.pid);
      assert.ok(keeper !== undefined, 'the server has a keeper');
      // The keeper starts its reader once it has told the tool the server's pid, which may be after
      // the server answers: on a busy machine the reader is looked for until it is there.
      const readerOf = (parent: number) => childrenOf(parent).find((pid) => pid !== server.pid && commandLine(pid).includes('emq-race-lifeline'));
      let reader: number | undefined;
      await until(10_000, "the keeper's lifeline reader", () => (reader = readerOf(keeper)) !== undefined, 10);
      assert.ok(reader !== undefined);
      process.kill(reader, signal);
      await until(10_000, 'the server and its keeper gone', () => !alive(server.pid) && !alive(keeper), 20);
      await until(5_000, 'the tool told the keeper ended', () => server.ended.aborted, 20);
    } finally {
      await server.stop();
    }
  });
}

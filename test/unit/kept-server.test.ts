/**
 * What --keep says of the tool's own server it leaves running (src/server/kept-server.ts): where
 * each process is and how to stop it; an embedded cluster's nodes each named alike, as the equal
 * primaries they are.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keptServerClause } from '../../src/server/kept-server.js';

type Kept = Parameters<typeof keptServerClause>[0];
// Only what the lines read of a server: its address and its process.
const server = (port: number, pid: number): Kept => ({ url: `redis://127.0.0.1:${port}`, port, pid }) as unknown as Kept;

test('a kept embedded server: where it is and how to stop it', () => {
  assert.equal(
    keptServerClause(server(7000, 11)),
    'kept: embedded server at redis://127.0.0.1:7000, pid 11; stop it with: redis-cli -p 7000 shutdown nosave (or kill 11)',
  );
});

test("a kept embedded cluster: every node, the first among them, named as a cluster's node", () => {
  const nodes = [server(7000, 11), server(7001, 12), server(7002, 13)];
  assert.equal(
    keptServerClause({ ...server(7000, 11), nodes } as Kept),
    [
      'kept: embedded cluster node at redis://127.0.0.1:7000, pid 11; stop it with: redis-cli -p 7000 shutdown nosave (or kill 11)',
      'kept: embedded cluster node at redis://127.0.0.1:7001, pid 12; stop it with: redis-cli -p 7001 shutdown nosave (or kill 12)',
      'kept: embedded cluster node at redis://127.0.0.1:7002, pid 13; stop it with: redis-cli -p 7002 shutdown nosave (or kill 13)',
    ].join('; '),
  );
});

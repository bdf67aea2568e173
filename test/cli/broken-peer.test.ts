/**
 * A peer that speaks the Redis protocol but answers nothing as Redis does: `+OK` to every command,
 * or a proper INFO and `+OK` to the rest (PING included), or a proper INFO and PING and then a SCAN
 * that is no SCAN reply, or one whose cursor goes round for ever, or an integer (`:1`) to every
 * command, or to every one after a proper INFO and PING; and one that takes the
 * connection and never answers at all (a service that waits for its client to speak first).
 * The peer is a broken server, not a stand-in for Redis: each command line meets it once and must
 * end with exit 3 and one line saying the server does not answer as Redis does, the process
 * exiting on its own (no connection held open by a QUIT the peer never follows with a close, no
 * SCAN walked for ever).
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { runCli, spawnCli } from '../helpers/cli.js';
import { oneErrorLine, until } from '../helpers/cli-process.js';

type Behaviour = 'ok-to-all' | 'info-only' | 'scan-ok' | 'scan-cycles' | 'integer-to-all' | 'integer-after-ping' | 'stray-first';

const INFO_SERVER = '# Server\r\nredis_version:7.2.0\r\n';
const INFO_CLUSTER = '# Cluster\r\ncluster_enabled:0\r\n';
const bulk = (text: string): string => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

/** The commands in `buffer` (RESP arrays of bulk strings), and what is left of it unread. */
function commands(buffer: string): { readonly done: string[][]; readonly rest: string } {
  const done: string[][] = [];
  let at = 0;
  for (;;) {
    const head = /^\*(\d+)\r\n/.exec(buffer.slice(at));
    if (!head) break;
    let next = at + head[0].length;
    const words: string[] = [];
    for (let i = 0; i < Number(head[1]); i++) {
      const size = /^\$(\d+)\r\n/.exec(buffer.slice(next));
      if (!size || buffer.length < next + size[0].length + Number(size[1]) + 2) return { done, rest: buffer.slice(at) };
      next += size[0].length;
      words.push(buffer.slice(next, next + Number(size[1])));
      next += Number(size[1]) + 2;
    }
    done.push(words);
    at = next;
  }
  return { done, rest: buffer.slice(at) };
}

function reply(behaviour: Behaviour, words: readonly string[], answered: number): string {
  // Three replies to the connection's first command, and none to any other.
  if (behaviour === 'stray-first') return answered === 0 ? '+OK\r\n+OK\r\n$-1\r\n' : '';
  const name = (words[0] ?? '').toUpperCase();
  if (behaviour === 'ok-to-all') return '+OK\r\n';
  if (behaviour === 'integer-to-all') return ':1\r\n';
  if (behaviour === 'integer-after-ping' && name !== 'INFO' && name !== 'PING') return ':1\r\n';
  if (name === 'INFO') return bulk((words[1] ?? '').toLowerCase() === 'cluster' ? INFO_CLUSTER : INFO_SERVER);
  if (behaviour === 'info-only') return '+OK\r\n';
  if (name === 'PING') return '+PONG\r\n';
  if (name === 'SCAN') return behaviour === 'scan-ok' ? '+OK\r\n' : `*2\r\n${bulk(words[1] === '5' ? '9' : '5')}*0\r\n`;
  return '+OK\r\n';
}

/** A broken peer on a port of its own; it never closes a connection itself, as such a peer need not. */
async function brokenPeer(behaviour: Behaviour): Promise<{ readonly url: string; readonly server: Server; readonly sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffer = '';
    let answered = 0;
    socket.on('data', (chunk) => {
      const { done, rest } = commands(buffer + chunk.toString('latin1'));
      buffer = rest;
      for (const words of done) socket.write(reply(behaviour, words, answered++));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  return { url: `redis://127.0.0.1:${address.port}`, server, sockets };
}

/**
 * A broken peer for the enclosing suite, started before its tests and closed after them, every
 * socket with it; its fields are read once the suite's tests run.
 */
function peerForSuite(behaviour: Parameters<typeof brokenPeer>[0]): Awaited<ReturnType<typeof brokenPeer>> {
  let peer: Awaited<ReturnType<typeof brokenPeer>> | undefined;
  before(async () => {
    peer = await brokenPeer(behaviour);
  });
  after(async () => {
    if (!peer) return;
    for (const socket of peer.sockets) socket.destroy();
    const { server } = peer;
    await new Promise((resolve) => server.close(resolve));
  });
  const started = (): Awaited<ReturnType<typeof brokenPeer>> => {
    if (!peer) throw new Error('the broken peer is read before its suite started it');
    return peer;
  };
  return {
    get url() {
      return started().url;
    },
    get server() {
      return started().server;
    },
    get sockets() {
      return started().sockets;
    },
  };
}

const NOT_REDIS =
  /^emq-race: the server at redis:\/\/127\.0\.0\.1:\d+ does not speak the Redis protocol \(its reply to (\w+) ([^)]*)\): is it a Redis or Valkey port/;

for (const behaviour of ['ok-to-all', 'info-only', 'scan-ok', 'scan-cycles'] as const) {
  describe(`a peer answering ${behaviour}`, () => {
    const peer = peerForSuite(behaviour);

    const expected =
      behaviour === 'ok-to-all'
        ? ['INFO', /is not INFO text/]
        : behaviour === 'info-only'
          ? ['PING', /is not PONG/]
          : ['SCAN', behaviour === 'scan-ok' ? /is not a cursor and a list/ : /keeps giving cursors it gave before/];
    const lines: [string, string[]][] = [
      ['clean --all --yes', ['clean', '--all', '--yes']],
      ['clean --queue', ['clean', '--queue', 'race-broken']],
      ...(behaviour === 'ok-to-all' || behaviour === 'info-only' ? ([['the race', ['--mode', 'atomic', '--jobs', '10']]] as [string, string[]][]) : []),
      ...(behaviour === 'info-only' ? ([['grid', ['grid', '--vary', 'sweepers=2,4', '--jobs', '10']]] as [string, string[]][]) : []),
    ];
    for (const [what, args] of lines) {
      // With a proper INFO and PING, clean --queue reads one marker by GET and never SCANs: the peer's +OK is no marker of the tool's.
      const refusedAsForeign = behaviour.startsWith('scan-') && what === 'clean --queue';
      test(`${what}: ${refusedAsForeign ? 'refused as no marker of the tool' : 'one line, exit 3'}, and the process ends`, async () => {
        const result = await spawnCli([...args, '--url', peer.url]);
        const line = oneErrorLine(result.stderr);
        assert.ok(line, `one error line, no stack: ${result.stderr}`);
        if (refusedAsForeign) {
          assert.equal(result.code, 2, result.stderr);
          assert.match(line, /was not written by emq-race: leaving queue race-broken alone; nothing removed/);
          return;
        }
        assert.equal(result.code, 3, result.stderr);
        const said = NOT_REDIS.exec(line);
        assert.ok(said, line);
        assert.equal(said[1], expected[0]);
        assert.match(said[2] ?? '', expected[1] as RegExp);
      });
    }

    test('in-process, clean --all returns with the same line and leaves no connection open to the peer', async () => {
      const result = await runCli(['clean', '--all', '--yes', '--url', peer.url]);
      assert.equal(result.code, 3, result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? '', NOT_REDIS);
      // Every socket the command opened is closed once it returns: the peer sees them go.
      await until(10_000, 'the peer to see every socket close', () => peer.sockets.size === 0, 5);
      assert.equal(peer.sockets.size, 0);
    });
  });
}

/**
 * A peer answering `:1` where a string, OK or nil is due: the tool's own code once called a string's
 * method on that integer, and the TypeError came out as "server error from …: value.startsWith is
 * not a function", the tool's words passed off as the server's. In-process, each command line's
 * one line names the command whose reply no Redis gives.
 */
for (const behaviour of ['integer-to-all', 'integer-after-ping'] as const) {
  describe(`a peer answering ${behaviour}, in-process`, () => {
    const peer = peerForSuite(behaviour);

    // The race, explain and explore claim their queue with SET NX first; clean --queue and the grid
    // read a marker with GET; clean --all walks with SCAN.
    const cases: readonly (readonly [what: string, args: readonly string[], command: string, why: string])[] = [
      ['the race', ['--mode', 'atomic', '--jobs', '10'], 'SET', 'is neither OK nor nil'],
      ['explain', ['explain'], 'SET', 'is neither OK nor nil'],
      ['explore', ['explore'], 'SET', 'is neither OK nor nil'],
      ['clean --queue', ['clean', '--queue', 'race-broken'], 'GET', 'is neither a string nor nil'],
      ['grid', ['grid', '--vary', 'sweepers=2,4', '--jobs', '10'], 'GET', 'is neither a string nor nil'],
      ['clean --all', ['clean', '--all', '--yes'], 'SCAN', 'is not a cursor and a list'],
    ];
    for (const [what, args, command, why] of cases) {
      const [named, said] = behaviour === 'integer-to-all' ? ['INFO', 'is not INFO text'] : [command, why];
      test(`${what}: the one line names ${named}'s reply, exit 3, no "server error"`, async () => {
        const result = await runCli([...args, '--url', peer.url]);
        assert.equal(result.code, 3, result.stderr);
        assert.equal(
          result.stderr,
          `emq-race: the server at ${peer.url} does not speak the Redis protocol (its reply to ${named} ${said}): is it a Redis or Valkey port (or one that wants a rediss:// URL)?\n`,
        );
        assert.equal(result.stdout, '');
      });
    }
  });
}

/**
 * A peer answering the first command of each connection three times (`+OK`, `+OK`, `$-1`) and no
 * other: the client throws inside its socket's data handler on the nil no command asked for,
 * where no caller of the tool's can catch it. In-process, each command line still ends with the
 * one line of a peer that does not speak Redis and exit 3; the test runner, which listens for
 * uncaught exceptions, hears of none.
 */
describe('a peer answering its first command three times, in-process', () => {
  const peer = peerForSuite('stray-first');
  const cases: readonly (readonly [what: string, args: readonly string[]])[] = [
    ['the race', ['--mode', 'atomic', '--jobs', '10']],
    ['explain', ['explain']],
    ['explore', ['explore']],
    ['clean --queue', ['clean', '--queue', 'race-broken']],
  ];
  for (const [what, args] of cases) {
    test(`${what}: one line, a reply no command asked for, exit 3`, async () => {
      const result = await runCli([...args, '--url', peer.url]);
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr);
      assert.ok(line, `one error line, no stack: ${result.stderr}`);
      assert.ok(line.startsWith(`emq-race: the server at ${peer.url} does not speak the Redis protocol: it sent a reply no command asked for (`), line);
      assert.equal(result.stdout, '');
      await until(10_000, 'the peer to see every socket close', () => peer.sockets.size === 0, 5);
    });
  }
});

describe('a peer that takes the connection and never answers', () => {
  let server: Server;
  let url = '';
  const sockets = new Set<Socket>();
  before(async () => {
    server = createServer((socket) => {
      // Reads what the tool sends and says nothing, as a service that waits for its client.
      sockets.add(socket);
      socket.on('data', () => {});
      socket.on('error', () => {});
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `redis://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('the race: after the one wait, one line asking whether a Redis server listens there, exit 3, every socket closed', async () => {
    const result = await runCli(['--mode', 'atomic', '--jobs', '10', '--url', url]);
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      oneErrorLine(result.stderr) ?? '',
      /^emq-race: the server at redis:\/\/127\.0\.0\.1:\d+ took the connection but sent no reply within 10 s: is a Redis server listening on this port/,
    );
    await until(10_000, 'the peer to see every socket close', () => sockets.size === 0, 5);
  });
});

/**
 * A TCP relay between the tool and a real server that lets a test act at an exact point of the
 * conversation: each chunk a client sends is shown to `rule` before it is forwarded, and the rule
 * may pass it, cut the connection there (the server never sees it), or hold it until a promise
 * settles. Replies flow back untouched.
 */
import { createServer, connect as netConnect, type Socket } from 'node:net';

export type ProxyVerdict = 'pass' | 'cut' | Promise<unknown>;

export interface RelayProxy {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A relay on a free loopback port: each client connection paired with one of its own to the server
 * on `serverPort`, both tracked so that `close` ends them; `pair` wires the two sockets' data.
 */
async function listenRelay(serverPort: number, pair: (client: Socket, upstream: Socket) => void): Promise<RelayProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = netConnect(serverPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    pair(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `rule` sees each chunk as text, with the number of the client connection (from 0) it came on. */
export function startProxy(serverPort: number, rule: (chunk: string, connection: number) => ProxyVerdict): Promise<RelayProxy> {
  let connections = 0;
  return listenRelay(serverPort, (client, upstream) => {
    const number = connections++;
    const cut = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', cut);
    upstream.on('close', cut);
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    // Chunks go on in order: one held chunk holds every later one of its connection.
    let queue: Promise<void> = Promise.resolve();
    client.on('data', (chunk: Buffer) => {
      queue = queue.then(async () => {
        if (client.destroyed) return;
        const verdict = rule(chunk.toString('latin1'), number);
        if (verdict === 'cut') return cut();
        if (verdict !== 'pass') await verdict.catch(() => {});
        if (!upstream.destroyed) upstream.write(chunk);
      });
    });
  });
}

/** Does a RESP chunk send `command` (its name as a bulk string)? */
export const sends = (chunk: string, command: string): boolean => chunk.toUpperCase().includes(`\r\n$${command.length}\r\n${command.toUpperCase()}\r\n`);

/** Where the first whole RESP value of `text` from `at` ends, or -1 when it is not all there yet. */
function valueEnd(text: string, at: number): number {
  const line = text.indexOf('\r\n', at);
  if (line < 0) return -1;
  const size = Number(text.slice(at + 1, line));
  let next = line + 2;
  if (text[at] === '$') return size < 0 ? next : text.length >= next + size + 2 ? next + size + 2 : -1;
  if (text[at] === '*') for (let i = 0; i < size && next >= 0; i++) next = valueEnd(text, next);
  return next;
}

/** How many whole RESP values `buffer` holds, the last of them, and what is left of it after them. */
function wholeValues(buffer: string): { readonly count: number; readonly last: string; readonly rest: string } {
  let count = 0;
  let last = '';
  let rest = buffer;
  for (let end = valueEnd(rest, 0); end > 0; end = valueEnd(rest, 0)) {
    count++;
    last = rest.slice(0, end);
    rest = rest.slice(end);
  }
  return { count, last, rest };
}

/**
 * A relay that adds, once, a reply no command asked for (`$-1`) to what a real server sends: on
 * a connection whose last command was one `calls` picks (its RESP text), after the `after`-th
 * reply to such a command, at
 * the moment every command of the connection has had its reply (so the client has none waiting),
 * in the same chunk as that reply (so the client reads both at once, before it can send another).
 * `injected` resolves when it has been sent. Everything else flows as it came.
 */
export async function startStrayReplyRelay(
  serverPort: number,
  calls: (command: string) => boolean,
  after: number,
): Promise<RelayProxy & { readonly injected: Promise<void> }> {
  let replies = 0;
  let sent = false;
  let injected!: () => void;
  const done = new Promise<void>((resolve) => (injected = resolve));
  const relay = await listenRelay(serverPort, (client, upstream) => {
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    let asked = 0;
    let answered = 0;
    let fromClient = '';
    let fromServer = '';
    let lastWasCommand = false;
    client.on('data', (chunk: Buffer) => {
      fromClient += chunk.toString('latin1');
      const { count, last, rest } = wholeValues(fromClient);
      if (count > 0) lastWasCommand = calls(last);
      asked += count;
      fromClient = rest;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      fromServer += chunk.toString('latin1');
      const { count, rest } = wholeValues(fromServer);
      answered += count;
      fromServer = rest;
      if (!sent && lastWasCommand && count > 0 && answered === asked && rest === '' && ++replies === after) {
        sent = true;
        client.write(Buffer.concat([chunk, Buffer.from('$-1\r\n')]));
        injected();
      } else client.write(chunk);
    });
  });
  return { ...relay, injected: done };
}

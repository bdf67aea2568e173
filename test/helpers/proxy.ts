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

/** `rule` sees each chunk as text, with the number of the client connection (from 0) it came on. */
export async function startProxy(serverPort: number, rule: (chunk: string, connection: number) => ProxyVerdict): Promise<RelayProxy> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    const number = connections++;
    const upstream = netConnect(serverPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
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

/** Does a RESP chunk send `command` (its name as a bulk string)? */
export const sends = (chunk: string, command: string): boolean => chunk.toUpperCase().includes(`\r\n$${command.length}\r\n${command.toUpperCase()}\r\n`);

/**
 * A plain TCP proxy the tool steers, for `--fault failover`: it forwards bytes to an upstream port
 * until told otherwise. Two uses: the replica's replication link goes through one, so the tool can
 * cut it (`partition`: every link closed, every new one refused); the run's own connections go
 * through another, so that after the failover each of them is carried on to the new primary
 * (`hold`, then `switchTo`) without the client library noticing. No delay, no parsing: a command
 * is known to be answered only by the bytes that came back after it (`quiet`).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

interface Link {
  readonly client: Socket;
  upstream: Socket | undefined;
  /** Bytes went up since the last bytes came back: a command may be waiting for its reply. */
  awaiting: boolean;
}

export interface SwitchProxy {
  readonly port: number;
  /** Closes every link and refuses new ones until `stop`: the far side sees its peer gone. */
  partition(): void;
  /** Stops reading from the clients: nothing more goes up. Links stay open. */
  hold(): void;
  /**
   * True when no link has bytes up that no bytes came back after. Sound only for clients that send
   * one command and wait for its reply before the next (the sweepers through the drill's gate, the
   * workers, consequences/workers.ts): a pipeline's or a MULTI … EXEC's first reply would make its
   * link look answered while the rest were still due, and a link held between its commands would
   * carry the tail, EXEC without its MULTI, to the new primary.
   */
  quiet(): boolean;
  /** Every held link carried on to `port` (a fresh upstream connection each), reading again. */
  switchTo(port: number): Promise<void>;
  /** Closes the listener and every link. */
  stop(): Promise<void>;
}

export async function startSwitchProxy(upstreamPort: number): Promise<SwitchProxy> {
  let target = upstreamPort;
  let cut = false;
  let held = false;
  const links = new Set<Link>();

  const attach = (link: Link, port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const upstream = createConnection({ host: '127.0.0.1', port });
      upstream.setNoDelay(true);
      upstream.once('connect', () => {
        upstream.off('error', reject);
        upstream.on('error', () => {});
        resolve();
      });
      upstream.once('error', reject);
      upstream.on('data', (chunk: Buffer) => {
        link.awaiting = false;
        link.client.write(chunk);
      });
      // An upstream that goes (a killed primary) ends the client's link, unless the tool holds it
      // to carry it on elsewhere.
      upstream.on('close', () => {
        if (link.upstream !== upstream) return;
        link.upstream = undefined;
        if (!held) link.client.destroy();
      });
      link.upstream = upstream;
    });

  const server: Server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    client.setNoDelay(true);
    const link: Link = { client, upstream: undefined, awaiting: false };
    links.add(link);
    client.on('error', () => {});
    client.on('close', () => {
      links.delete(link);
      link.upstream?.destroy();
    });
    client.pause();
    client.on('data', (chunk: Buffer) => {
      link.awaiting = true;
      link.upstream?.write(chunk);
    });
    attach(link, target).then(
      () => {
        if (!held) client.resume();
      },
      () => client.destroy(),
    );
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    port,
    partition() {
      cut = true;
      for (const link of links) {
        link.upstream?.destroy();
        link.client.destroy();
      }
    },
    hold() {
      held = true;
      for (const link of links) link.client.pause();
    },
    quiet() {
      for (const link of links) if (link.awaiting) return false;
      return true;
    },
    async switchTo(next) {
      target = next;
      for (const link of links) {
        const old = link.upstream;
        // Forgotten first: its close must not end the link.
        link.upstream = undefined;
        link.awaiting = false;
        old?.destroy();
      }
      for (const link of links) await attach(link, next);
      held = false;
      for (const link of links) link.client.resume();
    },
    async stop() {
      cut = true;
      for (const link of links) {
        link.upstream?.destroy();
        link.client.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Real servers for the tests: each suite starts its own redis-server / valkey-server on a free
 * loopback port with no persistence (through the tool's own embedded-server module) and stops it.
 */
import { after, before, describe } from 'node:test';
import { startEmbeddedServer, which, type EmbeddedServer } from '../../src/server/embedded-server.js';

export interface ServerKind {
  readonly kind: 'redis' | 'valkey';
  readonly bin: string;
}

export const SERVER_KINDS: readonly ServerKind[] = [
  { kind: 'redis', bin: 'redis-server' },
  { kind: 'valkey', bin: 'valkey-server' },
];

export interface ServerHandle {
  /** Valid once the suite's `before` hook ran. */
  readonly server: EmbeddedServer;
  readonly url: string;
}

/**
 * Declares `body` once per server kind, inside a describe that starts and stops that server.
 * A kind whose binary is missing is skipped with a message saying how to install it.
 */
export function forEachServer(title: string, body: (handle: ServerHandle, kind: ServerKind) => void, extraArgs: readonly string[] = []): void {
  for (const kind of SERVER_KINDS) {
    const missing = which(kind.bin) === undefined;
    const skip = missing ? `${kind.bin} is not installed (run scripts/install-servers.sh)` : false;
    describe(`${title} [${kind.kind}]`, { skip }, () => {
      let server: EmbeddedServer | undefined;
      const handle: ServerHandle = {
        get server() {
          if (!server) throw new Error('server not started');
          return server;
        },
        get url() {
          return handle.server.url;
        },
      };
      before(async () => {
        server = await startEmbeddedServer({ bin: kind.bin, extraArgs });
      });
      after(async () => {
        await server?.stop();
      });
      body(handle, kind);
    });
  }
}

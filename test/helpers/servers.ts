/**
 * Real servers for the tests: each suite starts its own redis-server / valkey-server on a free
 * loopback port with no persistence (test-server.ts, kept by `sh`) and stops it.
 */
import { basename } from 'node:path';
import { after, before, describe } from 'node:test';
import { fileURLToPath } from 'node:url';
import { which } from '../../src/server/embedded-server.js';
import { startTestServer, type TestServer } from './test-server.js';

export interface ServerKind {
  readonly kind: 'redis' | 'valkey';
  readonly bin: string;
}

export const SERVER_KINDS: readonly ServerKind[] = [
  { kind: 'redis', bin: 'redis-server' },
  { kind: 'valkey', bin: 'valkey-server' },
];

/**
 * The one server kind a file runs on when its subject is the tool's own process or rendering
 * (signals, terminals, help, the HTML page and its PNG, progress lines, redaction of text, refused
 * flags), not the server's behaviour: what it checks would come out the same on either kind, so
 * running it twice costs time and finds nothing more. Everything about what a server does keeps
 * running on both, through `forEachServer`.
 *
 * The kind comes from the file's name (`import.meta.url`), so a file always gets the same one and
 * the files split between the kinds: both still serve the suite. A kind that is not installed
 * gives way to the other; with neither, the first is named, and its suites skip saying why.
 */
export function oneServerKind(file: string): readonly ServerKind[] {
  const name = basename(file.startsWith('file:') ? fileURLToPath(file) : file).replace(/\.test\.[jt]s$/, '');
  let hash = 0;
  for (const char of name) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  const first = SERVER_KINDS[hash % SERVER_KINDS.length] as ServerKind;
  const installed = [first, ...SERVER_KINDS.filter((kind) => kind !== first)].find((kind) => which(kind.bin) !== undefined);
  return [installed ?? first];
}

/** `forEachServer` on the one kind `oneServerKind` picks for `file` (the test file's `import.meta.url`). */
export function forOneServerKind(file: string, title: string, body: (handle: ServerHandle, kind: ServerKind) => void, extraArgs: readonly string[] = []): void {
  forEachServer(title, body, extraArgs, oneServerKind(file));
}

export interface ServerHandle {
  /** Valid once the suite's `before` hook ran. */
  readonly server: TestServer;
  readonly url: string;
}

/**
 * A server started before the enclosing suite's tests and stopped after them (call it inside a
 * describe); `check` runs first, to fail the suite with a reason rather than a failed start.
 */
export function serverForSuite(bin: string, extraArgs: readonly string[] = [], check?: () => void): ServerHandle {
  let server: TestServer | undefined;
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
    check?.();
    server = await startTestServer(bin, extraArgs);
  });
  after(async () => {
    await server?.stop();
  });
  return handle;
}

/**
 * Declares `body` once per server kind (of `kinds`: `oneServerKind(import.meta.url)` for a file
 * about the tool's own process or rendering), inside a describe that starts and stops that server.
 * A kind whose binary is missing is skipped with a message saying how to install it.
 */
export function forEachServer(
  title: string,
  body: (handle: ServerHandle, kind: ServerKind) => void,
  extraArgs: readonly string[] = [],
  kinds: readonly ServerKind[] = SERVER_KINDS,
): void {
  for (const kind of kinds) {
    const missing = which(kind.bin) === undefined;
    const skip = missing ? `${kind.bin} is not installed (run scripts/install-servers.sh)` : false;
    describe(`${title} [${kind.kind}]`, { skip }, () => {
      const handle = serverForSuite(kind.bin, extraArgs);
      body(handle, kind);
    });
  }
}

/**
 * Where the server is and how to talk to it: URL checks, password redaction, the ioredis options
 * every connection of a run shares, and what kind of server answered.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { describeServerError, serverError, usageError } from '../errors.js';
import type { TlsSettings } from './tls.js';

export interface ServerTarget {
  /** The URL as given, password included: only ever handed to the client library. */
  readonly url: string;
  /** The URL with any password replaced, for every line a person or a log may see. */
  readonly display: string;
  /** For rediss:// URLs: CA, client certificate, and whether to verify the server. */
  readonly tls?: TlsSettings;
}

/**
 * For an address given without its scheme (`localhost:6379`, `user:pass@host`), the redis:// URL
 * it most likely meant, password redacted; else undefined.
 */
function meantUrl(url: string): string | undefined {
  if (url.includes('://')) return undefined;
  try {
    const guess = new URL(`redis://${url}`);
    // A host with a port or a user: an address; a lone word could be anything.
    const address = guess.port !== '' || guess.username !== '';
    return address && guess.hostname && /^\/?\d*$/.test(guess.pathname) ? redactUrl(guess.toString()).replace(/\/$/, '') : undefined;
  } catch {
    return undefined;
  }
}

export function parseServerUrl(url: string): ServerTarget {
  const meant = meantUrl(url);
  if (meant) throw usageError(`--url: ${JSON.stringify(redactUrl(meant.slice('redis://'.length)))} has no scheme; did you mean ${meant}?`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`--url: ${JSON.stringify(redactUrl(url))} is not a URL; expected redis://[user:password@]host:port[/db], rediss://… or unix:///path/to/socket`);
  }
  if (!['redis:', 'rediss:', 'unix:'].includes(parsed.protocol)) {
    throw usageError(`--url: scheme ${JSON.stringify(parsed.protocol.replace(/:$/, ''))} is not supported; use redis://, rediss:// or unix://`);
  }
  if (parsed.protocol === 'unix:' ? !parsed.pathname : !parsed.hostname) {
    throw usageError(`--url: ${JSON.stringify(redactUrl(url))} names no ${parsed.protocol === 'unix:' ? 'socket path' : 'host'}`);
  }
  if (parsed.protocol !== 'unix:' && parsed.pathname && !/^\/?\d*$/.test(parsed.pathname)) {
    throw usageError(`--url: the database in ${JSON.stringify(redactUrl(url))} must be a number`);
  }
  return { url, display: redactUrl(url) };
}

/** Replaces the password of a URL (and of anything URL-like that fails to parse) with ***. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/(\/\/[^/:@]*:)[^@/]*@/, '$1***@');
  }
}

export interface ConnectOptions {
  readonly connectionName?: string;
  /**
   * Reconnect after the server closed the connection (the client-kill fault). The offline queue and
   * the re-send of unanswered commands stay off: a command in flight fails, and the tool decides.
   */
  readonly reconnect?: boolean;
}

/**
 * One connection, connected. No reconnects and no offline queue: the tool decides what is
 * retried, and a lost server must surface as an error rather than a hang.
 */
export async function connect(target: ServerTarget, options: ConnectOptions = {}): Promise<Redis> {
  quietClientWarnings();
  const redis = new Redis(target.url, clientOptions(target, options));
  // ioredis reports socket errors as events as well as rejections; keep them off the console, but
  // remember the first: a refused AUTH arrives as an event, then connect() only says "closed".
  // connect() may also never settle after a refused AUTH, so the first error or the end decides.
  let firstEvent: unknown;
  let fail!: (err: unknown) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});
  redis.on('error', (err: unknown) => {
    firstEvent ??= err;
    fail(err);
  });
  redis.once('end', () => fail(firstEvent ?? new Error('Connection is closed.')));
  try {
    const connecting = redis.connect();
    connecting.catch(() => {});
    await Promise.race([connecting, failed]);
    // ioredis sends SELECT for a /db in the URL but only reports a refusal as an event and carries
    // on in database 0: select again and let a refusal (NOPERM, no such db) stop the run.
    const db = databaseOf(target.url);
    if (db !== undefined) await redis.select(db);
  } catch (err) {
    redis.disconnect();
    const error = describeServerError(firstEvent ?? err, target.display);
    if (error.message.startsWith('lost the connection') && target.url.startsWith('redis:')) {
      // What a TLS-only port does with a plain client.
      throw serverError(`the server at ${target.display} closed the connection while connecting: if it speaks TLS on this port, use a rediss:// URL`);
    }
    throw error;
  }
  return redis;
}

/** Reconnection attempts before a reconnecting connection gives up (5 ms apart, growing to 100 ms). */
const RECONNECT_ATTEMPTS = 50;

let warningsQuieted = false;

/**
 * ioredis warns on the console, once per connection, when a password is given to a server whose
 * default user needs none; a run opens many connections. Said once, in the tool's words instead.
 */
function quietClientWarnings(): void {
  if (warningsQuieted) return;
  warningsQuieted = true;
  const warn = console.warn.bind(console);
  let said = false;
  console.warn = (...args: unknown[]): void => {
    if (/does not require a password, but a password was supplied/.test(String(args[0]))) {
      if (!said) process.stderr.write("emq-race: note: the server's default user needs no password; the one in the URL is not used\n");
      said = true;
      return;
    }
    warn(...args);
  };
}

function databaseOf(url: string): number | undefined {
  if (!/^rediss?:/.test(url)) return undefined;
  const db = /^\/(\d+)$/.exec(new URL(url).pathname)?.[1];
  return db === undefined ? undefined : Number(db);
}

function clientOptions(target: ServerTarget, options: ConnectOptions): RedisOptions {
  const base: RedisOptions = {
    lazyConnect: true,
    connectTimeout: 5000,
    commandTimeout: 60_000,
    maxRetriesPerRequest: 0,
    retryStrategy: options.reconnect ? (attempt: number) => (attempt <= RECONNECT_ATTEMPTS ? Math.min(5 * attempt, 100) : null) : () => null,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    // disconnect() waits this long for a socket that already closed (a dead server) to say so.
    disconnectTimeout: 200,
    // No CLIENT SETINFO on connect: one command less for a least-privilege ACL user to need.
    disableClientInfo: true,
    ...(options.connectionName ? { connectionName: options.connectionName } : {}),
  };
  if (target.url.startsWith('unix:')) {
    const parsed = new URL(target.url);
    return { ...base, path: decodeURIComponent(parsed.pathname) };
  }
  const tls = tlsOptions(target);
  return tls ? { ...base, tls } : base;
}

/**
 * The TLS options for a target: none unless its URL is rediss:// (ioredis reads host, port and
 * credentials from such a URL but not that it means TLS), then the --tls-* settings.
 */
export function tlsOptions(target: ServerTarget): RedisOptions['tls'] {
  if (!target.url.startsWith('rediss:')) return undefined;
  return { ...(target.tls ?? { rejectUnauthorized: true }) };
}

export interface ServerInfo {
  readonly kind: 'redis' | 'valkey';
  readonly version: string;
}

/** What became of the tool's own server by the time the report is read: gone, or left running by --keep. */
export type EmbeddedFate = 'stopped' | 'kept';

/**
 * The report's first line: which server, and where. A server the tool started and stopped is not
 * given an address, since nothing answers there any more.
 */
export function serverHeadline(server: ServerInfo & { readonly url: string }, embedded?: EmbeddedFate): string {
  const what = `${server.kind} ${server.version}`;
  if (embedded === 'stopped') return `server: ${what} (embedded, now stopped)`;
  if (embedded === 'kept') return `server: ${what} at ${server.url} (embedded, kept running)`;
  return `server: ${what} at ${server.url}`;
}

/** Valkey also reports a redis_version (7.2.4 on Valkey 8): its own fields win where present. */
export function parseServerInfo(info: string): ServerInfo {
  const fields = new Map<string, string>();
  for (const line of info.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  const name = fields.get('server_name');
  if (name === 'valkey' || fields.has('valkey_version')) {
    return { kind: 'valkey', version: fields.get('valkey_version') ?? fields.get('redis_version') ?? 'unknown' };
  }
  return { kind: 'redis', version: fields.get('redis_version') ?? 'unknown' };
}

export async function readServerInfo(redis: Redis, target: ServerTarget): Promise<ServerInfo> {
  try {
    return parseServerInfo(await redis.info('server'));
  } catch (err) {
    throw describeServerError(err, target.display);
  }
}

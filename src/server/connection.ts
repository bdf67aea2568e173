/**
 * Where the server is and how to talk to it: URL checks, password redaction, the ioredis options
 * every connection of a run shares, and what kind of server answered.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { isIP } from 'node:net';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { describeServerError, noteStoppedAnswering, serverError, usageError } from '../errors.js';
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

/** Where a URL points and who logs in: what the client library is given, never the URL itself. */
export interface ServerAddress {
  readonly host?: string;
  readonly port?: number;
  /** A unix:// URL's socket path. */
  readonly path?: string;
  readonly username?: string;
  readonly password?: string;
  readonly db?: number;
}

/** What a URL's query may say: ioredis would read any query parameter as a client option (keyPrefix included). */
const QUERY_FIELDS = ['password', 'username', 'db'];
const URL_FORMS = 'expected redis://[user:password@]host:port[/db], rediss://… or unix:///path/to/socket';

/** A --url checked in full (usage errors name what is wrong), with its redacted form for display. */
export function parseServerUrl(url: string): ServerTarget {
  serverAddress(url);
  return { url, display: redactUrl(url) };
}

/**
 * Reads host, port, socket path, credentials and database out of a --url, checking each, with
 * the WHATWG parser only. The URL is never handed to ioredis, whose legacy url.parse() reads some
 * URLs differently (a backslash, a '/' or '%' in a password), and prints them in a warning.
 */
export function serverAddress(url: string): ServerAddress {
  const shown = JSON.stringify(redactUrl(url));
  const meant = meantUrl(url);
  if (meant) throw usageError(`--url: ${JSON.stringify(redactUrl(meant.slice('redis://'.length)))} has no scheme; did you mean ${meant}?`);
  // url.parse() and the WHATWG parser disagree on backslashes: no guessing which was meant.
  if (url.includes('\\')) throw usageError(`--url: ${shown} contains a backslash, which URL parsers read in different ways; write it as %5C`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`--url: ${shown} is not a URL; ${URL_FORMS} (percent-encode a '/', '?', '#' or '@' in the password)`);
  }
  if (!['redis:', 'rediss:', 'unix:'].includes(parsed.protocol)) {
    throw usageError(`--url: scheme ${JSON.stringify(parsed.protocol.replace(/:$/, ''))} is not supported; use redis://, rediss:// or unix://`);
  }
  const unix = parsed.protocol === 'unix:';
  if (unix ? !parsed.pathname : !parsed.hostname) {
    throw usageError(`--url: ${shown} names no ${unix ? 'socket path' : 'host'}`);
  }
  for (const name of parsed.searchParams.keys()) {
    if (!QUERY_FIELDS.includes(name)) throw usageError(`--url: the query parameter ${JSON.stringify(name)} in ${shown} is not supported; the query may only give ${QUERY_FIELDS.join(', ')}`);
  }
  const decoded = (what: string, text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw usageError(`--url: the ${what} in ${shown} has a '%' that starts no percent-escape; write a '%' as %25`);
    }
  };
  const username = decoded('user name', parsed.username) || (parsed.searchParams.get('username') ?? '');
  const password = decoded('password', parsed.password) || (parsed.searchParams.get('password') ?? '');
  const dbText = (!unix && parsed.pathname.length > 1 ? parsed.pathname.slice(1) : undefined) ?? parsed.searchParams.get('db') ?? undefined;
  if (dbText !== undefined && !/^\d{1,9}$/.test(dbText)) throw usageError(`--url: the database in ${shown} must be a number`);
  const credentials = { ...(username ? { username } : {}), ...(password ? { password } : {}), ...(dbText !== undefined ? { db: Number(dbText) } : {}) };
  if (unix) return { path: decoded('socket path', parsed.pathname), ...credentials };
  const port = parsed.port === '' ? 6379 : Number(parsed.port);
  if (port === 0) throw usageError(`--url: port 0 in ${shown} is not a port a server can listen on; expected 1 to 65535`);
  // An IPv6 literal keeps its brackets in a URL but not as a host name.
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port, ...credentials };
}

/** Query parameters whose value is a secret (ioredis reads `password`; the rest are hidden to be safe). */
const SECRET_PARAM = /pass|secret|token|auth|key/i;

/**
 * The URL with every password replaced by ***: the user-info one and any in the query. A string
 * the WHATWG parser cannot read (or reads with an '@' left outside the user info, where a password
 * holding '/', '?' or '#' ends up) is scrubbed as text instead, erring towards hiding too much.
 */
export function redactUrl(url: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || `${parsed.pathname}${parsed.search}${parsed.hash}`.includes('@') || url.includes('\\')) return scrubUrlText(url);
  if (parsed.password) parsed.password = '***';
  for (const name of new Set(parsed.searchParams.keys())) if (SECRET_PARAM.test(name)) parsed.searchParams.set(name, '***');
  return parsed.toString();
}

/**
 * Hides what may be a password in URL-like text: from the scheme's `//` to the last '@' all but
 * the user name, and the value of any query parameter named like a secret. Used for strings no
 * parser reads, and over every error line as a last guard.
 */
export function scrubUrlText(text: string): string {
  const userInfo = (match: string, scheme: string, rest: string): string => {
    const at = rest.lastIndexOf('@');
    // A '[' opens an IPv6 host or a usage pattern such as redis://[user:password@]host, not user info.
    if (at < 0 || rest.startsWith('[')) return match;
    const info = rest.slice(0, at);
    const colon = info.indexOf(':');
    return `${scheme}${colon < 0 ? info : `${info.slice(0, colon)}:***`}${rest.slice(at)}`;
  };
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)([^\s"']*)/gi, userInfo)
    .replace(/([?&;][^=&\s"']*?(?:pass|secret|token|auth|key)[^=&\s"']*=)[^&\s"'#]*/gi, '$1***');
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
  const address = serverAddress(target.url);
  const redis = new Redis(clientOptions(target, address, options));
  // ioredis reports socket errors as events as well as rejections; keep them off the console, but
  // remember the first: a refused AUTH arrives as an event, then connect() only says "closed".
  // connect() may also never settle after a refused AUTH, so the first error or the end decides.
  let firstEvent: unknown;
  let fail!: (err: unknown) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});
  trackOpen(redis, target.display);
  redis.on('error', (err: unknown) => {
    if (/^Socket timeout/.test(String((err as Error)?.message))) serverStoppedAnswering(target.display);
    firstEvent ??= err;
    fail(err);
  });
  redis.once('end', () => fail(firstEvent ?? new Error('Connection is closed.')));
  const stopHandshakeWatch = target.url.startsWith('rediss:') ? watchHandshake(redis, target, fail) : undefined;
  try {
    const connecting = redis.connect();
    connecting.catch(() => {});
    await Promise.race([connecting, failed]);
    stopHandshakeWatch?.();
    // ioredis sends SELECT for the db option but only reports a refusal as an event and carries on
    // in database 0: select again and let a refusal (NOPERM, no such db) stop the run.
    if (address.db !== undefined) await redis.select(address.db);
  } catch (err) {
    stopHandshakeWatch?.();
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

/** How long a TLS handshake may go unanswered once the TCP connection stands, and how often that is looked at. */
export const TLS_HANDSHAKE_MS = 2000;
const HANDSHAKE_CHECK_MS = 100;

/**
 * A plain server reads a TLS ClientHello as the start of a command and waits for the rest, so a
 * rediss:// URL on a plain port would only end at the connect timeout, as "timed out". Once the
 * TCP connection stands, an unanswered handshake ends sooner and says what it likely means.
 */
function watchHandshake(redis: Redis, target: ServerTarget, fail: (err: unknown) => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let tcpSince: number | undefined;
  const check = (): void => {
    if (redis.status !== 'connecting') return;
    const stream = (redis as unknown as { stream?: { connecting: boolean } }).stream;
    // Until TCP stands, waiting is the connect timeout's to judge.
    if (stream && !stream.connecting) tcpSince ??= Date.now();
    if (tcpSince === undefined || Date.now() - tcpSince < TLS_HANDSHAKE_MS) {
      timer = setTimeout(check, HANDSHAKE_CHECK_MS);
      return;
    }
    fail(serverError(`the server at ${target.display} took the connection but did not answer the TLS handshake within ${TLS_HANDSHAKE_MS / 1000} s: it may not speak TLS on this port (for a plain port use a redis:// URL)`));
  };
  timer = setTimeout(check, HANDSHAKE_CHECK_MS);
  return () => clearTimeout(timer);
}

/**
 * How long a connection waits for the server's next reply before it counts the server as stopped
 * (paused, frozen, stuck in a script) and closes: every command then pending fails at once, and
 * so does every later one, so a silent server costs a run one wait of this length, not one per
 * command. Far above any single call the tool makes (each holds the server for milliseconds).
 */
export const ANSWER_TIMEOUT_MS = 10_000;

/** The open connections to each server (by redacted address). */
const openConnections = new Map<string, Set<Redis>>();

function trackOpen(redis: Redis, where: string): void {
  const open = openConnections.get(where) ?? new Set<Redis>();
  openConnections.set(where, open);
  open.add(redis);
  redis.once('end', () => open.delete(redis));
  // ioredis clears its socket timeout only when data arrives: on a socket closed with replies
  // pending, the timer would keep the process alive for up to ANSWER_TIMEOUT_MS and, after a
  // reconnect (the client-kill fault), fire on the new socket. Cleared and forgotten here, so that
  // the next command arms it afresh.
  redis.on('close', () => {
    const timed = redis as unknown as { socketTimeoutTimer?: NodeJS.Timeout };
    clearTimeout(timed.socketTimeoutTimer);
    timed.socketTimeoutTimer = undefined;
  });
}

/**
 * One connection waited ANSWER_TIMEOUT_MS for a reply in vain: every connection to that server is
 * dropped, so that no other command (a sweeper's, the cleanup's, a QUIT) waits as long again.
 */
function serverStoppedAnswering(where: string): void {
  noteStoppedAnswering(where, ANSWER_TIMEOUT_MS);
  for (const redis of openConnections.get(where) ?? []) redis.disconnect();
}

/** Reconnection attempts before a reconnecting connection gives up (5 ms apart, growing to 100 ms). */
const RECONNECT_ATTEMPTS = 50;

let warningsQuieted = false;

/** Where the client's notes go, in the tool's words; the command line points it at its stderr. */
let clientNote: (line: string) => void = () => {};
/** Whether this command has said the note about an unneeded password (once per command, not per process). */
let saidNoPasswordNeeded = false;

/** Sends the client library's notes (once each per command, reworded) to `note`. */
export function onClientNote(note: (line: string) => void): void {
  clientNote = note;
  saidNoPasswordNeeded = false;
}

/**
 * ioredis warns on the console, once per connection, when a password is given to a server whose
 * default user needs none; a run opens many connections. Said once, in the tool's words instead.
 */
function quietClientWarnings(): void {
  if (warningsQuieted) return;
  warningsQuieted = true;
  const warn = console.warn.bind(console);
  console.warn = (...args: unknown[]): void => {
    // Without +info the ready check is skipped with a warning; the tool's own INFO then fails with one line.
    if (/^Skipping the ready check because INFO command fails/.test(String(args[0]))) return;
    if (/does not require a password, but a password was supplied/.test(String(args[0]))) {
      if (!saidNoPasswordNeeded) clientNote("emq-race: note: the server's default user needs no password; the one in the URL is not used\n");
      saidNoPasswordNeeded = true;
      return;
    }
    warn(...args);
  };
}

function clientOptions(target: ServerTarget, address: ServerAddress, options: ConnectOptions): RedisOptions {
  const base: RedisOptions = {
    ...address,
    lazyConnect: true,
    connectTimeout: 5000,
    socketTimeout: ANSWER_TIMEOUT_MS,
    // A backstop only: the socket timeout above closes a silent connection first.
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
  const tls = tlsOptions(target);
  return tls ? { ...base, tls } : base;
}

/**
 * The TLS options for a target: none unless its URL is rediss:// (ioredis reads host, port and
 * credentials from such a URL but not that it means TLS), then the --tls-* settings.
 */
export function tlsOptions(target: ServerTarget): RedisOptions['tls'] {
  if (!target.url.startsWith('rediss:')) return undefined;
  const { serverName, ...settings } = target.tls ?? { rejectUnauthorized: true };
  if (serverName === undefined) return settings;
  // Through the latency proxy the socket's host is loopback: the certificate is checked against
  // the server's own name, which also goes out as SNI (where it is a name: SNI carries no IPs).
  return {
    ...settings,
    ...(isIP(serverName) ? {} : { servername: serverName }),
    checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(serverName, cert),
  };
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

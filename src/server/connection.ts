/**
 * Where the server is and how to talk to it: URL checks, password redaction, the ioredis options
 * every connection of a run shares, and what kind of server answered.
 */
import type { Redis, RedisOptions } from 'ioredis';
import { rememberSecret } from '../shared/secrets.js';
import { createRequire } from 'node:module';
import type { PeerCertificate } from 'node:tls';
import { describeServerError, EmqError, loadingServer, noteStoppedAnswering, serverError, UnlikeRedisReply, usageError } from '../shared/errors.js';
import { orStopped, stoppedBySignal } from '../shared/interrupt.js';
import { awakeTimeout } from './frozen.js';
import type { TlsSettings } from './tls.js';
import { groupThousands, nearWord, VALUE_NOT_SHOWN } from '../shared/text.js';

// node:net and node:tls are required where a TLS connection through the latency proxy needs them:
// every command imports this module for its URL checks, and --help should not load TLS.
const require = createRequire(import.meta.url);

export interface ServerTarget {
  /** The URL as given, password included: only ever handed to the client library. */
  readonly url: string;
  /** The URL with any password replaced, for every line a person or a log may see. */
  readonly display: string;
  /** For rediss:// URLs: CA, client certificate, and whether to verify the server. */
  readonly tls?: TlsSettings;
  /** The URL came from REDIS_URL, no --url given: a failure to connect says so. */
  readonly fromEnvironment?: true;
  /**
   * A server of the tool's own, and how long it lives: `command`, the embedded server (or cluster),
   * stopped when the command ends unless --keep keeps it (a failed run's too, not an interrupted
   * one's); `run`, a failover drill's pair, stopped when its run ends, whose promoted replica alone
   * --keep keeps, and only after a run that went well. Keys a run leaves on it go with it.
   */
  readonly own?: 'command' | 'run';
}

/**
 * Whether a signal has stopped a command that runs on a server of the tool's own: the server goes
 * with the command, every key on it, so nothing more is sent to it and no call in flight is waited
 * for (a paused server would hold each for the whole bounded wait). Not for a failure the signal
 * also carries (another queue's, under --keep): the server may then be kept, and what is on it.
 */
export function serverGoesWithSignal(target: Pick<ServerTarget, 'own'>, signal: AbortSignal): boolean {
  return target.own !== undefined && stoppedBySignal(signal);
}

/**
 * For an address given without its scheme (`localhost:6379`, `user:pass@host`), or with the
 * scheme's colon or slashes mistyped (`redis:user:pass@host`, `redis:/host`, `redis//host`), the
 * URL it most likely meant, password redacted; else undefined. A mistyped scheme is taken off
 * first: read as part of the address it would become the user name, and the user the password.
 */
function meantUrl(url: string): { meant: string; mistyped: boolean } | undefined {
  if (url.includes('://')) return undefined;
  const typo = /^(rediss?)(?::\/?|\/\/)(?!\/)(.+)$/i.exec(url);
  const scheme = typo?.[1]?.toLowerCase() ?? 'redis';
  try {
    const guess = new URL(`${scheme}://${typo?.[2] ?? url}`);
    // A host with a port or a user: an address; a lone word could be anything.
    const address = guess.port !== '' || guess.username !== '';
    const meant = redactUrl(guess.toString()).replace(/\/$/, '');
    return address && guess.hostname && /^\/?\d*$/.test(guess.pathname) ? { meant, mistyped: typo !== null } : undefined;
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
/**
 * The schemes the tool may name: its own and those a user may give by mistake. Any other word in
 * front of a ':' may be a password, and is neither shown in a redacted URL nor named in an error.
 */
const SCHEME_WORDS = ['redis', 'rediss', 'valkey', 'valkeys', 'redict', 'unix', 'tcp', 'tls', 'http', 'https'];
const URL_FORMS = 'expected redis://[user:password@]host:port[/db], rediss://… or unix:///path/to/socket';

/**
 * A --url checked in full (usage errors name what is wrong), with its redacted form for display.
 * `source` is where the URL came from, the word each error starts with (`REDIS_URL` when no --url
 * was given).
 */
export function parseServerUrl(url: string, source = '--url'): ServerTarget {
  serverAddress(url, source);
  return { url, display: redactUrl(url) };
}

/**
 * Reads host, port, socket path, credentials and database out of a --url, checking each, with
 * the WHATWG parser only. The URL is never handed to ioredis, whose legacy url.parse() reads some
 * URLs differently (a backslash, a '/' or '%' in a password), and prints them in a warning.
 */
export function serverAddress(url: string, source = '--url'): ServerAddress {
  const display = redactUrl(url);
  // A value with nothing shown of it (a word that may be the password alone) is not quoted as '***'.
  // Nor is an empty one (`--url=`), which has nothing to hide: said as what it is.
  const shown = url.trim() === '' ? 'an empty value' : display === '***' ? VALUE_NOT_SHOWN : JSON.stringify(display);
  // The WHATWG parser drops a tab or line break anywhere, so the password used would not be the
  // one typed; other control characters are refused with them, as no password a person types.
  if (/[\x00-\x1f\x7f]/.test(url))
    throw usageError(
      `${source}: ${shown} contains a tab, line break or other control character, which URL parsers drop or read in different ways; percent-encode it (a tab is %09)`,
    );
  const guessed = meantUrl(url);
  if (guessed?.mistyped) throw usageError(`${source}: ${shown} mistypes the scheme; did you mean ${guessed.meant}?`);
  if (guessed) throw usageError(`${source}: ${JSON.stringify(guessed.meant.slice('redis://'.length))} has no scheme; did you mean ${guessed.meant}?`);
  // url.parse() and the WHATWG parser disagree on backslashes: no guessing which was meant.
  if (url.includes('\\')) throw usageError(`${source}: ${shown} contains a backslash, which URL parsers read in different ways; write it as %5C`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // A port past 65535 is the one part the parser refuses that a person can fix by eye: said so,
    // from the redacted form only (the digits are not repeated: they may be a password's).
    const port = /^[a-z]+:\/\/(?:[^/?#]*@)?(?:\[[^\]]*\]|[^/?#@:]*):(\d+)(?:[/?#]|$)/i.exec(url)?.[1];
    if (port !== undefined && Number(port) > 65535) throw usageError(`${source}: ${shown} has a port past 65535; expected 1 to 65535`);
    // With no '@' anywhere there is no user info (a password may hold a raw '/', '?' or '#' before
    // its '@'), and the part that fails is the host's: said which, still from the redacted form
    // only (a word after a ':' may be a password that lost its '@host').
    const authority = url.includes('@') ? undefined : /^rediss?:\/\/([^/?#]*)/i.exec(url)?.[1];
    if (authority !== undefined) {
      // An address's '::', or three colons and more, of hex groups: not a hex password that lost its
      // '@host' (`redis://:9f86d081:6390`), which the port's line below answers.
      if (/^[0-9a-f:.]+$/i.test(authority) && (authority.includes('::') || (authority.match(/:/g)?.length ?? 0) >= 3))
        throw usageError(`${source}: ${shown} has an IPv6 address without its brackets; write it as redis://[ADDRESS]:PORT (redis://[::1]:6379)`);
      const hostPort = /^(?:\[[^\]]*\]|[^:[\]]*):(.*)$/.exec(authority)?.[1];
      if (hostPort !== undefined && !/^\d+$/.test(hostPort))
        throw usageError(
          `${source}: ${shown} has a port that is not a number; expected 1 to 65535 after the host's ':' (a password goes before the host: redis://:password@host:port)`,
        );
    }
    throw usageError(`${source}: ${shown} is not a URL; ${URL_FORMS} (percent-encode a '/', '?', '#' or '@' in the password)`);
  }
  // Everything after a '#' is a fragment, which a server URL has no use for: most likely a
  // password's '#', and what came before it would be read as the host (`redis://u:#pw@h`).
  if (parsed.hash.includes('@')) {
    throw usageError(`${source}: ${shown} has a '#', after which a URL's parser reads nothing as the address; percent-encode a '#' in a password as %23`);
  }
  // Anywhere else a '#' cuts the URL short just as silently: a ?password= value ends there (and
  // the server answers "wrong password"), or a trailing '#…' is dropped unread.
  if (url.includes('#')) {
    throw usageError(`${source}: ${shown} has a '#', and a URL's parser drops it and all that follows; percent-encode a '#' in a password as %23`);
  }
  if (!['redis:', 'rediss:', 'unix:'].includes(parsed.protocol)) {
    // Named only when written as a scheme known elsewhere (`http://`): any other word before a
    // ':' may be a password's start (`pa55word://…`), and the URL is not repeated either.
    const scheme = parsed.protocol.replace(/:$/, '');
    const named =
      url.toLowerCase().startsWith(`${scheme}://`) && nearWord(scheme, SCHEME_WORDS)
        ? `scheme ${JSON.stringify(scheme)} is`
        : `${VALUE_NOT_SHOWN} has a scheme that is`;
    throw usageError(`${source}: ${named} not supported; use redis://, rediss:// or unix://`);
  }
  const unix = parsed.protocol === 'unix:';
  // `unix:/path` or `unix:path` would run, where `redis:/host` is a typo refused: one form, the
  // one every server URL shares, with the path after the host's empty place.
  if (unix && !/^unix:\/\//i.test(url)) {
    throw usageError(`${source}: ${shown} writes its socket path without the "//" after unix:; write it after three slashes: unix:///path/to/socket`);
  }
  if (unix ? !parsed.pathname : !parsed.hostname) {
    throw usageError(`${source}: ${shown} names no ${unix ? 'socket path' : 'host'}`);
  }
  // A socket is on this machine: a host (or port) would be dropped unread, and in `unix://tmp/s.sock`
  // the first folder of the path is read as one.
  if (unix && (parsed.hostname !== '' || parsed.port !== '')) {
    throw usageError(
      `${source}: ${shown} names a host before its socket path, which a unix:// URL does not take; write the path after three slashes, and a user or password in the query: unix:///path/to/socket?password=…`,
    );
  }
  for (const name of parsed.searchParams.keys()) {
    // Not named: a name the tool does not read may be a password typed there (the URL shows it as ***).
    if (!QUERY_FIELDS.includes(name)) {
      throw usageError(`${source}: a query parameter in ${shown} is not supported; the query may only give ${QUERY_FIELDS.join(', ')}`);
    }
  }
  const decoded = (what: string, text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw usageError(`${source}: the ${what} in ${shown} has a '%' that starts no percent-escape; write a '%' as %25`);
    }
  };
  // URLSearchParams reads a stray '%' as itself: the same mistake in the query is refused as in the user info.
  if (/%(?![0-9A-Fa-f]{2})/.test(parsed.search)) {
    throw usageError(`${source}: the query in ${shown} has a '%' that starts no percent-escape; write a '%' as %25`);
  }
  // A field given twice with two values would have the client pick one without a word (the tool
  // reads the user info first, the client the query): the user would not know which password,
  // user or database the run used. Its values are never named.
  const given: Record<string, [string, string | undefined]> = {
    password: ['password', parsed.password !== '' ? decoded('password', parsed.password) : undefined],
    username: ['user name', parsed.username !== '' ? decoded('user name', parsed.username) : undefined],
    db: ['database', !unix && parsed.pathname.length > 1 ? parsed.pathname.slice(1) : undefined],
  };
  for (const [field, [word, beforeQuery]] of Object.entries(given)) {
    const values = new Set([...(beforeQuery !== undefined ? [beforeQuery] : []), ...parsed.searchParams.getAll(field)]);
    if (values.size > 1) throw usageError(`${source}: ${shown} gives two different values for the ${word}; give it once`);
  }
  const username = decoded('user name', parsed.username) || (parsed.searchParams.get('username') ?? '');
  const password = decoded('password', parsed.password) || (parsed.searchParams.get('password') ?? '');
  if (password) rememberSecret(password);
  const dbText = (!unix && parsed.pathname.length > 1 ? parsed.pathname.slice(1) : undefined) ?? parsed.searchParams.get('db') ?? undefined;
  if (dbText !== undefined && !/^\d{1,9}$/.test(dbText)) throw usageError(`${source}: the database in ${shown} must be a number`);
  const credentials = { ...(username ? { username } : {}), ...(password ? { password } : {}), ...(dbText !== undefined ? { db: Number(dbText) } : {}) };
  if (unix) return { path: decoded('socket path', parsed.pathname), ...credentials };
  const port = parsed.port === '' ? 6379 : Number(parsed.port);
  if (port === 0) throw usageError(`${source}: port 0 in ${shown} is not a port a server can listen on; expected 1 to 65535`);
  // An IPv6 literal keeps its brackets in a URL but not as a host name.
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port, ...credentials };
}

/** At most this much of a URL is ever shown: a longer one is cut (after its secrets are masked). */
export const SHOWN_URL_MAX = 200;

/** Query parameters whose value is shown, when it looks as it should; every other value is masked, whatever its name. */
const SHOWN_PARAMS = new Map([
  ['db', /^\d{0,9}$/],
  ['username', /^[A-Za-z0-9._-]*$/],
]);

/** A scheme the tool may name, with its slashes, in front of a URL that is scrubbed as text. */
const KNOWN_SCHEMES = new RegExp(`^(?:${SCHEME_WORDS.join('|')}):\\/{0,3}`, 'i');

/**
 * What a URL scrubbed as text may show after its scheme: a host, a port of digits, a database, or
 * a socket path. After user info, a port that is no number (`host:notaport`) is shown too; without
 * user info it may be a password whose '@' was left out.
 */
const SAFE_ADDRESS = /^(?:(?:\[[0-9A-Fa-f:.]*\]|[A-Za-z0-9.-]*)(?::\d*)?(?:\/\d*)?|\/[A-Za-z0-9._/-]*)$/;
const SAFE_TAIL = /^(?:\[[0-9A-Fa-f:.]*\]|[A-Za-z0-9.-]*)(?::[A-Za-z0-9]*)?(?:\/\d*)?$/;

/** A user name shown before `:***`. */
const SHOWN_USER = /^[A-Za-z0-9._-]{0,64}$/;

/**
 * The one redactor: every string made from --url or REDIS_URL for a person or a log to see passes
 * here. It errs towards hiding: the user-info password (and user info without a ':', which may be
 * a password written without its colon), every query value but the database and the user name,
 * any fragment, and in a string that does not parse cleanly everything that is not plainly a
 * host, port or database. A word that is no URL at all is not shown. At most SHOWN_URL_MAX
 * characters are returned.
 */
export function redactUrl(url: string): string {
  const shown = redactParsed(url) ?? redactText(url);
  return shown.length > SHOWN_URL_MAX ? `${shown.slice(0, SHOWN_URL_MAX)}…` : shown;
}

/**
 * A URL the WHATWG parser reads with every '@' inside its user info, rebuilt with its secrets
 * masked; undefined for anything else (whitespace, quotes, a backslash or a control character,
 * which parsers read differently or drop; no `//` after the scheme; an '@' past the host).
 */
function redactParsed(url: string): string | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[\x21-\x7e]*$/i.test(url) || /["'`\\]/.test(url)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const { pathname, search, hash } = parsed;
  if (`${pathname}${search}${hash}`.includes('@')) return undefined;
  if (parsed.password) parsed.password = '***';
  else if (parsed.username) parsed.username = '***';
  // A database is a number: any other path may be a password put in the wrong place.
  if (parsed.protocol !== 'unix:' && !/^\/?\d{0,9}$/.test(pathname)) parsed.pathname = '/***';
  parsed.search = '';
  parsed.hash = '';
  return `${parsed.toString()}${search ? `?${shownQuery(search)}` : ''}${hash ? '#***' : ''}`;
}

/**
 * A query's parts as they may be shown: `name` where the part is plainly a parameter, `value`
 * where it is one whose value is shown (db, username, in plain characters). A part with no '='
 * (a lone word may be a password) and every part after a value that is hidden (a password that
 * held an unencoded '&' goes on into the parts after it) show nothing at all.
 */
function queryParts(search: string): { readonly name?: string; readonly value?: string }[] {
  let hidden = false;
  return (search.startsWith('?') ? search.slice(1) : search)
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const eq = part.indexOf('=');
      if (hidden || eq < 0) return {};
      const name = decodedOrRaw(part.slice(0, eq));
      const value = decodedOrRaw(part.slice(eq + 1));
      // Only the parameters the tool reads are named: any other name may be a password typed there.
      if (!QUERY_FIELDS.includes(name)) {
        hidden = true;
        return {};
      }
      if (SHOWN_PARAMS.get(name)?.test(value)) return { name, value };
      hidden = true;
      return { name };
    });
}

/** A query (`?…`) as it may be shown: each part as queryParts allows, the rest `***`. */
function shownQuery(search: string): string {
  return queryParts(search)
    .map(({ name, value }) => (name === undefined ? '***' : `${name}=${value ?? '***'}`))
    .join('&');
}

/** A query part decoded as the URL parser decodes it ('+' a space), or as it stands where it cannot be. */
function decodedOrRaw(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * A string no parser reads cleanly, shown as little as helps: a known scheme, the user name, and
 * what follows the user info when it is plainly a host and port (and the string has one '@', so
 * that no part of a password that held one can pass for a host). Anything else is `***`.
 */
function redactText(text: string): string {
  const scheme = KNOWN_SCHEMES.exec(text)?.[0] ?? '';
  const rest = text.slice(scheme.length);
  const at = rest.lastIndexOf('@');
  const ats = text.split('@').length - 1;
  if (at < 0) {
    // No user info: a host and port, or a word that may be a password given by itself.
    const address = scheme ? SAFE_ADDRESS.test(rest) : /^[A-Za-z0-9.-]+:\d{1,5}$/.test(rest);
    return address ? `${scheme}${rest}` : `${scheme}***`;
  }
  const info = rest.slice(0, at);
  // An '@' after a '/', '?', '#', '&' or '=' may end user info or sit in a query's password: no
  // part is told apart from another, so none is shown.
  if (/[/?#&=]/.test(info)) return `${scheme}***`;
  const colon = info.indexOf(':');
  const user = colon < 0 ? '' : info.slice(0, colon);
  const shownInfo = colon >= 0 && SHOWN_USER.test(user) ? `${user}:***` : '***';
  const tail = rest.slice(at + 1);
  // The tail is a host only after the one '@' (with two, part of a password may follow the first).
  return `${scheme}${shownInfo}@${ats === 1 && SAFE_TAIL.test(tail) ? tail : '***'}`;
}

/**
 * Hides what may be a password in URL-like text within a longer line: from the scheme's `//` (or
 * a one-slash typo's `/`) to the last '@' all but the user name (all of it where a query may hold
 * that '@'), and the value of any query parameter named like a secret (after a '=' or a mistyped ':'). The last guard over every error line, whose URLs have already
 * passed redactUrl.
 */
export function scrubUrlText(text: string): string {
  const userInfo = (match: string, scheme: string, rest: string): string => {
    const at = rest.lastIndexOf('@');
    // No host before a ':' and what follows is no port: a password whose '@' and host were left out.
    if (at < 0 && /^:(?!\d*(?:[/?#]|$))/.test(rest)) return `${scheme}***`;
    // A '[' opens an IPv6 host or a usage pattern such as redis://[user:password@]host, not user info.
    if (at < 0 || rest.startsWith('[')) return match;
    const info = rest.slice(0, at);
    // An '@' past a '/', '?', '#', '&' or '=' may sit in a query's password: the whole URL goes.
    if (/[/?#&=]/.test(info)) return `${scheme}***`;
    const colon = info.indexOf(':');
    return `${scheme}${colon < 0 ? '***' : `${info.slice(0, colon)}:***`}${rest.slice(at)}`;
  };
  // A parameter named like a secret has its value hidden, but not one already masked:
  // `?password=***: connection refused` keeps its ':'.
  // Within a URL the rest of its query goes too: a password may hold an unencoded '&'.
  const secretParams = (text: string, names: RegExp, toEnd: boolean): string =>
    text.replace(
      // The value stops before a ':' that ends the word (`…?password=abc: folder …`): the line's own.
      new RegExp(`([?&;#][^=&\\s"'#:]*?(?:${names.source})[^=&\\s"'#:]*[=:])([^${toEnd ? '' : '&'}\\s"'#]*?)(?=:?(?:[\\s"'#]|$)${toEnd ? '' : '|&'})`, 'gi'),
      (match, head: string, value: string) => (value.startsWith('***') ? match : `${head}***`),
    );
  // A scheme with one slash is a typo of a known one (`redis:/host`); any word before ':/' is not
  // (a file name such as `ab:/c@d.html`).
  // A URL's last ':', ',' or '.' before a space is the line's punctuation, kept as it is.
  const urls = text.replace(/(?:\b(?:rediss?|valkeys?|unix):\/(?!\/)|[a-z][a-z0-9+.-]*:\/\/)[^\s"']*?(?=[:,.;]?(?:[\s"']|$))/gi, (url) => {
    const scheme = /^[a-z][a-z0-9+.-]*:\/\/?/i.exec(url)?.[0] ?? '';
    const masked = secretParams(userInfo(url, scheme, url.slice(scheme.length)), /pass|secret|token|auth|key/, true);
    // The query as redactUrl shows it: a lone word, a name the tool does not read, and all after a hidden value go.
    const query = masked.indexOf('?');
    if (query < 0) return masked;
    return `${masked.slice(0, query + 1)}${shownQuery(masked.slice(query).replace(/#.*$/, ''))}`;
  });
  // Outside a URL too (an address written without its scheme), but not `key`: a file name such as
  // `a?key=1.html` is no query.
  return secretParams(urls, /pass|secret|token|auth/, false);
}

/**
 * The arguments of a command line with the value of every --url redacted: for a command shown
 * again (the grid's page) as it was typed.
 */
export function redactArgs(args: readonly string[]): string[] {
  return args.map((arg, at) => {
    if (args[at - 1] === '--url') return redactUrl(arg);
    if (arg.startsWith('--url=')) return `--url=${redactUrl(arg.slice('--url='.length))}`;
    return arg;
  });
}

export interface ConnectOptions {
  readonly connectionName?: string;
  /**
   * Reconnect after the server closed the connection (the client-kill fault). The offline queue and
   * the re-send of unanswered commands stay off: a command in flight fails, and the tool decides.
   */
  readonly reconnect?: boolean;
  /**
   * A stop (a signal) gives the connecting up at once, with the stop's reason: a server that takes
   * the connection but answers nothing (paused, SIGSTOP) would hold it for the whole bounded wait.
   */
  readonly signal?: AbortSignal;
}

/**
 * Closes a connection: QUIT, then the socket. ioredis resolves QUIT on its reply and leaves the
 * socket for the server to close, so a peer that answers but never closes (one that says `+OK` to
 * everything) would hold the process open for ever; a server gone already fails QUIT, and the
 * socket is dropped all the same.
 */
export async function closeConnection(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    // Nothing to say goodbye to: the socket goes below.
  } finally {
    redis.disconnect();
  }
}

/**
 * One connection, connected. No reconnects and no offline queue: the tool decides what is
 * retried, and a lost server must surface as an error rather than a hang.
 */
export async function connect(target: ServerTarget, options: ConnectOptions = {}): Promise<Redis> {
  quietClientWarnings();
  const address = serverAddress(target.url);
  // The client library loads with the first connection: a command that never connects (--help, a
  // usage error) starts without it.
  const { Redis } = await import('ioredis');
  const redis = new Redis(clientOptions(target, address, options));
  judgeWaitsAwake(redis);
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
  // ioredis's ready check waits out a server still loading its data set, INFO after INFO, for as
  // long as the load takes and without a word: the first INFO that says so ends the connecting
  // with one line instead (its next INFO, 100 ms on at most, finds the connection closed).
  const ownInfo = redis.info.bind(redis) as (...args: unknown[]) => Promise<unknown>;
  const watched = redis as unknown as { info: typeof ownInfo };
  watched.info = (...args) => {
    const reply = ownInfo(...args);
    reply.then(
      (text) => typeof text === 'string' && /^loading:1\r?$/m.test(text) && fail(loadingServer(target.display)),
      () => {},
    );
    return reply;
  };
  try {
    const connecting = redis.connect();
    connecting.catch(() => {});
    await orStopped(options.signal, Promise.race([connecting, failed]));
    stopHandshakeWatch?.();
    // ioredis sends SELECT for the db option but only reports a refusal as an event and carries on
    // in database 0: select again and let a refusal (NOPERM, no such db) stop the run.
    if (address.db !== undefined) await orStopped(options.signal, selectDatabase(redis, address.db, target));
  } catch (err) {
    stopHandshakeWatch?.();
    redis.disconnect();
    if (options.signal?.aborted) throw options.signal.reason;
    // A database the server lacks is the command line's to fix, whichever SELECT found it (the
    // client's own, sent on connecting, or ours).
    const first = firstEvent ?? err;
    const error = address.db !== undefined && isMissingDatabase(first) ? missingDatabase(target, address.db) : describeServerError(first, target.display);
    throw fromWhere(target, connectFailure(target, error));
  }
  // The client's own INFO again (the prototype's), the ready check passed.
  Reflect.deleteProperty(watched, 'info');
  answered.add(target);
  answeredAt.add(target.display);
  return redis;
}

/**
 * The targets (one per command's server) a connection has reached: a later connection to one of
 * them that is closed while connecting met a server that went away (shut down, restarted), not one
 * that speaks another protocol, and its line says it lost the connection.
 */
const answered = new WeakSet<ServerTarget>();
/** The servers, by address, any connection has reached: one that went silent later was not always so. */
const answeredAt = new Set<string>();

/** The longest argument, in bytes, a server that asks for a login takes from a client before it logs in (16 KB: Redis since 6.2.7, Valkey). */
const UNAUTHENTICATED_ARGUMENT_MAX = 16_384;

/** Why a connection failed, in words: a lost connection while first connecting is most often a TLS mismatch. */
function connectFailure(target: ServerTarget, error: Error): Error {
  if (answered.has(target)) return error;
  if (/ stopped answering/.test(error.message) && !answeredAt.has(target.display)) {
    // It took the connection and never said a word: most often a port of something else that
    // waits for its client to speak first, where no Redis server listens.
    return serverError(
      `the server at ${target.display} took the connection but sent no reply within ${ANSWER_TIMEOUT_MS / 1000} s: is a Redis server listening on this port (not another service that waits for its client), and not paused (SIGSTOP)?`,
    );
  }
  // Redis (since 6.2.7) and Valkey close the connection of a client not yet logged in that sends
  // an argument over 16 KB, its error sent first or not: a password that long can never log in.
  const refusedUnread = error.message.startsWith('lost the connection') || /Protocol error: unauthenticated bulk length/.test(error.message);
  const address = refusedUnread ? serverAddress(target.url) : undefined;
  const tooLong = (['password', 'user name'] as const)
    .map((field) => ({ field, bytes: Buffer.byteLength((field === 'password' ? address?.password : address?.username) ?? '') }))
    .find((credential) => credential.bytes > UNAUTHENTICATED_ARGUMENT_MAX);
  if (tooLong) {
    return serverError(
      `the server at ${target.display} closed the connection while connecting: the URL's ${tooLong.field} is ${groupThousands(tooLong.bytes)} bytes, and Redis and Valkey close the connection of a client not yet logged in that sends more than ${groupThousands(UNAUTHENTICATED_ARGUMENT_MAX)} bytes in one argument`,
    );
  }
  if (error.message.startsWith('lost the connection') && target.url.startsWith('redis:')) {
    // What a TLS-only port does with a plain client.
    return serverError(`the server at ${target.display} closed the connection while connecting: if it speaks TLS on this port, use a rediss:// URL`);
  }
  if (error.message.startsWith('lost the connection') && target.url.startsWith('rediss:')) {
    // A server that wants a client certificate may close the connection without its alert
    // reaching the client (under TLS 1.3 the client has already written): the likely cause, said.
    const likely = target.tls?.cert
      ? 'does it accept this client certificate (one signed by a CA it trusts)?'
      : 'if it requires a client certificate, pass --tls-cert FILE and --tls-key FILE';
    return serverError(`the server at ${target.display} closed the connection while connecting over TLS: ${likely}`);
  }
  return error;
}

/**
 * A failure to connect to a URL from REDIS_URL says where the URL came from: someone who typed no
 * --url may not know the variable is set (a shell profile, a CI secret).
 */
function fromWhere(target: ServerTarget, error: Error): Error {
  return target.fromEnvironment && error instanceof EmqError && !error.message.startsWith('REDIS_URL')
    ? new EmqError(`${error.message} (the URL is REDIS_URL's; --url overrides it)`, error.exitCode)
    : error;
}

/**
 * SELECT of the URL's database. A number the server has no database for is the command line's to
 * fix, like a port nothing listens on would not be: the server answered, and says the URL asks for
 * what it does not have; so a usage error (exit 2), before anything is written.
 */
async function selectDatabase(redis: Redis, db: number, target: ServerTarget): Promise<void> {
  try {
    await redis.select(db);
  } catch (err) {
    throw isMissingDatabase(err) ? missingDatabase(target, db) : err;
  }
}

const isMissingDatabase = (err: unknown): boolean => /DB index is out of range|invalid DB index/i.test(String((err as Error)?.message));

/** Named for where the URL came from, as its other usage errors are. */
const missingDatabase = (target: ServerTarget, db: number): EmqError =>
  usageError(
    `${target.fromEnvironment ? 'REDIS_URL (no --url given)' : '--url'}: the server at ${target.display} has no database ${db} (a server has as many as its "databases" setting says, 16 unless changed, numbered from 0)`,
  );

/** How long a TLS handshake may go unanswered once the TCP connection stands, and how often that is looked at. */
const TLS_HANDSHAKE_MS = 2000;
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
    fail(
      serverError(
        `the server at ${target.display} took the connection but did not answer the TLS handshake within ${TLS_HANDSHAKE_MS / 1000} s: it may not speak TLS on this port (for a plain port use a redis:// URL)`,
      ),
    );
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
  markReading(redis, where);
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

/** The connection whose replies the client is reading at this moment, if it is one of connect's. */
let reading: { readonly redis: Redis; readonly where: string } | undefined;

/**
 * Notes, around the client's own handler of each chunk a socket of `redis` reads, that the chunk is
 * being read: the client's handler throws, past every caller, on a reply no command asked for, and
 * the exception does not say which connection it came from (untrustedConnection). The client
 * attaches its handler to each new socket before it says the connection is made.
 */
function markReading(redis: Redis, where: string): void {
  redis.on('connect', () => {
    const stream = (redis as unknown as { stream?: NodeJS.EventEmitter }).stream;
    stream?.prependListener('data', () => (reading = { redis, where }));
    stream?.on('data', () => (reading = undefined));
  });
}

/**
 * After the client threw reading a reply (raisedReadingReplies in shared/errors.ts): the server
 * that sent it, and its connection dropped at once. Its replies no longer match its commands (what
 * followed the stray reply is read as the answers to later ones, or never), so nothing may wait on
 * it or trust it again: the run's clean-up opens a fresh one (cleanUpConnection in
 * queue/claimed-run.ts). A connection not of connect's (a queue library's own) is not known: every
 * connection to the one server open then is dropped, as none can be told apart; undefined where
 * none or several are open.
 */
export function untrustedConnection(): string | undefined {
  const culprit = reading;
  reading = undefined;
  if (culprit) {
    culprit.redis.disconnect();
    return culprit.where;
  }
  const servers = [...openConnections].filter(([, open]) => open.size > 0);
  if (servers.length !== 1) return undefined;
  const [where, open] = servers[0] as [string, Set<Redis>];
  for (const redis of open) redis.disconnect();
  return where;
}

/**
 * One connection waited ANSWER_TIMEOUT_MS for a reply in vain: every connection to that server is
 * dropped, so that no other command (a sweeper's, the cleanup's, a QUIT) waits as long again.
 */
function serverStoppedAnswering(where: string): void {
  noteStoppedAnswering(where, ANSWER_TIMEOUT_MS);
  for (const redis of openConnections.get(where) ?? []) redis.disconnect();
}

/** The parts of an ioredis client (5.9, pinned) whose two timeouts judgeWaitsAwake replaces. */
interface ClientTimeouts {
  readonly stream: NodeJS.EventEmitter & { destroy(err: Error): void };
  readonly commandQueue: { readonly length: number };
  socketTimeoutTimer: NodeJS.Timeout | undefined;
  setSocketTimeout(): void;
  sendCommand(command: CommandTimeout, stream?: unknown): unknown;
}

interface CommandTimeout {
  _commandTimeoutTimer?: NodeJS.Timeout;
  readonly isResolved: boolean;
  reject(err: Error): void;
  setTimeout(ms: number): void;
}

/**
 * The client's socket timeout (ANSWER_TIMEOUT_MS) and its command timeout, as ioredis arms them,
 * except that a wait through which this process stood still (Ctrl-Z, SIGSTOP: see frozen.ts)
 * starts again instead of counting the server as stopped. A resumed process runs its due timers
 * before it reads its sockets, so without this the replies the server sent meanwhile would still
 * be unread when the wait gave up on it.
 */
function judgeWaitsAwake(redis: Redis): void {
  const client = redis as unknown as ClientTimeouts;
  client.setSocketTimeout = () => {
    awakeTimeout(
      ANSWER_TIMEOUT_MS,
      () => {
        client.socketTimeoutTimer = undefined;
        client.stream.destroy(new Error(`Socket timeout. Expecting data, but didn't receive any in ${ANSWER_TIMEOUT_MS}ms.`));
      },
      (timer) => (client.socketTimeoutTimer = timer),
    );
    // After the client's own "data" handler, as in ioredis, so that its command queue is up to date.
    client.stream.once('data', () => {
      clearTimeout(client.socketTimeoutTimer);
      client.socketTimeoutTimer = undefined;
      if (client.commandQueue.length > 0) client.setSocketTimeout();
    });
  };
  const send = client.sendCommand.bind(client);
  client.sendCommand = (command, stream) => {
    command.setTimeout = commandTimeout;
    return send(command, stream);
  };
}

function commandTimeout(this: CommandTimeout, ms: number): void {
  if (this._commandTimeoutTimer) return;
  awakeTimeout(
    ms,
    () => {
      if (!this.isResolved) this.reject(new Error('Command timed out'));
    },
    (timer) => (this._commandTimeoutTimer = timer),
  );
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

/**
 * The options a queue library's own connections take (src/libraries/): the race's server and
 * credentials, read from the URL as the tool's own connections read it (the URL itself is never
 * handed over), and its TLS settings. The library's client retries a command as it always does.
 */
/** Reconnects a library's client tries before it ends: some 3 s at most. */
const LIBRARY_RECONNECT_ATTEMPTS = 8;

export function libraryClientOptions(target: ServerTarget): RedisOptions {
  const tls = tlsOptions(target);
  return {
    ...serverAddress(target.url),
    connectTimeout: 5000,
    // What BullMQ asks of a worker's connections: a command waits for a reconnect rather than failing.
    maxRetriesPerRequest: null,
    // But not for ever: a server that refuses every connection (at its maxclients, say) would
    // keep the library's clients trying, and the run waiting, without end. Once these attempts
    // are spent the client ends, and what waited on it fails with the server's own refusal.
    retryStrategy: (attempt: number) => (attempt <= LIBRARY_RECONNECT_ATTEMPTS ? Math.min(100 * attempt, 500) : null),
    disableClientInfo: true,
    ...(tls ? { tls } : {}),
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
    // The ready check's INFO again this soon while a server loads (connect ends at the first: above).
    maxLoadingRetryTime: 100,
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
    ...((require('node:net') as typeof import('node:net')).isIP(serverName) ? {} : { servername: serverName }),
    checkServerIdentity: (_host: string, cert: PeerCertificate) => (require('node:tls') as typeof import('node:tls')).checkServerIdentity(serverName, cert),
  };
}

/** The servers the tool names apart: each speaks the Redis protocol and most report a redis_version too. */
export type ServerKind = 'redis' | 'valkey' | 'redict' | 'dragonfly' | 'keydb' | 'garnet';

export interface ServerInfo {
  readonly kind: ServerKind;
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

/**
 * The fields a server other than Redis sets in INFO to name itself, in the order they are trusted.
 * Each of these also reports a redis_version, the Redis it is compatible with, which is not its
 * own version: Valkey 8 says 7.2.4, Redict 7.3.6 says 7.2.4, Dragonfly says 7.4.0 (its own
 * version is df-v1.x), Garnet the protocol level it speaks. KeyDB keeps Redis's field names and
 * its redis_version is its own; it shows itself by a section of its own (`# KeyDB`, with
 * `mvcc_depth`) or by the name of its executable.
 */
const OWN_VERSION_FIELDS: readonly (readonly [ServerKind, string])[] = [
  ['valkey', 'valkey_version'],
  ['redict', 'redict_version'],
  ['dragonfly', 'dragonfly_version'],
  ['garnet', 'garnet_version'],
  ['keydb', 'keydb_version'],
];

const KINDS: ReadonlySet<string> = new Set<ServerKind>(['redis', 'valkey', 'redict', 'dragonfly', 'keydb', 'garnet']);

/** The server's kind and its own version, from INFO's text (the server section at least). Pure. */
export function parseServerInfo(info: string): ServerInfo {
  const fields = new Map<string, string>();
  for (const line of info.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  const named = fields.get('server_name')?.toLowerCase();
  const own = OWN_VERSION_FIELDS.find(([, field]) => fields.has(field));
  const keydb = fields.has('mvcc_depth') || /keydb/i.test(fields.get('executable')?.split('/').pop() ?? '');
  const kind: ServerKind = named !== undefined && KINDS.has(named) ? (named as ServerKind) : own ? own[0] : keydb ? 'keydb' : 'redis';
  const ownField = OWN_VERSION_FIELDS.find(([k]) => k === kind)?.[1];
  const version = (ownField ? fields.get(ownField) : undefined) ?? fields.get('redis_version') ?? 'unknown';
  // Dragonfly spells its version as its release tag (df-v1.25.1): the number alone, like the others'.
  return { kind, version: kind === 'dragonfly' ? version.replace(/^df-/, '').replace(/^v(?=\d)/, '') : version };
}

/**
 * An INFO reply, checked to read as INFO's text: `# Section` headings and `field:value` lines, and,
 * where `fields` is asked for, at least one field. A peer that answers INFO with `+OK` only looks
 * like Redis: an UnlikeRedisReply.
 */
function infoText(reply: unknown, fields: boolean): string {
  const lines = typeof reply === 'string' ? reply.split(/\r?\n/).filter((line) => line.trim() !== '') : undefined;
  const isField = (line: string): boolean => line.indexOf(':') > 0;
  if (lines === undefined || !lines.every((line) => line.startsWith('#') || isField(line)) || (fields && !lines.some(isField)))
    throw new UnlikeRedisReply('INFO', 'is not INFO text');
  return reply as string;
}

/**
 * One section of INFO, checked by infoText, and a PING beside it in the same round trip, which must
 * answer PONG: a peer that copies INFO's text but says +OK to the rest would otherwise be read
 * later as a queue in use or a marker not the tool's. A PING the user's ACL refuses proves nothing
 * either way, and is let be.
 */
export async function askInfo(redis: Redis, section: string, fields: boolean): Promise<string> {
  const [reply, pong] = await Promise.all([redis.info(section), redis.ping().catch(pingRefused)]);
  const text = infoText(reply, fields);
  if (pong !== undefined && pong !== 'PONG') throw new UnlikeRedisReply('PING', 'is not PONG');
  return text;
}

function pingRefused(err: unknown): undefined {
  if (err instanceof Error && /^NOPERM/.test(err.message)) return undefined;
  throw err;
}

export async function readServerInfo(redis: Redis, target: ServerTarget): Promise<ServerInfo> {
  try {
    // Every server the tool knows fills the server section: a reply without a field is not INFO's.
    const server = await askInfo(redis, 'server', true);
    const info = parseServerInfo(server);
    if (info.kind !== 'redis') return info;
    // KeyDB names itself only outside the server section, in a section Redis does not have (and
    // answers empty): asked only of a server that looks like Redis, and never fatal.
    const keydb = await redis.info('keydb').catch(() => '');
    return keydb.trim() === '' ? info : parseServerInfo(`${server}\r\n${keydb}`);
  } catch (err) {
    throw describeServerError(err, target.display);
  }
}

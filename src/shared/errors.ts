/**
 * Every failure the tool expects ends as one EmqError: a line for people and an exit code for
 * scripts. Anything else reaching the top is a bug and prints its stack.
 */
import { fileURLToPath } from 'node:url';
import { OWN_DEPENDENCIES, TOOL_ROOT } from './model.js';
import { withoutSecrets } from './secrets.js';
import { scriptAclRefusal, scriptUnknownCommand } from '../lua/script-acl.js';

export const ExitCode = {
  ok: 0,
  expectationFailed: 1,
  usage: 2,
  server: 3,
  /** stdout refused the report (a full disk), or a file of the run (--html, --svg, --export-test) could not be written at its end: the run itself ended as its code would have said. */
  outputLost: 4,
  sighup: 129,
  sigint: 130,
  sigterm: 143,
  sigquit: 131,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export class EmqError extends Error {
  readonly exitCode: ExitCode;
  /**
   * What the command leaves on a server (the queues --keep kept before it failed), already at the
   * end of the message: said again after an error that takes this one's place (an eviction seen
   * as the run stopped), so the line still names it.
   */
  leftBehind?: string;

  constructor(message: string, exitCode: ExitCode) {
    super(message);
    this.name = 'EmqError';
    this.exitCode = exitCode;
  }

  /** Says `what` at the end of the line, and keeps it as leftBehind for an error that takes this one's place. */
  leaveBehind(what: string): this {
    this.message += `; ${what}`;
    this.leftBehind = what;
    return this;
  }
}

export const usageError = (message: string): EmqError => new EmqError(message, ExitCode.usage);
export const serverError = (message: string): EmqError => new EmqError(message, ExitCode.server);

/**
 * A run's server is gone with everything on it (the embedded server, stopped by the tool when its
 * keeper died): no key of the run can remain, so no clean-up is tried and none is suggested.
 */
export class ServerGoneError extends EmqError {
  constructor(message: string) {
    super(message, ExitCode.server);
    this.name = 'ServerGoneError';
  }
}

/** The exit code of a run stopped by a signal: 128 + the signal's number, as a shell reports it. */
const SIGNAL_EXIT: Readonly<Partial<Record<NodeJS.Signals, ExitCode>>> = {
  SIGHUP: ExitCode.sighup,
  SIGINT: ExitCode.sigint,
  SIGQUIT: ExitCode.sigquit,
  SIGTERM: ExitCode.sigterm,
};

/** Raised when SIGINT, SIGQUIT, SIGTERM or SIGHUP stops a run; the run cleans up before it surfaces. */
export class InterruptedError extends EmqError {
  readonly signal: NodeJS.Signals;

  constructor(signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`, SIGNAL_EXIT[signal] ?? ExitCode.sigint);
    this.name = 'InterruptedError';
    this.signal = signal;
  }
}

/** Servers (by redacted address) whose connection got no reply in time, with that time in ms. */
const silentServers = new Map<string, number>();

/**
 * A connection to `where` got no reply for `afterMs` and was closed (the socket timeout in
 * server/connection.ts). The client then fails every pending command with a bare "Connection is
 * closed": from now on such errors about `where` say that the server stopped answering.
 */
export function noteStoppedAnswering(where: string, afterMs: number): void {
  silentServers.set(where, afterMs);
}

/** Whether a connection to `where` found the server silent: then nothing more is worth sending. */
export function stoppedAnswering(where: string): boolean {
  return silentServers.has(where);
}

/**
 * A reply in the Redis protocol but not of the shape the command's reply has (a SCAN answered
 * with `+OK`, an INFO with no fields): the peer only looks like Redis. Thrown where the reply is
 * read, which does not know the server's address; describeServerError puts it in words.
 */
export class UnlikeRedisReply extends Error {
  constructor(
    /** The command whose reply it was, as Redis names it. */
    readonly command: string,
    /** What was wrong with it, in words: never the reply itself, which a stranger wrote. */
    readonly why: string,
  ) {
    super(`${command}: ${why}`);
    this.name = 'UnlikeRedisReply';
  }
}

/**
 * What JavaScript itself raises when the tool's own code misuses a value (a string's method called
 * on a number a peer sent, an array too long): the tool's words, never a server's.
 */
const OWN_CODE_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, EvalError, URIError] as const;

/**
 * A bug of the tool's met while it spoke to a server, kept as the bug it is: describeServerError
 * does not dress it as the server's error, and the command line prints it as every bug, its stack
 * included (`bug`). Exit 3, as any bug's.
 */
export class CodeBugError extends EmqError {
  /** The message as made, before the run added what it left behind (`; the keys of queue … are kept`). */
  readonly said: string;
  /**
   * Met once the command's output was complete (its report printed, its session closing): the
   * report stands as printed and the bug is said after it, saying so (withSession).
   */
  afterOutput = false;
  constructor(readonly bug: Error) {
    const said = `unexpected error (a bug; please report it): ${withoutSecrets(bug.message)}`;
    super(said, ExitCode.server);
    this.said = said;
    this.name = 'CodeBugError';
  }

  /** What the run added to the message on its way out (kept keys, a kept server), without its leading `; `. */
  get added(): string {
    return this.message.slice(this.said.length).replace(/^; /, '');
  }
}

/** A stack frame's file: its path, or undefined for a frame of Node's own (`node:…`, `<anonymous>`, `native`). */
function frameFile(line: string): string | undefined {
  const inside = line.trim().endsWith(')') ? line.slice(line.lastIndexOf('(') + 1, line.lastIndexOf(')')) : line.trim().replace(/^at (async )?/, '');
  const location = inside.replace(/:\d+:\d+$/, '').replace(/:\d+$/, '');
  if (location.startsWith('file://')) {
    try {
      return fileURLToPath(location);
    } catch {
      return undefined;
    }
  }
  return /^([a-zA-Z]:)?[\\/]/.test(location) ? location : undefined;
}

/**
 * The package an error was raised in, when the first frame of its stack that is a file lies in a
 * package the tool drives and does not own (a queue library a --lib run loads): that code, not the
 * tool's, met something it did not expect. Undefined for the tool's own code, wherever it is
 * installed and under whatever name (its folder, TOOL_ROOT), and for the packages it depends on
 * itself (ioredis: a TypeError there is the tool's misuse of it, a bug to report).
 */
export function packageRaising(err: Error, toolRoot = TOOL_ROOT): string | undefined {
  const file = err.stack
    ?.split('\n')
    .filter((line) => /^\s+at /.test(line))
    .map(frameFile)
    .find((path) => path !== undefined);
  if (file === undefined) return undefined;
  const parts = file.split(/[\\/]/);
  const root = toolRoot.split(/[\\/]/).filter((part) => part !== '');
  const within = parts.filter((part) => part !== '');
  // The tool's own folder, outside its own node_modules: its code.
  const ownFolder = root.every((part, index) => within[index] === part);
  const inner = parts.lastIndexOf('node_modules');
  if (inner < 0 || inner + 1 >= parts.length - 1) return undefined;
  if (ownFolder && !within.slice(root.length).includes('node_modules')) return undefined;
  const scope = parts[inner + 1] ?? '';
  const name = scope.startsWith('@') ? `${scope}/${parts[inner + 2] ?? ''}` : scope;
  return name === 'emq-race' || OWN_DEPENDENCIES.has(name) ? undefined : name;
}

/**
 * Whether `err` was raised by the Redis client's own reading of replies (ioredis's DataHandler, or
 * the redis-parser it reads with, at the top of the stack): a reply no command asked for (a `$-1`
 * with no command waiting) makes it throw there, inside the socket's data handler, where no caller
 * of the tool's can catch it. Code of the tool's that the client calls from there (a listener for
 * its events) is on top of the stack instead, and stays the tool's bug.
 */
export function raisedReadingReplies(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const files = (err.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .map(frameFile)
    .filter((path): path is string => path !== undefined);
  // The innermost package of the path, as packageRaising reads it: a queue library's own copy of the client counts.
  const inPackage = (path: string | undefined, name: string): boolean => {
    const parts = (path ?? '').split(/[\\/]/);
    const at = parts.lastIndexOf('node_modules');
    return at >= 0 && parts[at + 1] === name;
  };
  const [top] = files;
  return (
    (inPackage(top, 'ioredis') || inPackage(top, 'redis-parser')) && files.some((path) => inPackage(path, 'ioredis') && /[\\/]DataHandler\.js$/.test(path))
  );
}

/**
 * A reply no command asked for: the client threw reading it (raisedReadingReplies), or said so
 * (its "Command queue state error"). The peer at `where` (undefined: not known) does not answer as
 * Redis does, one reply to each command: no TLS or port hint fits it, as it speaks RESP.
 */
export const unaskedReply = (where: string | undefined): EmqError =>
  serverError(
    `${where !== undefined ? `the server at ${where}` : 'a server the command speaks to'} does not speak the Redis protocol: it sent a reply no command asked for (a Redis or Valkey server sends one reply to each command; a proxy in front of one may have added it)`,
  );

/** The one refusal of a peer that does not speak Redis: a reply that is not RESP, or one no Redis gives. */
const notRedis = (where: string, detail: string): EmqError =>
  serverError(`the server at ${where} does not speak the Redis protocol${detail}: is it a Redis or Valkey port (or one that wants a rediss:// URL)?`);

/** Dragonfly's refusal, by default, of a key a script names without declaring it in KEYS. */
const UNDECLARED_KEY = /script tried accessing undeclared key/i;

const LOST_CONNECTION = /Connection is closed|Command aborted due to connection close|ECONNRESET|EPIPE|Stream isn't writeable/i;

/** A server's BUSY reply, in words: a script held the server, which refused the call. */
class BusyServerError extends EmqError {
  /** `advised`: the line already says how a person frees the server (SCRIPT KILL, SHUTDOWN NOSAVE). */
  constructor(
    message: string,
    readonly advised = false,
  ) {
    super(message, ExitCode.server);
    this.name = 'BusyServerError';
  }
}

/** Whether `err`'s line already tells how to free a server a script holds: a hint added to it need not again. */
export const busyAdviceGiven = (err: unknown): boolean => err instanceof BusyServerError && err.advised;

/**
 * A BUSY reply put in words by whoever knows whose script held the server (`script`: a library's
 * own, the user's --script), with what that finding means for the run (`meaning`).
 */
export const heldServerError = (script: string, meaning: string): EmqError =>
  new BusyServerError(`${script} held the server past its busy-reply-threshold, and the server refused other calls with BUSY meanwhile${meaning}`);

/**
 * A server's BUSY reply, as the client gave it or already put in words: a script ran past its
 * busy-reply-threshold, and every other call is refused until it ends.
 */
export function isBusyReply(err: unknown): boolean {
  return err instanceof BusyServerError || /^BUSY\b/.test(String((err as { message?: unknown })?.message ?? err));
}

/**
 * A cluster's redirection: MOVED (the slot is another node's now) or ASK (the slot is being
 * migrated, and this key is already on the node named). The tool sends every command of a queue
 * to the primary owning its slot, so either means the cluster was resharded under the run.
 */
export interface SlotRedirect {
  readonly kind: 'MOVED' | 'ASK';
  readonly slot: number;
  /** The node named, as `host:port`. */
  readonly node: string;
}

/** The redirection a reply carries (`MOVED 13513 127.0.0.1:7000`, `ASK …`), or undefined for any other. */
export function slotRedirect(err: unknown): SlotRedirect | undefined {
  const match = /^(MOVED|ASK) (\d{1,5}) (\S+:\d{1,5})\s*$/.exec(String((err as { message?: unknown })?.message ?? ''));
  if (!match) return undefined;
  return { kind: match[1] === 'MOVED' ? 'MOVED' : 'ASK', slot: Number(match[2]), node: match[3] ?? '' };
}

/** A multi-key call in a slot being migrated, some of whose keys have already gone to the other node. */
export function isTryAgainReply(err: unknown): boolean {
  return /^TRYAGAIN\b/.test(String((err as { message?: unknown })?.message ?? ''));
}

/** Where a permission error sends the user: the ACL line of the tool's own commands. */
const ACL_HINT = 'see "Least privilege" in docs/shared-servers.md for the ACL the tool needs';

/**
 * A permission error of a `--lib` run, sent where its ACL is: the library's own commands (BullMQ's
 * scripts alone call some forty), which the tool's own ACL line does not grant. Any other error
 * as it is.
 */
export function withLibraryAclHint(err: unknown, library: string): unknown {
  if (!(err instanceof EmqError) || !err.message.includes(ACL_HINT)) return err;
  const hint = `a --lib ${library} run also needs the commands ${library} itself sends: see the --lib row under "Least privilege" in docs/shared-servers.md`;
  return new EmqError(err.message.replaceAll(ACL_HINT, hint), err.exitCode);
}

/** A command renamed away or disabled on the server; `calledBy`: the script and line that called it, for one called inside a script. */
const unknownCommandError = (where: string, command: string, calledBy?: string): EmqError =>
  serverError(
    `the server at ${where} does not know ${command === 'a command' ? command : `the command ${command}`} (${calledBy !== undefined ? `${calledBy}; ` : ''}renamed or disabled in its configuration, as some hosted services do, or a server too old for it): the tool needs it; see "Least privilege" in docs/shared-servers.md for every command the tool sends`,
  );

/** A NOPERM reply about keys (the user's key patterns), not about a command or a channel: Redis 6 and 7.0, then Redis 7.2 and Valkey. */
const KEY_REFUSAL = /^NOPERM (?:this user has no permissions to access one of the keys|No permissions to access a key)/i;

/**
 * The queue whose key a refused command named (`emq:{QUEUE}:…`), read from the command's keys:
 * a script call's declared KEYS, any other command's arguments. Undefined where none is the tool's.
 */
function queueOfKeys(command: { name?: string; args?: unknown[] } | undefined): string | undefined {
  const args = command?.args ?? [];
  const name = (command?.name ?? '').toLowerCase();
  const scripted = name === 'eval' || name === 'evalsha' || name === 'fcall' || name === 'fcall_ro';
  const keys = scripted ? args.slice(2, 2 + Number(args[1] ?? 0)) : args;
  for (const key of keys) {
    const queue = typeof key === 'string' ? /^emq:\{([^}]+)\}:/.exec(key)?.[1] : undefined;
    if (queue !== undefined) return queue;
  }
  return undefined;
}

/**
 * The command a server's "unknown command" reply names (renamed away, or too new for it), as it was
 * sent; undefined for any other reply. Quoted '…' by Redis 7 and Valkey, `…` by Redis 4 to 6 and
 * KeyDB; never the rest, which echoes the arguments.
 */
export function unknownCommandIn(message: string): string | undefined {
  return /^ERR unknown command (?:'([^']{1,64})'|`([^`]{1,64})`)/i
    .exec(message)
    ?.slice(1)
    .find((name) => name !== undefined);
}

/** A server still loading its data set into memory (after a restart): it answers every command but a few with LOADING until done. */
export function loadingServer(where: string): EmqError {
  return serverError(
    `the server at ${where} is still loading its data set into memory (LOADING): run again once it has loaded (INFO persistence shows loading_eta_seconds)`,
  );
}

/**
 * Turns what ioredis or the socket layer throws into one readable line. `where` is the redacted
 * server address, never a URL with a password in it.
 */
export function describeServerError(err: unknown, where: string): EmqError {
  if (err instanceof EmqError) return err;
  // Before any reading of its message: `x.startsWith is not a function` is no server's words.
  if (OWN_CODE_ERRORS.some((kind) => err instanceof kind)) {
    const bug = err as Error;
    // Raised inside a package the tool drives: that package's words, said as such, one line.
    const raisedIn = packageRaising(bug);
    if (raisedIn) return serverError(`${raisedIn} raised ${bug.name} while speaking to the server at ${where}: ${withoutSecrets(bug.message)}`);
    return new CodeBugError(bug);
  }
  const e = err as { code?: unknown; message?: string; command?: { name?: string } };
  // The server's (or the client's) own words: any password the command was given hidden in them.
  const message = withoutSecrets(String(e?.message ?? err));
  // A queue library's errors may carry a number as their code (BullMQ's script replies): only a socket's string code is one.
  const code = typeof e?.code === 'string' ? e.code : '';
  const tls = describeTlsError(code, message);
  if (tls) return serverError(`cannot reach the server at ${where}: ${tls}`);
  if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message)) {
    return serverError(`cannot reach the server at ${where}: connection refused`);
  }
  const silentMs = silentServers.get(where);
  if (/^Socket timeout|^Command timed out/.test(message) || (silentMs !== undefined && LOST_CONNECTION.test(message))) {
    const after = silentMs !== undefined ? ` (no reply within ${silentMs / 1000} s)` : '';
    return serverError(`the server at ${where} stopped answering${after}: is it paused (SIGSTOP), stuck in a long script, or overloaded?`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return serverError(`cannot reach the server at ${where}: host not found`);
  }
  if (code === 'ETIMEDOUT' || /connect ETIMEDOUT|timed out/i.test(message)) {
    return serverError(`cannot reach the server at ${where}: timed out`);
  }
  if (code === 'ENOENT' && /connect/.test(message)) {
    return serverError(`cannot reach the server at ${where}: no such socket`);
  }
  // A socket path through a file (`…/redis.sock/`), or to a file that is no socket.
  if ((code === 'ENOTDIR' || code === 'ENOTSOCK') && /connect/.test(message)) {
    return serverError(`cannot reach the server at ${where}: the path names no socket`);
  }
  if (/^WRONGPASS|invalid username-password/i.test(message)) {
    return serverError(`the server at ${where} refused the credentials (wrong user name or password)`);
  }
  if (isBusyReply(err)) {
    // The tool never stops somebody's script itself (SCRIPT KILL stops whichever script runs, and it
    // may not be the run's): the line says what holds the server and how a person frees it.
    return new BusyServerError(
      `the server at ${where} is busy running a script past its busy-reply-threshold (BUSY): it answers nothing else until the script ends; if it is the run's own --script (or a library's script), stop it with redis-cli SCRIPT KILL, or, for a script that has written, SHUTDOWN NOSAVE`,
      true,
    );
  }
  if (/^CLUSTERDOWN\b/.test(message)) {
    // A cluster with a node missing, or slots no node serves yet (a cluster still settling).
    return serverError(
      `the cluster that ${where} belongs to is down (CLUSTERDOWN): a primary is missing, or some slots have no node yet; CLUSTER INFO shows its cluster_state, and a cluster still forming is ok within seconds`,
    );
  }
  const redirect = slotRedirect({ message });
  if (redirect || /^TRYAGAIN\b/.test(message)) {
    // Every call of a queue goes to the primary that owned its slot when the run began: a run
    // whose queue moves cannot follow it midway (its sweepers' calls would land on both nodes).
    const what = !redirect
      ? `the queue's slot began moving off ${where} during the run (TRYAGAIN: the cluster is being resharded)`
      : redirect.kind === 'MOVED'
        ? `the queue's slot ${redirect.slot} moved to ${redirect.node} during the run (MOVED from ${where}: the cluster was resharded)`
        : `the queue's slot ${redirect.slot} began moving from ${where} to ${redirect.node} during the run (ASK: the cluster is being resharded)`;
    return serverError(`${what}: the run stops, as a queue must stay on one primary while it races`);
  }
  if (/^Protocol error, got /.test(message)) {
    // ioredis' words for a reply that is not RESP: an HTTP server, an SSH port, a TLS port read as plain.
    return notRedis(where, '');
  }
  // The client's words for a reply it read with no command waiting for it (see unaskedReply).
  if (/^Command queue state error\b/.test(message)) return unaskedReply(where);
  if (err instanceof UnlikeRedisReply) return notRedis(where, ` (its reply to ${err.command} ${err.why})`);
  // ioredis sends MULTI with the transaction's commands: a server that does not know MULTI (or
  // refuses it) answers EXEC "EXEC without MULTI", and the reply that explains it is MULTI's own,
  // which ioredis keeps among the transaction's earlier errors.
  const earlier = (err as { previousErrors?: unknown } | undefined)?.previousErrors;
  if (/^ERR EXEC without MULTI/i.test(message) && Array.isArray(earlier)) {
    const first = earlier.find((reply): reply is Error => reply instanceof Error);
    if (first) return describeServerError(first, where);
  }
  const unknown = unknownCommandIn(message);
  if (unknown !== undefined) {
    // The server's words echo the command's first arguments (a key, a marker's JSON): left out.
    return unknownCommandError(where, unknown.toUpperCase());
  }
  const unknownInScript = scriptUnknownCommand(message);
  if (unknownInScript) {
    const { command, script, line } = unknownInScript;
    return unknownCommandError(where, command ?? 'a command', `called by ${script} line ${line}`);
  }
  if (/max number of clients reached/i.test(message)) {
    // Each sweeper has a connection of its own, beside the run's few: a server near its maxclients
    // refuses the ones past it.
    return serverError(
      `the server at ${where} refused a connection: it already holds as many clients as its maxclients setting allows; a run opens one per sweeper and a few of its own: race with fewer --sweepers, or raise maxclients`,
    );
  }
  if (/^LOADING\b/.test(message)) return loadingServer(where);
  if (/^NOAUTH/.test(message)) {
    // The form for the URL's own scheme, written so that the scrubbing of the line leaves it whole:
    // a socket's URL has no user info, and a pattern in brackets is no password.
    const scheme = /^(rediss?|unix):/.exec(where)?.[1] ?? 'redis';
    const form =
      scheme === 'unix' ? `as its query's "password" parameter (with "username" for a user other than default)` : `(${scheme}://[user:]password@host:port)`;
    return serverError(`the server at ${where} requires a password: put it in the URL ${form}`);
  }
  // A transaction the server discarded for a refused command is that refusal (node-resque's MULTI).
  const discarded = /^EXECABORT Transaction discarded because of: (NOPERM.*)$/s.exec(message)?.[1];
  if (discarded !== undefined) return describeServerError({ message: discarded }, where);
  if (/^NOPERM/.test(message)) {
    // Key and channel refusals do not say which command was refused; ioredis knows it.
    const command = e?.command?.name ? ` (${e.command.name.toUpperCase()})` : '';
    // A key refused names the queue it belongs to, and "Least privilege" says how to fix it (a
    // --queue name outside race-* needs a pattern). The server's words do not say why: Redis 7.0
    // and Valkey 8.0 answer alike for keys no pattern covers and for keys a read-only (%R~) or
    // write-only (%W~) pattern covers that the command would write or read, so the line names both.
    const queue = KEY_REFUSAL.test(message) ? queueOfKeys(e?.command as { name?: string; args?: unknown[] } | undefined) : undefined;
    if (queue !== undefined) {
      const needs = e?.command?.name ? e.command.name.toUpperCase() : 'the command';
      return serverError(
        `permission denied on ${where}${command}: this user may not read or write the keys of queue ${queue} (emq:{${queue}}:*) as ${needs} needs (${stripErrorPrefix(message)}): its ACL key patterns leave them out, or let it only read them (%R~) or only write them (%W~); give it a key pattern that covers them for both: a --queue name outside race-* needs one, e.g. ~emq:{NAME*}:* for every queue the command makes from NAME; see "Least privilege" in docs/shared-servers.md`,
      );
    }
    return serverError(`permission denied on ${where}${command}: ${stripErrorPrefix(message)}; ${ACL_HINT}`);
  }
  const inScript = scriptAclRefusal(message);
  if (inScript) {
    const command = inScript.command ?? 'a command';
    const refused =
      inScript.refused === 'key'
        ? `this user may not touch a key ${command} names there (its ACL key patterns: the run's keys are all under emq:{QUEUE}:)`
        : `this user may not run ${command} inside a script`;
    return serverError(`permission denied on ${where} (${command}, called by ${inScript.script} line ${inScript.line}): ${refused}; ${ACL_HINT}`);
  }
  if (UNDECLARED_KEY.test(message)) {
    // The job's hash is named from its id inside the script, as every sweep script must (see the
    // contract in docs/architecture.md), so no KEYS list can declare it beforehand.
    return serverError(
      `the server at ${where} refuses keys a script does not declare in KEYS, and the tool's scripts reach each job's hash by its id: start the server with --default_lua_flags=allow-undeclared-keys (Dragonfly)`,
    );
  }
  if (/^WRONGTYPE/.test(message)) {
    // The key is named when it is one of the tool's (under emq:): a command's first argument is its key.
    const args = (e?.command as { args?: unknown[] } | undefined)?.args;
    const key = e?.command?.name && typeof args?.[0] === 'string' && args[0].startsWith('emq:') ? ` (${e.command.name.toUpperCase()} ${args[0]})` : '';
    return serverError(
      key
        ? `the server at ${where} holds a key of the run's as another type than the run wrote (WRONGTYPE)${key}: another client, or a --script, wrote it as something else`
        : `the server at ${where} answered WRONGTYPE: a key holds another type than the command expects`,
    );
  }
  if (/^READONLY/.test(message)) {
    return serverError(`the server at ${where} is a read-only replica: point --url at a primary`);
  }
  if (/^OOM/.test(message)) {
    return serverError(`the server at ${where} is out of memory (maxmemory reached): ${stripErrorPrefix(message)}`);
  }
  if (LOST_CONNECTION.test(message)) {
    return serverError(`lost the connection to the server at ${where}`);
  }
  // A server's words may repeat the command's arguments (Redis 6's "…, with args beginning with:
  // `user`, `password`,"): that part is never passed on.
  return serverError(`server error from ${where}: ${(message.split('\n')[0] ?? '').replace(/,? with args beginning with:.*$/i, '')}`);
}

/** TLS handshake and certificate failures, in words, or undefined for anything else. */
function describeTlsError(code: string, message: string): string | undefined {
  if (/^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?)$/.test(code)) {
    return `the server's TLS certificate is not signed by a trusted CA (${code}): --tls-ca FILE must name the CA that signed it (or, knowingly, --tls-insecure)`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the server's TLS certificate does not name this host: ${message.split('\n')[0]}`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return `the server's TLS certificate is not valid now (${code})`;
  }
  if (/certificate required|alert number 116|peer did not return a certificate/i.test(message)) {
    return 'the server requires a client certificate: pass --tls-cert FILE and --tls-key FILE';
  }
  if (code.startsWith('ERR_SSL_') || /wrong version number|SSL routines|before secure TLS connection was established/i.test(message)) {
    return `the TLS handshake failed (${message.split('\n')[0]}): is the server speaking TLS on this port, and does it accept this client certificate?`;
  }
  return undefined;
}

function stripErrorPrefix(message: string): string {
  return message.replace(/^[A-Z]+\s+/, '').split('\n')[0] ?? message;
}

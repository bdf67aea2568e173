/**
 * A command the ACL refused inside a Lua script or function. Valkey names the command in its
 * error; Redis 7 says only "The user executing the script can't run this command or subcommand"
 * with the script's SHA1 (or function name) and line. For the tool's own scripts the command is
 * read back from that line of the source the server compiled (a shipped `.lua` file, or the
 * function library built from two of them), so the user learns what to grant; a library line is
 * given as the line of the file it came from. A command the server does not know (renamed away)
 * called inside a script is read back the same way: neither server names it.
 */
import { createRequire } from 'node:module';

/** node:crypto, loaded on first use rather than for `--help` (docs/architecture.md, "How the command starts"). */
const nodeCrypto = (): typeof import('node:crypto') => createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');

/** A command a script called, as the server's error places it: which, when the server or the script's source says, and where. */
export interface ScriptCall {
  /** The command, upper-case. */
  readonly command?: string;
  /** Which script: one of the tool's `.lua` files, else the SHA1 or function name the server gave. */
  readonly script: string;
  readonly line: number;
}

export interface ScriptAclRefusal extends ScriptCall {
  /** What the ACL refused: the command itself, or a key it names (the user's key patterns). */
  readonly refused: 'command' | 'key';
}

// A command refused: Valkey names it ('...' command), Redis 7.0 does not. A key refused (the
// user's key patterns): Valkey says "No permissions to access a key", Redis 7.0 "can't access at
// least one of the keys"; neither names the command. (Valkey's wording is that of Redis from 7.2,
// which it forked from.)
const REFUSAL =
  /^(?:ERR )?(?:ACL failure in script: (?:.*?'([a-z|]+)' command|(No permissions to access a key))|The user executing the script can't (?:run this command or subcommand|(access at least one of the keys)[^.]*)) script: ([^,\s]+), on @user_(script|function):(\d+)/i;

/** A source line's place in the tool's files. */
type Place = { readonly file: string; readonly line: number };

// The tool's own script texts, made known by the modules that hold them as they load (registry.ts,
// function-source.ts) rather than imported here: errors.ts reads refusals through this module, and
// `--help` loads errors.ts, but no script can have been refused before one of those two was loaded.
let shippedScripts: () => readonly { readonly file: string; readonly source: string }[] = () => [];
let functionLibrary: { readonly source: (library: string, name: string) => string; readonly locate: (line: number) => Place } | undefined;

/** registry.ts: every shipped `.lua` file, by name and text. */
export function knowShippedScripts(list: () => readonly { readonly file: string; readonly source: string }[]): void {
  shippedScripts = list;
}

/** function-source.ts: the function library's text, and where each of its lines came from. */
export function knowFunctionLibrary(source: (library: string, name: string) => string, locate: (line: number) => Place): void {
  functionLibrary = { source, locate };
}

/**
 * The tool's own scripts by SHA1 of their text; the function library by its name prefix. `locate`
 * turns a line of `source`, the text the server compiled, into the file and line it is written on.
 */
function ownScript(id: string, kind: string): { source: string; locate: (line: number) => Place } | undefined {
  if (kind === 'function') {
    // The template with the sweep script as its body: the server counts lines of that whole text.
    return functionLibrary && id.startsWith('emq_race_sweep_') ? { source: functionLibrary.source('library', id), locate: functionLibrary.locate } : undefined;
  }
  for (const { file, source } of shippedScripts()) {
    if (nodeCrypto().createHash('sha1').update(source).digest('hex') === id.toLowerCase()) return { source, locate: (line) => ({ file, line }) };
  }
  return undefined;
}

/** The command a line of Lua calls, if it calls exactly one (`rcall('X'` or `redis.call('X'`). */
export function commandOnLine(source: string, line: number): string | undefined {
  const text = source.split('\n')[line - 1] ?? '';
  const calls = [...text.matchAll(/(?:rcall|redis\.p?call)\(\s*'([A-Za-z]+)'/g)].map((m) => (m[1] ?? '').toUpperCase());
  return calls.length === 1 ? calls[0] : undefined;
}

// A command the server does not know (renamed away, or disabled) called inside a script: Redis 7.0
// says "Unknown Redis command called from script", Valkey "Unknown command called from script";
// neither names the command, so it is read from the script's line as for an ACL refusal.
const UNKNOWN = /^(?:ERR )?Unknown (?:Redis )?command called from script script: ([^,\s]+), on @user_(script|function):(\d+)/i;

/** A command the server does not know, called inside a script: which, when the tool's own script says, and where. */
export function scriptUnknownCommand(message: string): ScriptCall | undefined {
  const match = UNKNOWN.exec(message);
  if (!match) return undefined;
  const [, id = '', kind = 'script', line = '0'] = match;
  return calledAt(id, kind, Number(line));
}

/**
 * Where the server says a script failed (its SHA1 or function name, and line) as the tool's file
 * and line, with the command that line calls; `named`, when the server's words name it.
 */
function calledAt(id: string, kind: string, line: number, named?: string): ScriptCall {
  const own = ownScript(id, kind);
  const command = named ? named.toUpperCase() : own ? commandOnLine(own.source, line) : undefined;
  const place = own ? own.locate(line) : { file: id, line };
  return { ...(command !== undefined ? { command } : {}), script: place.file, line: place.line };
}

export function scriptAclRefusal(message: string): ScriptAclRefusal | undefined {
  const match = REFUSAL.exec(message);
  if (!match) return undefined;
  const [, named, valkeyKey, redisKey, id = '', kind = 'script', line = '0'] = match;
  return { ...calledAt(id, kind, Number(line), named), refused: valkeyKey || redisKey ? 'key' : 'command' };
}

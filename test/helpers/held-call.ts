/**
 * A run stopped at an exact call for as long as a test needs: the run goes through a relay
 * (helpers/proxy.ts) to the test's server, and the first call it sends that matches (one of the
 * tool's own scripts, by its SHA, with an argument if given) is held there, with everything after
 * it on that connection, until the test releases it or closes the relay. A signal sent meanwhile
 * meets the run in that phase whatever the size of its seed: the phase lasts until the test says.
 */
import { luaScript, type ScriptName } from '../../src/lua/registry.js';
import { startProxy } from './proxy.js';

export interface HeldCall {
  /** The relay's address: the run's --url. */
  readonly url: string;
  /** Resolves once the run has sent the call and the relay holds it. */
  readonly held: Promise<void>;
  /** Lets the held call (and what followed it) go on to the server. */
  release(): void;
  /** Closes every connection of the relay: a call still held never reaches the server. */
  close(): Promise<void>;
}

/** A RESP bulk string, as an argument appears on the wire. */
const bulk = (text: string): string => `$${text.length}\r\n${text}\r\n`;

/**
 * Holds the first call of any of `scripts` (with `argument` among its arguments, if given) that a
 * run sends through the relay to the server on `serverUrl`.
 */
export function holdCall(serverUrl: string, scripts: readonly ScriptName[], argument?: string): Promise<HeldCall> {
  const shas = scripts.map((name) => bulk(luaScript(name).sha));
  return holdFirst(serverUrl, (chunk, sentBefore) => {
    const text = sentBefore + chunk;
    const at = Math.max(...shas.map((sha) => text.lastIndexOf(sha)));
    return at >= 0 && (argument === undefined || text.slice(at).includes(bulk(argument)));
  });
}

/**
 * Holds the first chunk sent through the relay to the server on `serverUrl` for which `matches`
 * is true; `matches` sees the chunk, what its connection sent last before it (a call cut over
 * two chunks is still seen whole), and the connection's number, from 0 in the order they opened.
 */
export async function holdFirst(serverUrl: string, matches: (chunk: string, sentBefore: string, connection: number) => boolean): Promise<HeldCall> {
  let release = (): void => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let heldNow = (): void => {};
  const held = new Promise<void>((resolve) => (heldNow = resolve));
  let holding = false;
  // What each connection sent last.
  const tails = new Map<number, string>();
  const proxy = await startProxy(Number(new URL(serverUrl).port), (chunk, connection) => {
    if (holding) return 'pass';
    const sentBefore = tails.get(connection) ?? '';
    tails.set(connection, (sentBefore + chunk).slice(-512));
    if (!matches(chunk, sentBefore, connection)) return 'pass';
    holding = true;
    heldNow();
    return released;
  });
  return { url: proxy.url, held, release, close: () => proxy.close() };
}

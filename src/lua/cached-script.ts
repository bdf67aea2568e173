/**
 * A Lua script sent the way clients send them: EVALSHA first, and EVAL with the full source when
 * the server answers NOSCRIPT (its script cache was emptied, or never held it). The tool sends it
 * itself rather than through ioredis' defineCommand so that it can count those fallbacks and name
 * the moment the EVALSHA left, for the crash fault.
 */
import type { Redis } from 'ioredis';
import { createRequire } from 'node:module';

/** node:crypto, loaded on first use rather than for `--help` (docs/architecture.md, "How the command starts"). */
const nodeCrypto = (): typeof import('node:crypto') => createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');

function isNoScript(err: unknown): boolean {
  return /^NOSCRIPT/.test(String((err as { message?: unknown })?.message ?? ''));
}

/**
 * One caller's own count of the NOSCRIPT replies its calls got, each of which made it re-send the
 * script as EVAL. Counted as the EVAL is sent, not as the server runs it: an EVAL on a connection
 * killed meanwhile (client-kill, sweeper-crash) may never reach the server. A shipped script's CachedScript is
 * shared by every caller in the process (registry.ts), the runs of `--mode both` at once among
 * them, so its own count says nothing of any one of them: each caller that reports its fallbacks
 * hands one of these to its calls.
 */
export interface FallbackCount {
  noscriptFallbacks: number;
}

export class CachedScript {
  readonly sha: string;
  private fallbackCount = 0;

  constructor(readonly lua: string) {
    this.sha = nodeCrypto().createHash('sha1').update(lua).digest('hex');
  }

  /** NOSCRIPT answers that made a call fall back to EVAL, over every call made through this object. */
  get fallbacks(): number {
    return this.fallbackCount;
  }

  /**
   * Calls the script; `afterSend` runs once the EVALSHA is on the wire, before its reply; a
   * fallback is counted in `count` too when one is given.
   */
  async call(redis: Redis, keys: readonly string[], args: readonly (string | number)[], afterSend?: () => void, count?: FallbackCount): Promise<unknown> {
    const reply = redis.evalsha(this.sha, keys.length, ...keys, ...args);
    afterSend?.();
    try {
      return await reply;
    } catch (err) {
      if (!isNoScript(err)) throw err;
      this.fallbackCount++;
      if (count) count.noscriptFallbacks++;
      return redis.eval(this.lua, keys.length, ...keys, ...args);
    }
  }
}

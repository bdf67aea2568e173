/**
 * What the strategies whose whole sweep is one server call (a script, a function) share: the
 * sweep's arguments under the KEYS/ARGV contract, the call's time as the client saw it, and the
 * record of the ids the call returned. Each strategy only says how its call is sent.
 */
import { performance } from 'node:perf_hooks';
import { CachedScript } from '../lua/cached-script.js';
import { LatencyLog } from '../server/call-latency.js';
import { serverError } from '../shared/errors.js';
import { MoveLog } from './move-log.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

export interface OneCall {
  /** Sends the sweep with the contract's KEYS (active, pending, dead) and ARGV (now, batch, maxStalled, prefix, pending kind). */
  send(keys: readonly string[], argv: readonly (string | number)[]): Promise<unknown>;
  /** Calls that had to be sent again as EVAL after NOSCRIPT: each one more round trip. */
  readonly fallbacks?: () => number;
}

/**
 * A sweep call's reply as job ids: nil (nothing moved) is an empty list, anything not a list is
 * refused, and an element that is no job id at all is counted apart, never recorded: an id only
 * as seeding writes one (`0200` names no job hash, as the audit reads pending too).
 */
export function returnedIds(reply: unknown): { ids: number[]; stray: number } {
  if (reply === null || reply === undefined) return { ids: [], stray: 0 };
  if (!Array.isArray(reply)) {
    throw serverError(`the sweep script returned ${JSON.stringify(reply)}, not an array of the job ids it moved`);
  }
  const ids: number[] = [];
  let stray = 0;
  for (const item of reply) {
    const id = typeof item === 'string' && /^[1-9]\d*$/.test(item) ? Number(item) : typeof item === 'number' ? item : Number.NaN;
    if (Number.isSafeInteger(id) && id > 0 && id <= 0x7fffffff) ids.push(id);
    else stray++;
  }
  return { ids, stray };
}

export function oneCallSweeper(context: SweeperContext, call: OneCall): Sweeper {
  const { keys, batch, maxStalled, clock } = context;
  const record = new MoveLog();
  const latency = new LatencyLog();
  const fallbacks = call.fallbacks ?? (() => 0);
  let calls = 0;
  let stray = 0;

  return {
    record,
    latency,
    get commands() {
      return calls + fallbacks();
    },
    get noscriptFallbacks() {
      return fallbacks();
    },
    get strayIds() {
      return stray;
    },
    async sweep() {
      calls++;
      const sent = performance.now();
      const reply = await call.send([keys.active, keys.pending, keys.dead], [clock.now(), batch, maxStalled, keys.prefix, context.pending ?? 'list']);
      latency.add(performance.now() - sent);
      // Such a call moves every id it detects, so the ids it returns are the ones it moved.
      const returned = returnedIds(reply);
      stray += returned.stray;
      for (const id of returned.ids) record.add(id, 'unknown');
      return returned.ids.length + returned.stray;
    },
  };
}

/**
 * A sweeper whose call is the Lua script `source` (EVALSHA, EVAL on NOSCRIPT), with the crash
 * fault's hook once the call is on the wire: the shipped sweep and the benchmark's calibrations.
 */
export function scriptCallSweeper(context: SweeperContext, source: string): Sweeper {
  const script = new CachedScript(source);
  return oneCallSweeper(context, {
    send: (keys, argv) => script.call(context.redis, keys, argv, context.faults?.afterSend),
    fallbacks: () => script.fallbacks,
  });
}

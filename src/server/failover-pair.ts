/**
 * The servers of one `--fault failover` run: an embedded primary, an embedded replica of it (each
 * under its own keeper, so neither outlives the tool however it ends), the replica's replication
 * link through a proxy the tool can cut (and, with --replica-lag, through the latency proxy after it,
 * which holds what the link carries), and the run's own connections through another proxy that
 * carries them over to the replica once it is promoted. The drill's steps, in order: `cut` (once
 * the replica holds every byte the primary has written), then `failover` (the primary killed with
 * SIGKILL, the replica promoted with REPLICAOF NO ONE, every connection carried over).
 */
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServerGoneError, serverError } from '../shared/errors.js';
import { timeoutSignal } from '../shared/interrupt.js';
import { connect, parseServerUrl, type ServerTarget } from './connection.js';
import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.js';
import { startProxyThread } from './latency-proxy.js';
import { startSentinel } from './sentinel.js';
import { startSwitchProxy, type SwitchProxy } from './switch-proxy.js';

export interface FailoverPair {
  /** Where the run's connections go: the proxy in front of whichever server is the primary. */
  readonly target: ServerTarget;
  readonly primaryPid: number;
  readonly replicaPid: number;
  /** Aborted when a keeper of the pair (or of its Sentinel) was killed from outside (embedded-server.ts). */
  readonly lost: AbortSignal;
  /** Who promotes the replica: the tool itself, or the pair's Sentinel (--sentinel). */
  readonly promotedBy: 'tool' | 'sentinel';
  /**
   * Waits until the replica holds all the primary wrote. Before the race: a link that reads up
   * may not carry anything yet (after its first sync the primary may start the stream only at the
   * replica's next acknowledgement, up to a second later), and every WAIT meanwhile would time out.
   */
  caughtUp(signal: AbortSignal): Promise<void>;
  /** Waits until the replica holds all the primary wrote, then cuts the replication link. */
  cut(signal: AbortSignal): Promise<void>;
  /**
   * Kills the primary (SIGKILL), promotes the replica (or, with a Sentinel, waits until Sentinel
   * has promoted it and names it), and carries every run connection over to it;
   * `promoted` runs on the new primary before any of them reaches it.
   */
  failover(signal: AbortSignal, promoted?: (primary: Redis) => Promise<void>): Promise<void>;
  /**
   * --keep: the promoted replica left running once the tool exits, with the run's keys on it, for
   * whoever wants to read them; undefined (nothing kept) before the failover. `stop` then stops
   * the rest.
   */
  keepPromoted(): KeptPromoted | undefined;
  /** Stops both servers and both proxies: every way out. */
  stop(): Promise<void>;
}

/** Where the promoted replica a run kept runs (--keep). */
export interface KeptPromoted {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
}

/** How long the replica may take to sync, and the proxy to see every reply home. */
const SETTLE_MS = 10_000;

export interface PairOptions {
  readonly bin?: string | undefined;
  /** Ms the replication link holds every chunk, each way (--replica-lag); 0 or absent: none. */
  readonly replicaLagMs?: number | undefined;
  /** --sentinel: an embedded Sentinel promotes the replica, not the tool. */
  readonly sentinel?: boolean | undefined;
  /** A stop (the run's signal) ends the waits while the pair starts, as it ends the run's. */
  readonly signal?: AbortSignal | undefined;
}

/** How long a Sentinel may take to hold the killed primary down, elect itself and promote the replica. */
const SENTINEL_PROMOTION_MS = 30_000;

export async function startFailoverPair(options: PairOptions): Promise<FailoverPair> {
  const { bin } = options;
  const started: { stop(): Promise<void> }[] = [];
  const losses: AbortSignal[] = [];
  const direct: Redis[] = [];
  const stopAll = async (): Promise<void> => {
    for (const redis of direct) redis.disconnect();
    for (const item of started.reverse()) await item.stop().catch(() => undefined);
  };
  try {
    // Both servers start at once, each under its keeper; the replica is made one by REPLICAOF below,
    // which connects at once, where a --replicaof on its command line would wait for the server's
    // replication tick (once a second). A diskless sync starts at once rather than after the 5 s
    // it waits by default for more replicas.
    const [primary, replica] = await startBoth(
      startEmbeddedServer({ ...(bin !== undefined ? { bin } : {}), extraArgs: ['--repl-diskless-sync-delay', '0'] }),
      startEmbeddedServer(bin !== undefined ? { bin } : {}),
      (server) => {
        started.push(server);
        losses.push(server.lost);
      },
    );
    // The replica dying, unasked, ends the run with its own line, naming its part then (once
    // promoted, it is the primary the run's connections use): before that no connection of the run
    // goes to it, so none would say so. The primary is watched so only while the pair settles and
    // catches up, before the drill kills it on purpose: its death then would leave the replica's
    // sync waiting out its bound, with a line about the sync instead of the primary.
    let promotedDone = false;
    // Set as soon as the replica answers as the primary, before the run's own steps on it.
    let isPrimary = false;
    losses.push(diedDuring(replica, () => (isPrimary ? 'promoted replica' : 'replica')));
    const primaryDied = diedDuring(primary, () => 'primary');
    // The lag sits between the cut and the primary: the replica's link is the latency proxy's
    // client, so a cut still closes it at once, while what the primary sends reaches the replica
    // the lag later (the proxy holds half its round trip each way: twice the lag is asked).
    let upstream = primary.port;
    if (options.replicaLagMs) {
      const lag = await startProxyThread({ targetHost: '127.0.0.1', targetPort: primary.port, delayMs: 2 * options.replicaLagMs });
      started.push({ stop: () => lag.close() });
      losses.push(lag.lost);
      upstream = lag.port;
    }
    const link = await startSwitchProxy(upstream);
    started.push(link);
    const front: SwitchProxy = await startSwitchProxy(primary.port);
    started.push(front);
    const primaryTarget = parseServerUrl(primary.url);
    const replicaTarget = parseServerUrl(replica.url);
    const primaryAdmin = await connect(primaryTarget);
    direct.push(primaryAdmin);
    let replicaAdmin = await connect(replicaTarget);
    direct.push(replicaAdmin);
    await replicaAdmin.call('REPLICAOF', '127.0.0.1', String(link.port));
    // A keeper killed meanwhile ends the wait at once, with its own line.
    const settling = (): AbortSignal[] => [primaryDied, ...losses, ...(options.signal ? [options.signal] : [])];
    await until(async () => /master_link_status:up/.test(await replicaAdmin.info('replication')), settling(), 'the replica did not finish its first sync');
    // Started once the replica is in sync, so that the primary it asks first already names it.
    const sentinel = options.sentinel ? await startSentinel(bin, primary.port) : undefined;
    if (sentinel) {
      started.push(sentinel);
      losses.push(
        sentinel.lost,
        diedDuring(sentinel, () => 'Sentinel'),
      );
      await until(() => sentinel.knowsReplica(replica.port), settling(), 'Sentinel did not find the replica');
    }
    const url = `redis://127.0.0.1:${front.port}`;
    const caughtUp = (signal: AbortSignal, failure: string): Promise<void> =>
      until(
        async () => replicaOffset(await replicaAdmin.info('replication')) >= primaryOffset(await primaryAdmin.info('replication')),
        [signal, primaryDied],
        failure,
      );
    const failOver = async (signal: AbortSignal, promoted: ((primary: Redis) => Promise<void>) | undefined): Promise<void> => {
      front.hold();
      await until(async () => front.quiet(), [signal], 'a command of the run went unanswered before the failover');
      primaryAdmin.disconnect();
      process.kill(primary.pid, 'SIGKILL');
      await until(async () => !isAlive(primary.pid), [signal], 'the primary did not die');
      let next = replica.port;
      if (sentinel) {
        // Sentinel names the new primary once its failover is done; the tool carries the run's
        // connections to whatever it names, as a client that asks Sentinel would.
        await until(
          async () => (next = await sentinel.primaryPort()) !== primary.port,
          [signal],
          'Sentinel did not promote the replica',
          SENTINEL_PROMOTION_MS,
        );
        if (next !== replica.port) throw serverError(`--sentinel: Sentinel named port ${next} as the new primary, not the replica's ${replica.port}`);
        // Sentinel's promotion closes every ordinary client of the replica (CLIENT KILL TYPE normal): a fresh connection.
        replicaAdmin.disconnect();
        replicaAdmin = await connect(replicaTarget);
        direct.push(replicaAdmin);
        await until(async () => /^role:master/m.test(await replicaAdmin.info('replication')), [signal], 'the replica Sentinel named is not a primary');
      } else await replicaAdmin.call('REPLICAOF', 'NO', 'ONE');
      isPrimary = true;
      await promoted?.(replicaAdmin);
      promotedDone = true;
      await front.switchTo(next);
    };
    const takeOver = async (): Promise<void> => {
      const fresh = await connect(replicaTarget);
      try {
        await fresh.call('REPLICAOF', 'NO', 'ONE');
      } finally {
        fresh.disconnect();
      }
      await front.switchTo(replica.port);
    };
    return {
      target: { url, display: `${url} (primary ${primaryTarget.display}, replica ${replicaTarget.display})`, own: 'run' },
      primaryPid: primary.pid,
      replicaPid: replica.pid,
      lost: AbortSignal.any(losses),
      promotedBy: sentinel ? 'sentinel' : 'tool',
      caughtUp: (signal) => caughtUp(signal, 'the replica did not catch up with the primary before the race'),
      async cut(signal) {
        await caughtUp(signal, 'the replica did not catch up with the primary before the cut');
        link.partition();
      },
      async failover(signal, promoted) {
        try {
          await failOver(signal, promoted);
        } catch (err) {
          // Stopped midway (a signal, a failed step): the run's connections are held at the front,
          // the primary perhaps dead and Sentinel still deciding. The replica is made the primary
          // and the front carried to it, so that the run's clean-up reaches its keys at once rather
          // than waiting out a held link; what it deletes goes with the pair anyway.
          if (!promotedDone) await takeOver().catch(() => undefined);
          throw err;
        }
      },
      keepPromoted() {
        if (!promotedDone) return undefined;
        replica.detach();
        return { url: replica.url, port: replica.port, pid: replica.pid };
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    // A keeper killed from outside while the pair started: its own line, not the connection it closed.
    throw losses.find((lost) => lost.aborted)?.reason ?? err;
  }
}

/** Two servers started side by side: each that started is handed to `started`, then the first failure is thrown. */
async function startBoth(
  first: Promise<EmbeddedServer>,
  second: Promise<EmbeddedServer>,
  started: (server: EmbeddedServer) => void,
): Promise<[EmbeddedServer, EmbeddedServer]> {
  const settled = await Promise.allSettled([first, second]);
  for (const result of settled) if (result.status === 'fulfilled') started(result.value);
  for (const result of settled) if (result.status === 'rejected') throw result.reason;
  return [(settled[0] as PromiseFulfilledResult<EmbeddedServer>).value, (settled[1] as PromiseFulfilledResult<EmbeddedServer>).value];
}

function primaryOffset(info: string): number {
  return Number(/^master_repl_offset:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

function replicaOffset(info: string): number {
  return Number(/^(?:slave|replica)_repl_offset:(\d+)/m.exec(info)?.[1] ?? -1);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls `check` until it holds; a stop among `stops` ends the wait with its reason, and `boundMs`
 * passing, with `failure` as the drill's line.
 */
async function until(check: () => Promise<boolean>, stops: readonly AbortSignal[], failure: string, boundMs = SETTLE_MS): Promise<void> {
  const signal = AbortSignal.any([...stops, timeoutSignal(boundMs)]);
  for (;;) {
    if (await check()) return;
    if (signal.aborted) {
      if (signal.reason instanceof Error && signal.reason.name === 'TimeoutError') throw serverError(`--fault failover: ${failure}`);
      throw signal.reason;
    }
    await sleep(5);
  }
}

/**
 * Aborted when `server`'s process ended unasked, with a line naming its part in the drill as it
 * stands then (its keeper killed is `lost`'s own line, and stays so).
 */
function diedDuring(server: { readonly url: string; readonly lost: AbortSignal; readonly ended: AbortSignal }, role: () => string): AbortSignal {
  const died = new AbortController();
  server.ended.addEventListener(
    'abort',
    () =>
      died.abort(
        server.lost.aborted
          ? server.lost.reason
          : new ServerGoneError(`the failover drill's ${role()} (${server.url}) died during the run (its process ended unasked)`),
      ),
    { once: true },
  );
  return died.signal;
}

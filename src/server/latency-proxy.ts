/**
 * Network distance on loopback: a TCP proxy that holds every chunk it forwards for half the asked
 * round-trip time in each direction (plus optional jitter), so that a race run on one machine sees
 * the round trips of a data centre or a hosted server. The kernels this runs on have no netem, so
 * the delay is added here, in user space.
 *
 * It is a byte pipe: it never parses what passes (TLS goes through untouched), keeps each
 * direction in order (a chunk leaves at max(its arrival + delay, the previous chunk's departure),
 * so jitter never reorders), passes pipelined commands and replies of any size, pauses a sender
 * whose bytes pile up and resumes it on drain, and forwards a half-close or a dropped connection
 * after the same delay as the bytes before it, as a real network would. A chunk never leaves
 * before its hold is over; a metronome thread (metronome.ts) times the departures to the
 * microsecond, so a delay of a fraction of a millisecond holds where an event-loop timer would
 * round it up to whole ones.
 *
 * Forwarding itself costs a little (the wake-ups of the thread and the event loop, a few tenths of
 * a millisecond per round trip on a virtual machine). startRaceProxy measures that cost and has
 * the proxy hold each chunk that much less (holdBack), so a round trip through it takes the
 * server's own plus the delay asked for, and the run reports both round trips as measured.
 */
import { createServer, connect as connectTcp, type AddressInfo, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { Redis } from 'ioredis';
import { describeServerError, serverError, usageError } from '../shared/errors.js';
import { orStopped } from '../shared/interrupt.js';
import { percentileOfSorted, type LatencyAsked } from '../shared/model.js';
import { closeConnection, connect, type ServerTarget } from './connection.js';
import { Metronome, monotonicMs } from './metronome.js';

export interface LatencyProxyOptions {
  readonly targetHost: string;
  readonly targetPort: number;
  /** Round-trip time to add, in ms: half on the way to the server, half on the way back. */
  readonly delayMs: number;
  /** Extra round-trip time, uniformly random between 0 and this, drawn per chunk (half each way). */
  readonly jitterMs?: number;
}

export interface LatencyProxy {
  /** Where clients connect instead of the target: always loopback. */
  readonly host: string;
  readonly port: number;
  /**
   * Takes `ms` off every later chunk's round trip (half each way; never below no hold at all): the
   * proxy's own cost of forwarding, once measured (see startRaceProxy), so that what it adds to a
   * round trip is the delay asked for rather than that delay plus its own wake-ups.
   */
  holdBack(ms: number): void;
  /**
   * Sets the jitter for every later chunk (0 takes it off): the proxy's own cost is measured
   * without it, since the fastest PING of a jittered few carries some jitter too, which a hold-back
   * would take off every round trip (see startRaceProxy). Only for a proxy started with a delay or
   * a jitter: one started with neither has no metronome to time a jitter by.
   */
  jitter(ms: number): void;
  /** Stops listening and destroys every connection; nothing of the proxy is left afterwards. */
  close(): Promise<void>;
}

/**
 * Bytes a direction may hold while they wait out their delay before its sender is paused (a full
 * write buffer on the receiving side pauses it too): room for large replies in flight, a bound on
 * memory all the same.
 */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

/** What leaves a direction at its time: bytes, the sender's half-close, or its abrupt end. */
type Cargo = Buffer | 'end' | 'abort';

interface Departure {
  readonly at: number;
  readonly cargo: Cargo;
}

export async function startLatencyProxy(options: LatencyProxyOptions): Promise<LatencyProxy> {
  if (!(options.delayMs >= 0) || !((options.jitterMs ?? 0) >= 0)) throw new RangeError('latency proxy: delay and jitter must be 0 or more');
  let heldBackMs = 0;
  let jitterMs = options.jitterMs ?? 0;
  const oneWayMs = (): number => Math.max(0, options.delayMs + Math.random() * jitterMs - heldBackMs) / 2;
  const sockets = new Set<Socket>();
  const departures = new Departures();
  if (options.delayMs > 0 || (options.jitterMs ?? 0) > 0) await departures.ready();

  // allowHalfOpen: a client's FIN must not close the way back before the server's replies crossed.
  const server: Server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    const upstream = connectTcp({ host: options.targetHost, port: options.targetPort, allowHalfOpen: true, noDelay: true });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      // A reset or a refused connection ends as 'close' below; the error itself needs no more.
      socket.on('error', () => {});
      socket.once('close', () => sockets.delete(socket));
    }
    const toServer = new Direction(client, upstream, oneWayMs, departures);
    const toClient = new Direction(upstream, client, oneWayMs, departures);
    for (const socket of [client, upstream]) {
      socket.once('close', () => {
        // Once both sockets are gone nothing is left to deliver.
        if (client.destroyed && upstream.destroyed) {
          toServer.stop();
          toClient.stop();
        }
      });
    }
  });

  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  }).catch(async (err: unknown) => {
    await departures.stop();
    throw err;
  });

  let closing: Promise<void> | undefined;
  return {
    host: '127.0.0.1',
    port: address.port,
    holdBack(ms) {
      if (!(ms >= 0)) throw new RangeError('latency proxy: a hold-back of 0 or more');
      heldBackMs = ms;
    },
    jitter(ms) {
      if (!(ms >= 0)) throw new RangeError('latency proxy: a jitter of 0 or more');
      jitterMs = ms;
    },
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        const stopped = departures.stop();
        for (const socket of sockets) socket.destroy();
        sockets.clear();
        await Promise.all([closed, stopped]);
      })();
      return closing;
    },
  };
}

/**
 * The departure times of every direction of one proxy, kept by one metronome: it wakes at the
 * earliest, lets every direction send what is due, and sets the next wake-up.
 */
class Departures {
  private readonly waiting = new Set<Direction>();
  private readonly metronome = new Metronome(() => this.tick());
  private stopped = false;

  /** `direction`'s next departure is at `at` (ms, monotonic clock). */
  wait(direction: Direction, at: number): void {
    if (this.stopped) return;
    this.waiting.add(direction);
    this.metronome.wakeBy(at);
  }

  /** Resolves once the metronome can keep time. */
  ready(): Promise<void> {
    return this.metronome.ready();
  }

  forget(direction: Direction): void {
    this.waiting.delete(direction);
  }

  stop(): Promise<void> {
    this.stopped = true;
    for (const direction of [...this.waiting]) direction.stop();
    this.waiting.clear();
    return this.metronome.stop();
  }

  private tick(): void {
    let next = Number.POSITIVE_INFINITY;
    for (const direction of [...this.waiting]) {
      const at = direction.departDue();
      if (at === undefined) this.waiting.delete(direction);
      else next = Math.min(next, at);
    }
    this.metronome.set(next);
  }
}

/**
 * One direction of one connection: what `source` sends, delivered to `destination` after its
 * delay, in the order sent. A departure is never early: only what is due at the clock's reading
 * leaves, and the metronome wakes for the rest.
 */
class Direction {
  private readonly queue: Departure[] = [];
  /** Index of the next departure in `queue` (shifting a long array per chunk would be quadratic). */
  private head = 0;
  private lastAt = 0;
  private heldBytes = 0;
  private destinationFull = false;
  private paused = false;
  private ended = false;
  private stopped = false;

  constructor(
    private readonly source: Socket,
    private readonly destination: Socket,
    private readonly oneWayMs: () => number,
    private readonly departures: Departures,
  ) {
    source.on('data', (bytes: Buffer) => {
      this.heldBytes += bytes.length;
      this.enqueue(bytes);
      if (this.heldBytes >= HIGH_WATER_BYTES) this.pause();
    });
    source.once('end', () => {
      this.ended = true;
      this.enqueue('end');
    });
    // A close without a clean FIN first (a reset, a kill, a refused connect) is passed on as one.
    source.once('close', (hadError: boolean) => {
      if (!this.ended || hadError) this.enqueue('abort');
    });
    destination.on('drain', () => {
      this.destinationFull = false;
      this.resumeIfRoom();
    });
  }

  /** Drops whatever is still on its way; nothing is sent or scheduled afterwards. */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.head = 0;
    this.departures.forget(this);
  }

  /** Sends what is due; the time of the next departure, or undefined when none is left. */
  departDue(): number | undefined {
    const now = monotonicMs();
    for (let next = this.queue[this.head]; next && next.at <= now; next = this.queue[this.head]) {
      this.head++;
      this.deliver(next);
    }
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.resumeIfRoom();
    return this.queue[this.head]?.at;
  }

  private enqueue(cargo: Cargo): void {
    if (this.stopped) return;
    // Never before the previous departure: jitter may lengthen a hop but never reorders bytes.
    const at = Math.max(monotonicMs() + this.oneWayMs(), this.lastAt);
    this.lastAt = at;
    this.queue.push({ at, cargo });
    // Only a first departure needs a wake-up: later ones are found when the one before leaves.
    if (this.queue.length - this.head > 1) return;
    const next = this.departDue();
    if (next !== undefined) this.departures.wait(this, next);
  }

  private deliver(departure: Departure): void {
    const { cargo } = departure;
    const destination = this.destination;
    if (typeof cargo !== 'string') this.heldBytes -= cargo.length;
    // The other end is gone: what was on the way to it is dropped, as the network would.
    if (destination.destroyed) return;
    if (cargo === 'abort') destination.destroy();
    else if (cargo === 'end') destination.end();
    else if (!destination.write(cargo)) {
      this.destinationFull = true;
      this.pause();
    }
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.source.pause();
  }

  private resumeIfRoom(): void {
    if (!this.paused || this.destinationFull || this.heldBytes >= HIGH_WATER_BYTES) return;
    this.paused = false;
    if (!this.source.destroyed) this.source.resume();
  }
}

export interface RoundTrip {
  /** Median and 99th percentile (nearest rank) of the PINGs' round trips, in ms to 0.01. */
  readonly median: number;
  readonly p99: number;
}

/** One PING's round trip on `redis` (ms); the signal's reason, at once, if `signal` aborts first. */
async function timedPing(redis: Redis, signal: AbortSignal | undefined): Promise<number> {
  const start = performance.now();
  await (signal ? orStopped(signal, redis.ping()) : redis.ping());
  return performance.now() - start;
}

/**
 * The round trips of `pings` PINGs, one after another, on `redis`, sorted (ms). `signal` stops
 * them, even mid-PING: at a long delay they take a minute and more (see startRaceProxy).
 */
async function pingTimes(redis: Redis, pings: number, signal?: AbortSignal): Promise<Float64Array> {
  if (!(pings >= 1)) throw new RangeError('measureRoundTrip: at least one PING');
  const times = new Float64Array(pings);
  for (let i = 0; i < pings; i++) times[i] = await timedPing(redis, signal);
  return times.sort();
}

const round2 = (ms: number): number => Math.round(ms * 100) / 100;

/** Times `pings` PINGs, one after another, on `redis` (connected through the proxy, to measure it). */
export async function measureRoundTrip(redis: Redis, pings: number, signal?: AbortSignal): Promise<RoundTrip> {
  const times = await pingTimes(redis, pings, signal);
  return { median: round2(percentileOfSorted(times, 50)), p99: round2(percentileOfSorted(times, 99)) };
}

/** PINGs each way for the proxy's own cost: enough for a fastest one that is not luck. */
const CALIBRATION_PINGS = 50;

/**
 * PINGs through a fresh proxy before its cost is measured, none of them counted: until its thread
 * has forwarded a few, its code is cold and its metronome has not learnt its lead, so the first
 * round trips cost more than the later ones, and a hold-back measured on them would make the race's
 * round trips shorter than asked. Twenty, or as many as fit in half a second, but at least three.
 * Pure.
 */
export function warmUpPings(delayMs: number): number {
  return Math.max(3, Math.min(20, Math.floor(500 / Math.max(1, delayMs))));
}

/**
 * The proxy's own cost per round trip: the fastest PING through it, less the delay it held and
 * less the fastest PING straight to the server (the network's share, which is real). The fastest,
 * not the median: a hold-back of more than the cheapest forwarding would make some round trips
 * shorter than asked. Never more than the delay itself. Pure.
 */
export function forwardingCost(fastestThroughMs: number, fastestDirectMs: number, delayMs: number): number {
  return Math.min(delayMs, Math.max(0, fastestThroughMs - delayMs - fastestDirectMs));
}

/** Kept beyond a measured shortfall when a hold-back is given back: a median just at the delay is one noise away from under it. */
const SHORTFALL_MARGIN_MS = 0.05;

/**
 * The hold-back to use once the round trip has been measured with `heldBackMs`: unchanged when
 * the median came out at the asked delay or above it; otherwise less by the shortfall and a small
 * margin (never below 0), so that the proxy adds what was asked rather than less. Pure.
 */
export function correctedHoldBack(heldBackMs: number, medianMs: number, delayMs: number): number {
  if (heldBackMs <= 0 || medianMs >= delayMs) return heldBackMs;
  return round2(Math.max(0, heldBackMs - (delayMs - medianMs) - SHORTFALL_MARGIN_MS));
}

/** The latency a run raced under: what was asked for, and the round trip measured through the proxy. */
export interface LatencyReport {
  readonly requestedMs: number;
  readonly jitterMs: number;
  readonly measuredRttMs: RoundTrip;
  /** PINGs the measured figures come from. */
  readonly pings: number;
  /** The round trip straight to the server, measured the same way just before: what the proxy adds to. */
  readonly directRttMs: RoundTrip;
  /** The proxy's own forwarding cost per round trip, measured and taken off its hold (see forwardingCost, correctedHoldBack). */
  readonly heldBackMs: number;
}

/** The way to the server for a race's own connections, through a proxy of its own. */
export interface RaceProxy {
  /** Stands for the server: the proxy's address, the server's credentials, database and TLS. */
  readonly target: ServerTarget;
  readonly latency: LatencyReport;
  /** Aborted if the proxy's thread fails or ends before close(): see threadLoss. */
  readonly lost: AbortSignal;
  close(): Promise<void>;
}

/**
 * PINGs for the measured round trip: about a second's worth, but at least 20 (a p99 needs some)
 * and at most 200 (enough for a median and a p99 to settle).
 */
export function pingsFor(asked: LatencyAsked): number {
  return Math.min(200, Math.max(20, Math.round(1000 / Math.max(1, asked.delayMs + asked.jitterMs / 2))));
}

/** The host and port a proxy to `url`'s server connects to; a usage error for a unix socket. */
export function proxyTarget(url: string): Pick<LatencyProxyOptions, 'targetHost' | 'targetPort'> {
  const parsed = new URL(url);
  if (parsed.protocol === 'unix:') throw usageError('--latency: the proxy reaches a server over TCP; use a redis:// or rediss:// --url, not a unix socket');
  return { targetHost: bareHost(parsed), targetPort: Number(parsed.port || 6379) };
}

/** A URL keeps an IPv6 host in brackets; a socket and a certificate check want it bare. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Starts a proxy to `target`'s server with the asked delay, measures its own forwarding cost and
 * holds back that much (so a round trip through it is the server's own plus the delay asked for),
 * then measures the round trip through it, and straight to the server for comparison. Only a TCP
 * server can be reached this way: a unix:// socket is a usage error.
 *
 * The measuring is a few hundred PINGs one after another: at a delay of a second, well over a
 * minute. `signal` (the run's stop) ends it at once, even mid-PING, the proxy closed and its
 * reason thrown: nothing of the run is on the server yet.
 */
export async function startRaceProxy(target: ServerTarget, asked: LatencyAsked, signal: AbortSignal): Promise<RaceProxy> {
  signal.throwIfAborted();
  const proxy = await startProxyThread({ ...proxyTarget(target.url), delayMs: asked.delayMs, jitterMs: asked.jitterMs });
  // A stopped run does not wait for its QUIT to cross the proxy behind the PING still in flight.
  const quit = (redis: Redis): Promise<unknown> => (signal.aborted ? Promise.resolve(redis.disconnect()) : closeConnection(redis));
  try {
    const proxied = throughProxy(target, proxy);
    const direct = await connect(target);
    try {
      // Its handshake crosses the proxy too: a few round trips of the delay.
      const connecting = connect(proxied);
      const redis = await orStopped(signal, connecting).catch((err: unknown) => {
        void connecting.then(
          (late) => late.disconnect(),
          () => {},
        );
        throw err;
      });
      try {
        // The proxy's own cost first, once it is warm: the fastest PING through it against the
        // fastest straight to the server. Without jitter: the fastest of a jittered few carries
        // some jitter, which a hold-back would take off every round trip, making some shorter
        // than the delay asked (at --latency 5 --latency-jitter 20, 3.6 ms was held back, and
        // 13 PINGs in 200 came in under 5 ms). The hold-back's proof below runs without it too:
        // with it, the median is above the delay whatever is held back.
        if (asked.jitterMs > 0) await proxy.jitter(0);
        await pingTimes(redis, warmUpPings(asked.delayMs), signal);
        const directTimes = await pingTimes(direct, CALIBRATION_PINGS, signal);
        const throughTimes = await pingTimes(redis, CALIBRATION_PINGS, signal);
        let heldBackMs = round2(forwardingCost(throughTimes[0] ?? 0, directTimes[0] ?? 0, asked.delayMs));
        await proxy.holdBack(heldBackMs);
        const pings = pingsFor(asked);
        let measuredRttMs = await measureRoundTrip(redis, pings, signal);
        // The hold-back is an estimate made on 50 PINGs; the round trips after it are the proof.
        // Where it took off more than forwarding costs, give the shortfall back and measure again;
        // still short (a busy machine), hold nothing back: every chunk then waits out half the
        // delay each way and never leaves early, so no round trip can come in under the delay.
        for (const fallback of [false, true]) {
          const next = fallback ? 0 : correctedHoldBack(heldBackMs, measuredRttMs.median, asked.delayMs);
          if (heldBackMs === 0 || measuredRttMs.median >= asked.delayMs || next === heldBackMs) break;
          heldBackMs = next;
          await proxy.holdBack(heldBackMs);
          measuredRttMs = await measureRoundTrip(redis, pings, signal);
        }
        // The round trip reported is the one the race gets: with its jitter.
        if (asked.jitterMs > 0) {
          await proxy.jitter(asked.jitterMs);
          measuredRttMs = await measureRoundTrip(redis, pings, signal);
        }
        const directRttMs = { median: round2(percentileOfSorted(directTimes, 50)), p99: round2(percentileOfSorted(directTimes, 99)) };
        return {
          target: proxied,
          latency: { requestedMs: asked.delayMs, jitterMs: asked.jitterMs, measuredRttMs, pings, directRttMs, heldBackMs },
          lost: proxy.lost,
          close: () => proxy.close(),
        };
      } finally {
        await quit(redis);
      }
    } finally {
      await quit(direct);
    }
  } catch (err) {
    await proxy.close();
    // A server lost, silent or refusing a PING while the proxy is measured is told like anywhere
    // else; a stopped run ends with what stopped it, whatever the cut-off wait threw.
    throw signal.aborted ? signal.reason : describeServerError(err, target.display);
  }
}

const PROXY_THREAD = new URL('./latency-proxy-thread.js', import.meta.url);

/** A proxy running in a thread of its own; `holdBack` resolves once the thread has taken it. */
export interface ThreadedProxy extends Omit<LatencyProxy, 'holdBack' | 'jitter'> {
  holdBack(ms: number): Promise<void>;
  jitter(ms: number): Promise<void>;
  /** Aborted, with the error the run ends with, if the thread fails or ends before close() asked it to. */
  readonly lost: AbortSignal;
}

/**
 * Aborted with the error a run ends with when `worker` fails (an exception its code did not catch)
 * or ends while `closing()` says nobody asked it to. A thread cannot be killed from outside the
 * process, but it can fail: the race's connections through it would then wait on a proxy that is
 * gone, so its end stops the run like any lost server.
 */
export function threadLoss(worker: Worker, closing: () => boolean): AbortSignal {
  const lost = new AbortController();
  const end = (why: string): void => {
    if (!closing() && !lost.signal.aborted) lost.abort(serverError(`the latency proxy's thread ${why}; the race's connections through it are lost`));
  };
  worker.on('error', (err) => end(`failed: ${err.message}`));
  worker.once('exit', (code) => end(`ended (exit code ${code})`));
  return lost.signal;
}

/**
 * The proxy in a worker thread (latency-proxy-thread.ts): the same proxy, but its forwarding and
 * its wake-ups run on that thread's event loop, not on the one the race's sweepers share. close()
 * resolves once the thread has ended, with nothing of it left listening.
 */
export async function startProxyThread(options: LatencyProxyOptions): Promise<ThreadedProxy> {
  const worker = new Worker(PROXY_THREAD, { workerData: options });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let closing: Promise<void> | undefined;
  const lost = threadLoss(worker, () => closing !== undefined);
  // The thread's next message; its failure or end instead rejects, so no wait outlives it.
  const next = (): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const settle = (): void => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (message: Record<string, unknown>): void => {
        settle();
        resolve(message);
      };
      const onError = (err: Error): void => {
        settle();
        reject(err);
      };
      const onExit = (code: number): void => {
        settle();
        reject(new Error(`the thread ended (exit code ${code})`));
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
  const started: Record<string, unknown> = await next().catch((err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }));
  if (typeof started.port !== 'number') {
    await exited;
    throw new Error(`latency proxy: ${String(started.error ?? 'the proxy thread did not start')}`);
  }
  return {
    host: '127.0.0.1',
    port: started.port,
    lost,
    async holdBack(ms) {
      if (!(ms >= 0)) throw new RangeError('latency proxy: a hold-back of 0 or more');
      const answer = next();
      worker.postMessage({ holdBack: ms });
      await answer;
    },
    async jitter(ms) {
      if (!(ms >= 0)) throw new RangeError('latency proxy: a jitter of 0 or more');
      const answer = next();
      worker.postMessage({ jitter: ms });
      await answer;
    },
    close() {
      closing ??= (async () => {
        worker.postMessage({ close: true });
        await exited;
      })();
      return closing;
    },
  };
}

/** `target` reached through `proxy`: same URL but for host and port, and TLS still checking the server's name. */
export function throughProxy(target: ServerTarget, proxy: Pick<LatencyProxy, 'host' | 'port'>): ServerTarget {
  const url = new URL(target.url);
  const serverName = bareHost(url);
  url.hostname = proxy.host;
  url.port = String(proxy.port);
  return {
    url: url.toString(),
    display: target.display,
    ...(url.protocol === 'rediss:' ? { tls: { ...(target.tls ?? { rejectUnauthorized: true }), serverName } } : {}),
  };
}

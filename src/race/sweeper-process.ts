/**
 * A sweeper in a Node process of its own: connects by itself, builds its strategy, reports ready,
 * waits for the release, sweeps, and sends back its record. The parent owns the run: Ctrl-C is
 * the parent's to handle (it stops this process), and a parent that goes away ends this one.
 */
import type { Redis } from 'ioredis';
import { leaveClosedTerminalAlone } from '../shared/closed-terminal.js';
import { closeConnection, connect } from '../server/connection.js';
import { EmqError, ExitCode, describeServerError, raisedReadingReplies, unaskedReply } from '../shared/errors.js';
import { queueKeys } from '../queue/keys.js';
import { measureServerClock } from '../server/clock.js';
import { sweepUntilDone } from './sweeper-life.js';
import { loadSweeper } from '../sweepers/strategies.js';
import type { Sweeper } from '../sweepers/sweeper.js';
import { ALIVE_EVERY_MS, DESTINATION_CODES, type FromWorker, type ToWorker, type WorkerSetup } from './process-protocol.js';

const send = (message: FromWorker): Promise<void> =>
  new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });

// Its stderr is the tool's: a terminal that closed under the run must not make it abort on exit.
leaveClosedTerminalAlone();

const stop = new AbortController();
let redis: Redis | undefined;
let setup: WorkerSetup | undefined;
let sweeper: Sweeper | undefined;

// The terminal's Ctrl-C and Ctrl-\ (and its hang-up) reach the whole process group: the parent
// decides, and ends this process by disconnecting.
process.on('SIGINT', () => {});
process.on('SIGQUIT', () => {});
process.on('SIGHUP', () => {});
process.on('disconnect', () => {
  stop.abort();
  redis?.disconnect();
  process.exit(0);
});

// Said from the start, whatever the work: the tool counts a child silent for long as stopped. Unref'd,
// so that it keeps no finished child alive.
const sayAlive = (): void => {
  if (process.connected) process.send?.({ type: 'alive' } satisfies FromWorker, undefined, {}, () => {});
};
sayAlive();
setInterval(sayAlive, ALIVE_EVERY_MS).unref();

// A reply no command asked for makes the client throw inside its socket's reader, past every
// caller (cli/uncaught.ts does the same for the tool's own process): said to the parent as the
// peer's failure it is, in the one line the run ends with, not as this process's stack and a
// death. Any other such exception is handed over as it is, as every failure of this process is.
process.setUncaughtExceptionCaptureCallback((err) => {
  stop.abort();
  void fail(raisedReadingReplies(err) ? unaskedReply(setup?.display) : err);
});

async function fail(err: unknown): Promise<void> {
  const error = err instanceof EmqError ? err : describeServerError(err, setup?.display ?? 'the server');
  await send({ type: 'failed', message: error.message, exitCode: error.exitCode ?? ExitCode.server });
  redis?.disconnect();
  process.disconnect?.();
}

async function prepare(message: WorkerSetup): Promise<void> {
  setup = message;
  // The channel uses advanced serialization, so the TLS Buffers arrive as Buffers.
  redis = await connect({ url: message.url, display: message.display, ...(message.tls ? { tls: message.tls } : {}) });
  const clock = await measureServerClock(redis);
  const build = await loadSweeper(message.mode);
  sweeper = build({
    redis,
    keys: queueKeys(message.queue),
    clock,
    batch: message.batch,
    maxStalled: message.maxStalled,
    probeDelayMs: message.probeDelayMs,
    signal: stop.signal,
    pending: message.pending,
    ...(message.userScript !== undefined ? { userScript: message.userScript } : {}),
    ...(message.functionName !== undefined ? { functionName: message.functionName } : {}),
  });
  await send({ type: 'ready' });
}

async function sweep(): Promise<void> {
  if (!setup || !sweeper || !redis) throw new Error('released before setup');
  const outcome = await sweepUntilDone(sweeper, setup.maxSweeps, setup.cadence, stop.signal);
  await send({ type: 'swept' });
  const moves = [...sweeper.record];
  await send({
    type: 'done',
    ids: Int32Array.from(moves, (m) => m.id),
    destinations: Uint8Array.from(moves, (m) => DESTINATION_CODES.indexOf(m.destination)),
    commands: sweeper.commands,
    retries: sweeper.retries ?? 0,
    strayIds: sweeper.strayIds ?? 0,
    noscriptFallbacks: sweeper.noscriptFallbacks ?? 0,
    sweeps: outcome.sweeps,
    cutShort: outcome.cutShort,
  });
  await closeConnection(redis);
  process.disconnect?.();
}

process.on('message', (message: ToWorker) => {
  const work = message.type === 'setup' ? prepare(message) : sweep();
  work.catch(fail);
});

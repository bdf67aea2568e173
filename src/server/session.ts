/**
 * The server a command runs against: --url, else REDIS_URL, else the embedded default, with one
 * admin connection for seeding, claiming, auditing and cleanup.
 */
import type { Redis } from 'ioredis';
import { closeConnection, connect, parseServerUrl, readServerInfo, type ServerInfo, type ServerTarget } from './connection.js';
import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.js';
import { EmqError, ServerGoneError, usageError } from '../shared/errors.js';
import { keptServerClause } from './kept-server.js';
import type { Io } from '../shared/model.js';
import { bugAfterOutput, helperDeath, orStopped, stopCause, watchInterrupts, type Interrupts } from '../shared/interrupt.js';
import { tlsSettings, type TlsFlags } from './tls.js';

export interface ServerChoice {
  readonly url?: string;
  readonly serverBin?: string;
  readonly tls?: TlsFlags;
}

export interface Session {
  readonly target: ServerTarget;
  readonly admin: Redis;
  readonly info: ServerInfo;
  readonly embedded: EmbeddedServer | undefined;
  /**
   * Where the race's own connections go (sweepers, workers, observer, re-leaser, chaos) when not
   * to `target`: the latency proxy (--latency). Seeding, auditing and cleanup stay on `admin`.
   */
  readonly raceTarget?: ServerTarget;
}

/** Where to connect, or undefined for the embedded default. Checked before anything starts. */
export function chooseTarget(choice: ServerChoice, env: NodeJS.ProcessEnv = process.env): ServerTarget | undefined {
  const url = choice.url ?? (env.REDIS_URL ? env.REDIS_URL : undefined);
  if (url === undefined) {
    tlsSettings('redis:', choice.tls ?? {});
    return undefined;
  }
  if (choice.serverBin !== undefined) {
    throw usageError('--server-bin: only for the embedded server; it cannot be combined with --url or REDIS_URL');
  }
  // A URL from the environment: its errors name where it came from, not a flag the user never gave.
  const target = parseServerUrl(url, choice.url === undefined ? 'REDIS_URL (no --url given)' : '--url');
  const tls = tlsSettings(url, choice.tls ?? {});
  return { ...target, ...(tls ? { tls } : {}), ...(choice.url === undefined ? { fromEnvironment: true as const } : {}) };
}

/**
 * The server a command names, as chooseTarget reads it; undefined for an embedded cluster, whose
 * nodes speak plain TCP, so that a TLS flag beside it is refused as beside the embedded server.
 */
export function chooseTargetOrCluster(
  choice: ServerChoice,
  embeddedCluster: number | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ServerTarget | undefined {
  if (embeddedCluster === undefined) return chooseTarget(choice, env);
  tlsSettings('redis:', choice.tls ?? {});
  return undefined;
}

/** `signal`: a stop while the session opens gives it up at once (see sessionFor). */
export async function openSession(choice: ServerChoice, env: NodeJS.ProcessEnv = process.env, signal?: AbortSignal): Promise<Session> {
  let target = chooseTarget(choice, env);
  let embedded: EmbeddedServer | undefined;
  if (target === undefined) {
    embedded = await startEmbeddedServer(choice.serverBin !== undefined ? { bin: choice.serverBin } : {});
    target = parseServerUrl(embedded.url);
  }
  return sessionFor(target, embedded, signal);
}

/**
 * The session on `target`, for a single server and an embedded cluster alike. A server started for
 * it is stopped, and the connection closed, when the session cannot be opened: nothing else would.
 */
export async function sessionFor(given: ServerTarget, embedded: EmbeddedServer | undefined, signal?: AbortSignal): Promise<Session> {
  const target: ServerTarget = embedded ? { ...given, own: 'command' } : given;
  let admin: Redis | undefined;
  try {
    // A stop while connecting, or while the server is asked what it is, ends the opening at once:
    // a server that takes connections but answers nothing would otherwise hold a Ctrl-C for the
    // whole bounded wait, with nothing begun that needs it.
    admin = await connect(target, { signal });
    const info = await orStopped(signal, readServerInfo(admin, target));
    return { target, admin, info, embedded };
  } catch (err) {
    // An open connection would keep the process alive after the error is printed (a user without +info).
    admin?.disconnect();
    await embedded?.stop();
    // A keeper killed while the session opened: the server was stopped under the connection, and
    // the keeper's death, not the lost connection it caused, is what the user should read.
    throw embedded?.lost.aborted ? embedded.lost.reason : err;
  }
}

/**
 * Closes the admin connection, then stops the embedded server unless it is to be kept. The
 * server's connection is only dropped, not closed with QUIT, when the server is stopped anyway: a
 * paused one would hold the QUIT for the whole bounded wait.
 */
export async function closeSession(session: Session, keepServer: boolean): Promise<void> {
  if (session.embedded && !keepServer) session.admin.disconnect();
  else await closeConnection(session.admin);
  if (!session.embedded) return;
  if (keepServer) session.embedded.detach();
  else await session.embedded.stop();
}

/**
 * `err`, or in its place the death of the command's own server (or of a node of its cluster) that
 * it stands for. A server's death reaches the connections at once and the tool only through its
 * keeper's exit, some ms later: a server error on the tool's own server is given that long to turn
 * out to be the death (helperDeath). A ServerGoneError already names a death (a node's, a keeper's)
 * and stays; undefined (nothing stopped the work) stays undefined.
 */
export async function serverNews(session: Pick<Session, 'embedded'>, err: unknown): Promise<unknown> {
  const ended = session.embedded?.ended;
  if (!ended || err === undefined || err instanceof ServerGoneError) return err;
  return helperDeath(err, ended);
}

/**
 * The bracket every command that races or replays runs in: signals watched before the session
 * opens (so a Ctrl-C while an embedded server starts still cleans up), `body` run on the session,
 * then the session closed on every way out and the signal handlers removed. A server asked to be
 * kept (`keep`) is kept only when the body was not stopped by a signal: an interrupted run leaves
 * nothing behind. A session that fails to open removes the handlers before its error goes on. A
 * body that ends with an exit code while a signal came too late for it to see (its output printed,
 * the session closing, an embedded server stopping) ends with the signal's code all the same, and
 * the line that says so: its "received, cleaning up" line promised a stop. A bug of the tool's
 * met there is thrown, marked as come once the output was complete (CodeBugError.afterOutput).
 */
export async function withSession<T>(
  open: (signal: AbortSignal) => Promise<Session>,
  io: Pick<Io, 'err' | 'leave'>,
  keep: boolean,
  body: (session: Session, interrupts: Interrupts) => Promise<T>,
): Promise<T> {
  // The signals' lines go to stderr; a third signal leaves through the command line's own exit.
  const interrupts = watchInterrupts(io.err, io.leave);
  const session = await open(interrupts.signal).catch((err: unknown) => {
    interrupts.dispose();
    // A signal that came while the session opened is the end, whatever it broke on its way (a
    // helper it reached too, as a Ctrl-C reaches the whole process group).
    throw stopCause(interrupts.signal) ?? err;
  });
  let interrupted = false;
  let died = false;
  let result: T;
  try {
    result = await body(session, interrupts);
  } catch (err) {
    interrupted = interrupts.signal.aborted;
    // The tool's own server, or a node of its cluster, that died under the command is its end,
    // and nothing of it is kept: the keys went with the server, and a cluster short of a node is
    // no server to leave running. The run's own line would speak of a lost connection and of keys
    // --keep kept, on a server whose pid may already be another process's.
    const news = interrupted ? err : await serverNews(session, err);
    died = !interrupted && session.embedded?.ended.aborted === true;
    if (died) throw news;
    // A kept server outlives a failed command too: its one line says where, or it runs on unknown.
    if (keep && !interrupted && session.embedded && err instanceof EmqError) err.message += `; ${keptServerClause(session.embedded)}`;
    throw err;
  } finally {
    await closeSession(session, keep && !interrupted && !died);
    interrupts.dispose();
  }
  const bug = bugAfterOutput(interrupts.signal);
  if (bug) throw bug;
  const late = stopCause(interrupts.signal);
  if (late && typeof result === 'number' && result < 128) {
    io.err(`emq-race: ${late.message}, once its output was complete\n`);
    return late.exitCode as T;
  }
  return result;
}

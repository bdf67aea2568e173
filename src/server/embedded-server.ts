/**
 * The embedded default: a private redis-server (or valkey-server, or redict-server) on a free loopback port, with
 * no persistence. It runs under a keeper (server-keeper.sh, a POSIX shell) that stops it and removes its folder
 * when the tool's end of a pipe closes, so it cannot outlive the tool even when the tool is
 * killed outright; keeper and server are outside the tool's process group (the keeper in one of its
 * own, the server in another where setsid is at hand), so that the terminal's Ctrl-C and hang-up
 * reach the tool (which cleans up and stops them) rather than the server mid-run.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { ServerGoneError, serverError, usageError } from '../shared/errors.js';
import { isStopSignal } from '../shared/interrupt.js';
import { childEnvironment } from '../shared/secrets.js';

export const SERVER_BINARIES = ['redis-server', 'valkey-server'] as const;

/**
 * Redict (a fork of Redis 7.2) takes the same arguments and runs the race alike: it may be named by
 * --server-bin, and is the default's last resort, after the two above.
 */
const LAST_RESORT = 'redict-server';

export interface EmbeddedServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly bin: string;
  /**
   * Aborted, with the error the run ends with, when the keeper dies while the tool still needs it
   * (killed from outside): by then the tool has stopped the server itself and removed its folder.
   */
  readonly lost: AbortSignal;
  /**
   * Aborted whenever the keeper exits unasked, killed or following its server out (the server
   * died): for a wait on the server that cannot end once it is gone (the embedded cluster's
   * joining). The reason is `lost`'s when the keeper was killed, else a ServerGoneError.
   */
  readonly ended: AbortSignal;
  /** Stops the server and removes its working folder. Safe to call twice. */
  stop(): Promise<void>;
  /** Leaves the server running after the tool exits (for --keep). */
  detach(): void;
}

/** Looks a program up on PATH the way a shell would. */
export function which(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      if (statSync(candidate).isFile()) {
        accessSync(candidate, constants.X_OK);
        return candidate;
      }
    } catch {
      // not here; try the next folder
    }
  }
  return undefined;
}

/** --server-bin if given (checked to be a Redis, Valkey or Redict server), else redis-server, else valkey-server, else redict-server. */
export function findServerBinary(explicit?: string): string {
  if (explicit !== undefined) {
    const resolved = explicit.includes('/') ? explicit : which(explicit);
    if (!resolved) throw usageError(`--server-bin: ${JSON.stringify(explicit)} was not found on PATH`);
    if (!existsSync(resolved)) throw usageError(`--server-bin: ${JSON.stringify(explicit)} does not exist`);
    let version: string;
    try {
      accessSync(resolved, constants.X_OK);
      // In a session of its own, as the server will be: the terminal's Ctrl-C, sent to the tool's
      // process group, must stop the tool (which hears it once this call returns), not kill the
      // probe and leave it read as no server binary. (spawnSync honours `detached` as spawn does;
      // Node's types leave it out, so the options are not a literal.)
      const probe = { encoding: 'utf8' as const, timeout: 5000, detached: true };
      let out = versionProbe(resolved, probe);
      // A Ctrl-C in the microseconds between the fork and the probe leaving the tool's group still
      // ends it: asked again (the tool has that signal too, and stops once this call returns). A
      // probe that timed out was killed by that timeout, not by a Ctrl-C: it would only hang again.
      for (let again = 0; again < 2 && isStopSignal(out.signal) && !timedOut(out); again++) out = versionProbe(resolved, probe);
      version = `${out.stdout ?? ''}`;
    } catch {
      throw usageError(`--server-bin: ${JSON.stringify(explicit)} is not an executable file`);
    }
    if (!/^(Redis|Valkey|Redict) server v=/m.test(version)) {
      throw usageError(`--server-bin: ${JSON.stringify(explicit)} is not a redis-server, valkey-server or redict-server binary`);
    }
    return resolved;
  }
  for (const name of [...SERVER_BINARIES, LAST_RESORT]) {
    const found = which(name);
    if (found) return found;
  }
  throw serverError(
    `no redis-server, valkey-server or redict-server found on PATH: install one (Debian: apt-get install redis-server, or run ${INSTALL_SCRIPT}) or pass --url redis://host:port`,
  );
}

/**
 * `bin --version`, in a process group of its own (`options.detached`). A probe that did not end by
 * itself (its timeout, or a signal) is killed with its whole group: spawnSync's timeout signals
 * the probe's own pid only, and what a wrapper script started (a `sleep`, a server) would be left
 * running for good.
 */
function versionProbe(bin: string, options: { encoding: 'utf8'; timeout: number; detached: boolean }): SpawnSyncReturns<string> {
  const out = spawnSync(bin, ['--version'], { ...options, env: childEnvironment() });
  if (out.pid > 0 && (out.error !== undefined || out.signal !== null)) {
    try {
      process.kill(-out.pid, 'SIGKILL');
    } catch {
      // no member left
    }
  }
  return out;
}

const timedOut = (out: SpawnSyncReturns<string>): boolean => (out.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT';

/**
 * The script that installs the servers, where this copy of the tool has it: the package ships it
 * (node_modules/emq-race/scripts/ in a user's project), so a path relative to a clone would send
 * a user who installed the package to a file they do not have.
 */
const INSTALL_SCRIPT = fileURLToPath(new URL('../../../scripts/install-servers.sh', import.meta.url));

export async function freePort(): Promise<number> {
  return probePort(0);
}

/**
 * Binds `port` on loopback (0: any free one) and lets it go: the port bound, or a rejection when it
 * is taken. Shared with the embedded cluster, which needs particular ports free.
 */
export function probePort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(port, '127.0.0.1', () => {
      const address = probe.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(bound));
    });
  });
}

export interface StartOptions {
  readonly bin?: string;
  /** Extra server arguments (`--name value` pairs), for tests that need a special server. */
  readonly extraArgs?: readonly string[];
  /** A fixed port (one attempt) instead of a free one picked here. */
  readonly port?: number;
  /**
   * Start a Sentinel rather than a server: this configuration is written to a file in the
   * server's own folder (Sentinel rewrites it as it goes), which it is started with.
   */
  readonly sentinelConfig?: string;
  /** What the process is, for a line about its keeper: the embedded server unless said (a Sentinel). */
  readonly role?: { readonly name: string; readonly short: string };
}

const SERVER_ROLE: NonNullable<StartOptions['role']> = { name: 'the embedded server', short: 'its server' };

// Beside the compiled modules: the build copies it there (scripts/build.mjs), as it does the .lua files.
const KEEPER = fileURLToPath(new URL('./server-keeper.sh', import.meta.url));

/** Filesystem errors in words, by their code; the code itself for any other. */
const FOLDER_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such folder',
  ENOTDIR: 'not a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'a read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'over the disk quota',
};

/**
 * A fresh folder of the server's own in the system's temporary folder (TMPDIR), with Sentinel's
 * configuration in it when there is one. A folder that cannot be made is the user's machine
 * speaking, not a bug: one line says where and why, and what to do instead.
 */
function serverFolder(sentinelConfig: string | undefined): string {
  const parent = tmpdir();
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(parent, 'emq-race-server-'));
    if (sentinelConfig !== undefined) writeFileSync(join(dir, 'sentinel.conf'), sentinelConfig);
    return dir;
  } catch (err) {
    if (dir) rmSync(dir, { recursive: true, force: true });
    const code = String((err as NodeJS.ErrnoException).code ?? '');
    const why = FOLDER_ERRORS[code] ?? (code || String((err as Error).message));
    const named = process.env.TMPDIR ? ` (TMPDIR)` : '';
    throw serverError(
      `cannot start the embedded server: cannot make its folder in ${parent}${named}: ${why}; point TMPDIR at a folder you can write, or give --url`,
    );
  }
}

export async function startEmbeddedServer(options: StartOptions = {}): Promise<EmbeddedServer> {
  const bin = findServerBinary(options.bin);
  let lastError = '';
  // A free port can be taken between the probe and the server's bind: try a few.
  for (let attempt = 0; attempt < (options.port ? 1 : 5); attempt++) {
    const port = options.port ?? (await freePort());
    const dir = serverFolder(options.sentinelConfig);
    const sentinel = options.sentinelConfig !== undefined ? [join(dir, 'sentinel.conf'), '--sentinel'] : [];
    const serverArgs = [...sentinel, ...privateServerArgs(port, dir), ...(options.extraArgs ?? [])];
    const keeper = spawn('sh', [KEEPER, dir, bin, ...serverArgs], { detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], env: childEnvironment() });
    // The keeper's end of the lifeline: an error here means the keeper is gone, which its exit reports.
    keeper.stdin?.on('error', () => {});
    let output = '';
    let report = '';
    keeper.stdout?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    });
    keeper.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    });
    (keeper.stdio[3] as Readable | null)?.on('data', (chunk: Buffer) => {
      report += chunk.toString();
    });
    const ready = await waitUntilReady(
      keeper,
      () => output,
      () => report,
    );
    if (typeof ready === 'number') {
      const own = await serverPid(keeper, ready, port, dir);
      // A wrapper that forked its server into a session of its own and left (setsid -f) leaves its
      // group empty: no process holds that number any more, and another may be given it. Such a
      // group is never signalled; while a member is left, even a zombie, the number is still its.
      return embedded(keeper, own, hasMembers(ready) ? ready : undefined, bin, port, dir, options.role);
    }
    // Killed from outside while its server started: no clash over a port, nothing to try again.
    // Its server may already run, its pid reported or not: stopped through the keeper's group and,
    // once it has left that for a group of its own (after it reported its pid), through that one.
    if (keeper.signalCode !== null) {
      await reportRead(keeper);
      killGroup(keeper, /^pid (\d+)$/m.exec(report)?.[1]);
      rmSync(dir, { recursive: true, force: true });
      throw keeperDied(keeper.signalCode, `redis://127.0.0.1:${port}`, options.role);
    }
    // The server's last words, or the keeper's shell saying why it could not start it; after the
    // wait, what it never said (a line of its log is no reason then: a wrapper that raised the log
    // level past notice, or sent the log elsewhere, leaves a healthy server's warning last).
    lastError = ready === 'exited' ? lastLine(output) || 'exited' : notReadyLine(output, options.sentinelConfig !== undefined);
    const started = /^pid (\d+)$/m.exec(report)?.[1];
    await stopKeeper(keeper, started, started);
    await stopStrayServer(port, dir);
    rmSync(dir, { recursive: true, force: true });
    // Only a port taken between the probe and the bind is worth another try: any other failure
    // (a wrapper that daemonizes its server, a bad argument) would fail the same way again.
    if (!/address already in use/i.test(output)) break;
  }
  throw serverError(`could not start ${bin}: ${lastError}`);
}

/**
 * How every server the tool starts for itself runs: on `port` of loopback only, nothing written to
 * disk but in `dir` (no snapshots, no append-only file), in the foreground, its log on stdout, where
 * its readiness is read.
 */
export function privateServerArgs(port: number, dir: string): string[] {
  return ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--logfile', ''];
}

/** The last line a server (or its keeper's shell) printed; empty if none. Pure. */
function lastLine(output: string): string {
  return output.trim().split('\n').at(-1)?.trim() ?? '';
}

/** How long a server has to say it is ready (a Sentinel: that it monitors its primary). */
const READY_WAIT_MS = 10_000;

/**
 * Why a start that outlasted the wait failed: the line the tool reads for readiness, where it looks
 * for it, and the server's last line, which is no reason by itself. Pure.
 */
function notReadyLine(output: string, sentinel: boolean): string {
  const last = lastLine(output);
  const awaited = sentinel ? '+monitor master' : 'Ready to accept connections';
  return (
    `it did not say "${awaited}" within ${READY_WAIT_MS / 1000} s (the tool reads that line of the server's log on its standard output, ` +
    `at --loglevel notice or more verbose)${last ? `; its last line: ${last}` : '; it printed nothing'}`
  );
}

/** The server's pid once it accepts connections; 'exited' if it (or its keeper) exited first, 'waited' if it never said it was ready. */
async function waitUntilReady(keeper: ChildProcess, output: () => string, report: () => string): Promise<number | 'exited' | 'waited'> {
  const deadline = Date.now() + READY_WAIT_MS;
  while (Date.now() < deadline) {
    if (keeper.exitCode !== null || keeper.signalCode !== null) return 'exited';
    const pid = Number(/^pid (\d+)$/m.exec(report())?.[1] ?? 0);
    // A Sentinel never says it is ready: it is once it monitors its primary.
    if (pid > 0 && /Ready to accept connections|\+monitor master/i.test(output())) return pid;
    await sleep(20);
  }
  return 'waited';
}

/**
 * The pid to name the server by (--keep's `kill PID`, and a stop by the tool itself): the one the
 * keeper started, unless that is a wrapper (a script that runs the real server as its child,
 * without exec, or in the background before it exits). A signal to the wrapper alone would leave
 * the server running, holding the tool's output pipes, so the server is asked its own pid. Only a
 * pid in the group the keeper started it in is taken: the started pid's own (setsid, where the
 * keeper stops the whole group), else the keeper's (no setsid, where the keeper is told the pid on
 * the lifeline, a `pid N` line, and stops that one), or, outside both, one shown to be this start's
 * server (a wrapper's setsid), which the keeper is told of and stops beside the group. A server
 * that answers with another (a wrapper that runs it in a container, whose pids are not this
 * machine's) keeps the started pid.
 */
async function serverPid(keeper: ChildProcess, started: number, port: number, dir: string): Promise<number> {
  const own = await processIdOf(port);
  if (own === undefined || own === started || keeper.pid === undefined) return started;
  const group = processGroupOf(own);
  // Outside both groups: a server a wrapper started in a session of its own (setsid), which no
  // signal to a group reaches; named only when this machine's process of that pid is this start's
  // server, not some other process that a container's pid happens to name here.
  if (group !== started && group !== keeper.pid && !isStartedServer(own, port, dir)) return started;
  keeper.stdin?.write(`pid ${own}\n`);
  return own;
}

/**
 * Whether process `pid` of this machine is the server of the start whose folder is `dir`: its
 * command line, as the server rewrites it ("redis-server 127.0.0.1:PORT") or as it was started
 * (`--port PORT`), names the port, and its working folder is `dir` (every server the tool starts
 * runs with `--dir` its own fresh folder). Read from /proc: where there is none, no process is
 * taken for the server.
 */
function isStartedServer(pid: number, port: number, dir: string): boolean {
  try {
    const line = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    if (!new RegExp(`(?:127\\.0\\.0\\.1:|--port )${port}(?:\\s|$)`).test(line)) return false;
    // The folder may be gone already (a keeper whose server left ends by removing it): the link then ends in " (deleted)".
    return readlinkSync(`/proc/${pid}/cwd`).replace(/ \(deleted\)$/, '') === join(realpathSync(dirname(dir)), basename(dir));
  } catch {
    return false;
  }
}

/**
 * A server still answering on `port` once a start that failed was cleaned up: one a wrapper left
 * running outside the keeper's reach (daemonized), working in this start's folder `dir`, so that
 * a server of somebody else's that took the port meanwhile is never touched. Stopped as the keeper
 * would: SIGTERM, then SIGKILL if it still runs 5 s later.
 */
async function stopStrayServer(port: number, dir: string): Promise<void> {
  const pid = await processIdOf(port);
  if (pid === undefined || pid === process.pid || !isStartedServer(pid, port, dir)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  // Looked at as the server each time, not merely as a live pid: an ended server's pid may be
  // another process's by the time the KILL would go, and a zombie no longer names the port.
  for (let waited = 0; waited < 5000 && isStartedServer(pid, port, dir); waited += 20) await sleep(20);
  if (isStartedServer(pid, port, dir)) killPid(pid);
}

/**
 * The server's `process_id` (INFO server), on a plain connection of its own: undefined when it does
 * not answer so within a second or two (a password, a renamed INFO).
 */
function processIdOf(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    const done = (pid?: number): void => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(2000, () => done());
    socket.on('error', () => done());
    socket.on('close', () => done());
    socket.on('connect', () => socket.write('INFO server\r\n'));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const found = /^process_id:(\d+)\r\n/m.exec(text);
      // An error reply, or the whole section without the field: no pid to be had.
      if (found || /^-.*\r\n/.test(text) || /\r\n\r\n$/.test(text)) done(found ? Number(found[1]) : undefined);
    });
  });
}

/** A process's group: from /proc where there is one (Linux), else from ps; undefined when it cannot be read. */
function processGroupOf(pid: number): number | undefined {
  try {
    // The fields after the parenthesised name (which may hold spaces): state, parent, group.
    return Number(
      readFileSync(`/proc/${pid}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' ')[2],
    );
  } catch {
    const out = spawnSync('ps', ['-o', 'pgid=', '-p', String(pid)], { encoding: 'utf8', timeout: 2000, env: childEnvironment() });
    const group = Number(out.stdout?.trim());
    return Number.isInteger(group) && group > 0 ? group : undefined;
  }
}

/**
 * `pid` is the server's own, `started` the process the keeper started (a wrapper, or the server
 * itself), whose number is that of the server's process group where the keeper gave it one:
 * undefined where no process was left in that group once the server was up.
 */
function embedded(keeper: ChildProcess, pid: number, started: number | undefined, bin: string, port: number, dir: string, role = SERVER_ROLE): EmbeddedServer {
  let stopped = false;
  const url = `redis://127.0.0.1:${port}`;
  const lost = new AbortController();
  const ended = new AbortController();
  // A keeper that exits unasked while its server still runs was killed: nothing would stop the
  // server now, and its output pipes, held open by the server, would keep the tool alive for ever.
  // The tool stops it itself. A keeper that follows its server out (the server died) is not this:
  // the run's connection reports that loss.
  const onKeeperExit = (code: number | null, signal: NodeJS.Signals | null): void => {
    if (stopped) return;
    if (!isAlive(pid)) {
      // A keeper killed once its server had died may leave a wrapper's other children, holding
      // the tool's output pipes.
      killGroup(keeper, started);
      ended.abort(new ServerGoneError(`${role.name} at ${url} died (its process ended unasked)`));
      return;
    }
    stopped = true;
    process.off('exit', onExit);
    killPid(pid);
    killGroup(keeper, started);
    rmSync(dir, { recursive: true, force: true });
    const report = (): void => {
      lost.abort(keeperDied(signal ?? `exit code ${String(code)}`, url, role));
      ended.abort(lost.signal.reason);
    };
    // The keeper ignores a terminal's signals, but one that reached it as it was forked, still in
    // the tool's process group (a Ctrl-C in the microseconds before it leaves), ends it before its
    // traps are set: the tool got that signal too, and its own stop is given a moment to be the
    // run's end. A keeper killed by anything else is reported at once.
    if (isStopSignal(signal)) setTimeout(report, TERMINAL_SIGNAL_GRACE_MS).unref();
    else report();
  };
  // The server was asked its pid after it came up (serverPid): a keeper that exited meanwhile has
  // had its exit event, and is seen to here, once this server is returned.
  if (keeper.exitCode !== null || keeper.signalCode !== null) process.nextTick(() => onKeeperExit(keeper.exitCode, keeper.signalCode));
  else keeper.once('exit', onKeeperExit);
  // The quick way out on a normal exit (the keeper would see the pipe close and do the same).
  const onExit = (): void => {
    if (!stopped) {
      killPid(pid);
      killServerGroup(started);
      rmSync(dir, { recursive: true, force: true });
    }
  };
  process.on('exit', onExit);
  return {
    url,
    port,
    pid,
    bin,
    lost: lost.signal,
    ended: ended.signal,
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off('exit', onExit);
      await stopKeeper(keeper, pid, started);
      rmSync(dir, { recursive: true, force: true });
    },
    detach() {
      stopped = true;
      process.off('exit', onExit);
      keeper.stdin?.end('keep\n');
      for (const stream of keeper.stdio.slice(1)) stream?.destroy();
      keeper.unref();
    },
  };
}

/** How long a keeper's death by a terminal's signal waits for the tool's own stop to come first. */
const TERMINAL_SIGNAL_GRACE_MS = 200;

function keeperDied(how: string, url: string, role: StartOptions['role'] = SERVER_ROLE): ServerGoneError {
  return new ServerGoneError(`${role.name}'s keeper process died (${how}); the tool stopped ${role.short} at ${url} itself`);
}

/**
 * SIGKILL to every process left in the group of a keeper that died from a signal, then in the
 * server's own group (`started`, the pid the keeper reported): its server, orphaned and still
 * holding the tool's output pipes (which would keep the tool alive for ever), whether it had left
 * the keeper's group yet or not, and what else a wrapper started there. The keeper's group first:
 * a server that leaves it between the two is then in its own. Only such a keeper, and at once: one
 * that died from a signal was killed from outside (it catches those a terminal sends), and a member
 * left in a group keeps the group's number from being given to another process.
 */
function killGroup(keeper: ChildProcess, started: number | string | undefined): void {
  if (keeper.signalCode === null || keeper.pid === undefined) return;
  try {
    process.kill(-keeper.pid, 'SIGKILL');
  } catch {
    // no member left
  }
  killServerGroup(started);
}

/**
 * SIGKILL to the server's process group, whose number is the pid the keeper started (where it had
 * setsid; without, no group has that number and this does nothing).
 */
function killServerGroup(started: number | string | undefined): void {
  if (started === undefined || !(Number(started) > 0)) return;
  try {
    process.kill(-Number(started), 'SIGKILL');
  } catch {
    // no member left, or no such group
  }
}

/**
 * Waits (a second at most) for the keeper's report pipe to close: the started process writes its
 * pid there itself, and a keeper that died may be seen to exit before that line is read.
 */
async function reportRead(keeper: ChildProcess): Promise<void> {
  const pipe = keeper.stdio[3] as Readable | null;
  if (!pipe || pipe.destroyed || pipe.readableEnded) return;
  await Promise.race([new Promise((resolve) => pipe.once('close', resolve)), sleep(1000, undefined, { ref: false })]);
}

/** Whether process group `group` has any member, a zombie too. */
function hasMembers(group: number): boolean {
  return isAlive(-group);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function killPid(pid: number | string | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(Number(pid), 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Closes the lifeline and waits for the keeper to stop the server (SIGTERM, then SIGKILL after its
 * grace) and exit; a keeper that does not is killed, server and all.
 */
async function stopKeeper(keeper: ChildProcess, serverPid: number | string | undefined, started: number | string | undefined): Promise<void> {
  if (keeper.exitCode !== null || keeper.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => keeper.once('exit', () => resolve()));
  keeper.stdin?.end();
  // Unref'd: once the keeper is gone this timer must not keep the tool alive.
  const done = await Promise.race([exited.then(() => true), sleep(10_000, undefined, { ref: false }).then(() => false)]);
  if (!done) {
    killPid(serverPid);
    killServerGroup(started);
    keeper.kill('SIGKILL');
    await exited;
  }
  // A keeper killed from outside while it was being asked to stop leaves its server running, and
  // the server's output pipes would keep the tool alive for ever: the tool stops it itself.
  if (isAlive(Number(serverPid))) killPid(serverPid);
  if (keeper.signalCode !== null) killServerGroup(started);
}

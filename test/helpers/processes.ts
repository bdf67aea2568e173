/** The processes a spawned CLI started (its keeper, its server, its sweeper children), found through /proc. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { until } from './cli-process.js';
import { tempDir } from './temp-dir.js';

/** The children one thread of a process started (`task`: the thread's id; the process's own for its main thread). */
export function threadChildren(pid: number, task: number | string): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A process's children, read from /proc: every thread's, as a child's parent is the thread that started it. */
export function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) => threadChildren(pid, task));
  } catch {
    return [];
  }
}

/**
 * Every process below `pid`: its children, theirs, and so on, walked through /proc. The tests look
 * every few ms while a run starts, where a `ps` each time would cost a process start.
 */
export function descendants(pid: number): number[] {
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length > 0; ) {
    frontier = frontier.flatMap(childrenOf);
    found.push(...frontier);
  }
  return found;
}

/**
 * A number from a process's /proc stat, counted from the field after its parenthesised name (which
 * may hold spaces): 1 its parent, 2 its process group. Undefined once the process is gone.
 */
function statField(pid: number, field: number): number | undefined {
  const value = statFields(pid)?.[field];
  return value === undefined ? undefined : Number(value);
}

/** The fields of /proc/PID/stat after the command name (which may hold spaces), the state first; undefined once it is gone. */
function statFields(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ');
  } catch {
    return undefined;
  }
}

/**
 * SIGKILL to `pid` and every process below it, the deepest first: a server retitles itself over its
 * environment and outlives a keeper killed alone, so what a process started goes before it.
 */
export function killWithDescendants(pid: number): void {
  for (const one of [...descendants(pid).reverse(), pid]) {
    try {
      process.kill(one, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
}

export const parentOf = (pid: number): number | undefined => statField(pid, 1);
export const groupOf = (pid: number): number | undefined => statField(pid, 2);

/**
 * Where a process and the ones below it stand, for a test's failure message when one does not end:
 * each one's command line, and each thread's state, kernel wait and signal masks (pending, blocked,
 * caught) from /proc.
 */
export function whereStuck(pid: number): string {
  const lines: string[] = [];
  for (const one of [pid, ...descendants(pid)]) {
    lines.push(`${one} ${commandLine(one) || '(gone)'}`);
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${one}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const status = readFileSync(`/proc/${one}/task/${task}/status`, 'utf8');
        const fields = status.split('\n').filter((line) => /^(Name|State|SigPnd|ShdPnd|SigBlk|SigCgt):/.test(line));
        const wchan = readFileSync(`/proc/${one}/task/${task}/wchan`, 'utf8');
        lines.push(`  task ${task}: ${fields.map((line) => line.replace(/:\s+/, '=')).join(' ')} wchan=${wchan}`);
      } catch {
        // ended meanwhile
      }
    }
  }
  return lines.join('\n');
}

/** A process's command line as one string ('' once it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Whether a process still runs: alive and not a zombie. An orphan that ended waits to be reaped by
 * whatever adopted it, late or never (a container's or a VM's first process may reap nothing), and
 * `alive` answers yes for it meanwhile.
 */
export const running = (pid: number): boolean => alive(pid) && statFields(pid)?.[0] !== 'Z';

/**
 * The embedded server a CLI process started (under its keeper): its pid and the port and folder on
 * its command line.
 */
export async function embeddedChild(cliPid: number): Promise<{ pid: number; port: number; dir: string }> {
  for (let i = 0; i < 500; i++) {
    const pids = descendants(cliPid);
    for (const pid of pids) {
      try {
        // A running server retitles itself "redis-server 127.0.0.1:PORT" and works in its --dir.
        const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        const port = Number(/127\.0\.0\.1:(\d+)/.exec(title)?.[1] ?? 0);
        if (port > 0) return { pid, port, dir: readlinkSync(`/proc/${pid}/cwd`) };
      } catch {
        // a short-lived child (the --version check) that is already gone
      }
    }
    await sleep(20);
  }
  throw new Error('no embedded server appeared');
}

/**
 * A connection to the embedded server on `port`, tried again every 20 ms until it answers, for up
 * to `limitMs` (a guard against a hang: the tries end with it, so a failed test's process can end).
 */
export async function connectOnceUp(port: number, limitMs = 15_000): Promise<Redis> {
  for (const deadline = Date.now() + limitMs; ; await sleep(20)) {
    try {
      return await connect(parseServerUrl(`redis://127.0.0.1:${port}`));
    } catch (err) {
      if (Date.now() >= deadline) throw err;
    }
  }
}

/**
 * One question to the server on loopback `port`, on a connection of its own closed after: undefined
 * where nothing answers it there (not up yet, gone, a password, another protocol).
 */
export async function askServer<T>(port: number, question: (server: Redis) => Promise<T>): Promise<T | undefined> {
  let server: Redis;
  try {
    server = await connect(parseServerUrl(`redis://127.0.0.1:${port}`));
  } catch {
    return undefined;
  }
  try {
    return await question(server);
  } catch {
    return undefined;
  } finally {
    server.disconnect();
  }
}

/**
 * Every process (but this one) whose command line names a run's server: its port, as the server
 * retitles itself ("redis-server 127.0.0.1:PORT") and as its keeper's and a wrapper's arguments
 * give it (`--port PORT`), or its folder.
 */
export function namingServer(port: number, dir: string): number[] {
  // A port or folder not known (NaN, '') would name every process: a caller's mistake, never a match.
  if (!(port > 0) || dir === '') throw new Error(`namingServer: no port (${port}) or folder (${JSON.stringify(dir)}) to look for`);
  const names = new RegExp(`127\\.0\\.0\\.1:${port}\\b|--port ${port}\\b`);
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .map(Number)
    .filter((pid) => {
      const line = commandLine(pid);
      return names.test(line) || line.includes(dir);
    });
}

/**
 * A --server-bin that wraps `bin` the way a user's shim does: a script that runs the server as its
 * child, without exec, so that the pid the keeper starts is the script's. Each start is noted in
 * `log` (the script's pid, then its arguments), where a test finds the run's port and folder.
 * `run` is the script's line that starts the server (`SERVER` stands for `bin "$@"`, `LOG` for the
 * log's path): by default the server in the foreground and nothing after.
 */
export function serverWrapper(bin: string, run = 'SERVER'): { path: string; log: string } {
  const dir = tempDir('emq-race-wrapper-');
  const path = join(dir, 'wrapped-server');
  const log = join(dir, 'starts');
  const line = run.replaceAll('SERVER', `'${bin}' "$@"`).replaceAll('LOG', `'${log}'`);
  writeFileSync(path, `#!/bin/sh\n[ "$1" = --version ] && exec '${bin}' --version\necho "$$ $*" >>'${log}'\n${line}\n`, { mode: 0o755 });
  return { path, log };
}

/** The port and folder of every server a serverWrapper started, in order, from its log (where a wrapper may note other lines). */
export function wrappedStarts(log: string): { port: number; dir: string }[] {
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((one) => one.includes('--port '))
    .map((line) => ({ port: Number(/--port (\d+)/.exec(line)?.[1]), dir: /--dir (\S+)/.exec(line)?.[1] ?? '' }));
}

/** The port and folder of the last server a serverWrapper started (wrappedStarts). */
export function wrappedServer(log: string): { port: number; dir: string } {
  return wrappedStarts(log).at(-1) ?? { port: Number.NaN, dir: '' };
}

/**
 * Waits (a guard against a hang, not a timing) until nothing of a run's server is left: no process
 * naming its port or folder, none of the `others` a test noted (a wrapper's other children), and
 * no folder; then kills whatever is left, so that a failure leaves nothing running, and asserts
 * that nothing was.
 */
export async function assertServerGone(server: { port: number; dir: string }, others: readonly number[] = [], limitMs = 15_000): Promise<void> {
  const left = (): number[] => [...namingServer(server.port, server.dir), ...others.filter(running)];
  await until(limitMs, 'the server, its wrapper, keeper and folder gone', () => left().length === 0 && !existsSync(server.dir), 20).catch(() => {});
  const found = left();
  const said = found.map((pid) => `${pid} ${commandLine(pid)}`);
  for (const pid of found) killWithDescendants(pid);
  assert.deepEqual(said, [], 'no process of the run left');
  assert.equal(existsSync(server.dir), false, "the server's folder is removed");
}

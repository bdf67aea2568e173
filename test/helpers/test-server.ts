/**
 * A server for a test suite, started apart from the tool's own embedded server and its keeper, so
 * that the suites' servers do not depend on the code they test: a one-line `sh` keeps it. What a
 * keeper is for stays: `sh` reads its stdin, which ends when the test process does, however it
 * ends (a failed assertion, a signal, a kill), and then stops the server and removes its folder.
 * The tool's own embedded server, keeper and all, is tested where it is the subject (the
 * `--server-bin` runs, the interrupt and helper-death tests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, privateServerArgs } from '../../src/server/embedded-server.js';

export interface TestServer {
  readonly url: string;
  readonly port: number;
  /** Stops the server and removes its folder; resolves once both are done. Safe to call twice. */
  stop(): Promise<void>;
}

/** The keeper: the server in the background, then a read that returns only at end of input. */
const KEEPER = 'dir=$1; shift; "$@" & pid=$!; read _; kill $pid 2>/dev/null; wait $pid; rm -rf "$dir"';

/** How long a server may take to say it is ready (ms): seconds under a loaded suite. */
const READY_WITHIN_MS = 30_000;

export interface TestServerOptions {
  /**
   * The server's folder, made by the caller (with a data set in it to load), removed with the
   * server all the same; a server that cannot bind its port is then not tried again, the folder gone.
   */
  readonly dir?: string;
  /** The line of its output that says the server is up: "Ready to accept connections" unless given (a server loading a data set listens first). */
  readonly upLine?: RegExp;
}

export async function startTestServer(bin: string, extraArgs: readonly string[] = [], options: TestServerOptions = {}): Promise<TestServer> {
  let lastOutput = '';
  // A free port can be taken between the probe and the server's bind: try a few.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'emq-race-test-server-'));
    const args = [bin, ...privateServerArgs(port, dir), ...extraArgs];
    const keeper = spawn('sh', ['-c', KEEPER, 'sh', dir, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    const output = await readyOrNot(keeper, options.upLine ?? /Ready to accept connections/i);
    if (output.ready) return testServer(keeper, port);
    lastOutput = output.text;
    await stopKeeper(keeper);
    rmSync(dir, { recursive: true, force: true });
    if (options.dir !== undefined || !/address already in use/i.test(output.text)) break;
  }
  throw new Error(`${bin} did not start: ${lastOutput.trim().split('\n').slice(-3).join(' | ')}`);
}

/** Waits for the server's `upLine`, its exit, or the time limit. */
function readyOrNot(keeper: ChildProcess, upLine: RegExp): Promise<{ ready: boolean; text: string }> {
  return new Promise((resolve) => {
    let text = '';
    const done = (ready: boolean): void => {
      clearTimeout(timer);
      keeper.stdout?.removeAllListeners('data');
      resolve({ ready, text });
    };
    const timer = setTimeout(() => done(false), READY_WITHIN_MS);
    keeper.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (upLine.test(text)) done(true);
      // A failed bind ends the server; its last words say why.
      else if (/Could not create server TCP listening socket|Failed listening|FATAL|Bad directive|Unrecognized|Wrong number of arguments/i.test(text))
        done(false);
    });
    keeper.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    keeper.once('exit', () => done(false));
  });
}

function testServer(keeper: ChildProcess, port: number): TestServer {
  // The server writes on: its output is read and dropped, so that a full pipe never blocks it.
  keeper.stdout?.resume();
  keeper.stderr?.resume();
  let stopped: Promise<void> | undefined;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => {
      stopped ??= stopKeeper(keeper);
      return stopped;
    },
  };
}

/** Ends the keeper's input, so that it stops the server and removes the folder, and waits for it. */
function stopKeeper(keeper: ChildProcess): Promise<void> {
  if (keeper.exitCode !== null || keeper.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => keeper.once('exit', () => resolve()));
  keeper.stdin?.end();
  return exited;
}

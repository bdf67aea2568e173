/**
 * The embedded server's keeper: a small Node process between the tool and its redis-server (or
 * valkey-server) that ties the server's life to the tool's. The tool holds the write end of a pipe
 * on this process's stdin; when that pipe closes, however the tool ended (a normal stop, a signal,
 * a crash, SIGKILL), the keeper stops the server and removes its data folder, then exits. Only a
 * "keep" line sent first (--keep) lets the server outlive the tool.
 *
 * Run as `node server-keeper.js DIR BIN ARGS…`, with a fourth pipe (fd 3) on which it reports
 * `pid N` once the server is spawned, or `error MESSAGE` if it could not be. The server writes to
 * the keeper's own stdout and stderr, which are the tool's pipes.
 */
import { spawn } from 'node:child_process';
import { rmSync, writeSync } from 'node:fs';

const REPORT_FD = 3;
/** How long the server has to shut down after SIGTERM before it is killed. */
const GRACE_MS = 5000;

const [dir, bin, ...args] = process.argv.slice(2);
if (dir === undefined || bin === undefined) process.exit(2);

const server = spawn(bin, args, { stdio: ['ignore', 'inherit', 'inherit'] });
let keep = false;
let stopping = false;

server.on('error', (err) => {
  writeSync(REPORT_FD, `error ${err.message}\n`);
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
});
if (server.pid !== undefined) writeSync(REPORT_FD, `pid ${server.pid}\n`);

// A kept server's folder goes too, once the server stops, however it is stopped (the kept line's
// SHUTDOWN NOSAVE, a kill): nothing in it outlives the server, and its owner never learns its name.
server.on('exit', () => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});

const stopServer = (): void => {
  if (stopping || keep) return;
  stopping = true;
  server.kill('SIGTERM');
  setTimeout(() => server.kill('SIGKILL'), GRACE_MS).unref();
};

process.stdin.on('data', (chunk: Buffer) => {
  if (chunk.toString().includes('keep')) keep = true;
});
// End of the pipe: the tool stopped the server, left it to --keep, or is gone. A kept server keeps
// its keeper, in a session of its own (the tool has closed its ends of the pipes), until it stops.
process.stdin.on('close', () => (keep ? undefined : stopServer()));
process.stdin.on('end', () => (keep ? undefined : stopServer()));
// A terminal's Ctrl-C and hang-up are the tool's to handle (this process is in a group of its own
// anyway); a SIGTERM sent here directly stops the server the same clean way.
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
process.on('SIGTERM', stopServer);

/**
 * What --keep says it left: the queues, the function library, the promoted replica and the
 * embedded server, for the race and for `explain` alike. Apart from the server's start-up, so that
 * the commands print it without loading what starts a server.
 */
import type { Io, RunResult } from '../shared/model.js';
import { outputWidth, wrapLines } from '../shared/text.js';
import { serverAddress, type ServerTarget } from './connection.js';
import type { EmbeddedServer } from './embedded-server.js';

/**
 * Says what --keep left: each run's queue (and its function library, its promoted replica), then
 * `server`, the embedded server, when it stays. With --json or --csv (`machineOutput`) stdout
 * carries that output alone, so this goes to stderr; on stdout the lines wrap like the report's
 * own sentences.
 */
export function describeKept(
  target: Pick<ServerTarget, 'url'>,
  server: EmbeddedServer | undefined,
  runs: readonly Pick<RunResult, 'queue' | 'keptLibrary' | 'failover'>[],
  io: Io,
  machineOutput: boolean,
): void {
  const say = machineOutput ? io.err : (line: string) => io.out(wrapLines(line, outputWidth(io)));
  const { db } = serverAddress(target.url);
  for (const run of runs) {
    say(keptQueueLine(run.queue, db));
    if (run.keptLibrary)
      say(`kept: function library ${run.keptLibrary}; emq-race clean --queue ${run.queue} removes it with the queue (or FUNCTION DELETE ${run.keptLibrary})\n`);
    if (run.failover?.keptServer) say(keptPromotedLine(run.queue, run.failover.keptServer));
  }
  if (server) for (const line of keptServerLines(server)) say(line);
}

/**
 * What --keep says of a server it leaves running: where it is and how to stop it; for an embedded
 * cluster (whose first node stands for it), each of its nodes alike, as the equal primaries they are.
 */
function keptServerLines(server: EmbeddedServer & { readonly nodes?: readonly EmbeddedServer[] }): string[] {
  const what = server.nodes ? 'embedded cluster node' : 'embedded server';
  return (server.nodes ?? [server]).map((node) => `kept: ${what} at ${node.url}, pid ${node.pid}; ${stop(node)}\n`);
}

/**
 * What a command's one error line adds when --keep leaves the embedded server running after a
 * failure: where it is and how to stop it, as a run that went well says it on lines of its own.
 */
export function keptServerClause(server: EmbeddedServer & { readonly nodes?: readonly EmbeddedServer[] }): string {
  return keptServerLines(server)
    .map((line) => line.trimEnd())
    .join('; ');
}

/** How to stop a server --keep left running. */
function stop(s: { readonly url: string; readonly pid: number }): string {
  return `stop it with: redis-cli -p ${new URL(s.url).port} shutdown nosave (or kill ${s.pid})`;
}

/**
 * What --keep says of a queue it leaves: its keys, and the database they are in when the URL chose
 * another than 0, where redis-cli looks unless told (`-n`).
 */
function keptQueueLine(queue: string, db: number | undefined): string {
  const where = db ? ` in database ${db}` : '';
  return `kept: queue ${queue} (keys emq:{${queue}}:*${where})\n`;
}

/** What --keep says of the replica a failover drill promoted and left running with the run's keys. */
function keptPromotedLine(queue: string, server: { readonly url: string; readonly pid: number }): string {
  return `kept: ${keptPromotedWords(queue, server)}\n`;
}

/** The promoted replica a failover drill left running, in words: where it is and how to stop it. */
export function keptPromotedWords(queue: string, server: { readonly url: string; readonly pid: number }): string {
  return `the promoted replica of queue ${queue}'s failover drill at ${server.url}, pid ${server.pid}; ${stop(server)}`;
}

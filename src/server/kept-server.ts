/**
 * What --keep says of an embedded server it leaves running. Apart from the server's start-up, so
 * that the commands print it without loading what starts a server.
 */
import type { EmbeddedServer } from './embedded-server.js';

/**
 * What --keep says of a server it leaves running: where it is and how to stop it; for an embedded
 * cluster (whose first node stands for it), every other node too.
 */
export function keptServerLines(server: EmbeddedServer & { readonly nodes?: readonly EmbeddedServer[] }): string[] {
  return [
    `kept: embedded server at ${server.url}, pid ${server.pid}; ${stop(server)}\n`,
    ...(server.nodes?.slice(1) ?? []).map((node) => `kept: embedded cluster node at ${node.url}, pid ${node.pid}; ${stop(node)}\n`),
  ];
}

/** How to stop a server --keep left running. */
function stop(s: { readonly url: string; readonly pid: number }): string {
  return `stop it with: redis-cli -p ${new URL(s.url).port} shutdown nosave (or kill ${s.pid})`;
}

/**
 * What --keep says of a queue it leaves: its keys, and the database they are in when the URL chose
 * another than 0, where redis-cli looks unless told (`-n`).
 */
export function keptQueueLine(queue: string, db: number | undefined): string {
  const where = db ? ` in database ${db}` : '';
  return `kept: queue ${queue} (keys emq:{${queue}}:*${where})\n`;
}

/** What --keep says of the replica a failover drill promoted and left running with the run's keys. */
export function keptPromotedLine(queue: string, server: { readonly url: string; readonly pid: number }): string {
  return `kept: the promoted replica of queue ${queue}'s failover drill at ${server.url}, pid ${server.pid}; ${stop(server)}\n`;
}

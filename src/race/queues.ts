/**
 * Several queues at once (--queues), and any run on a cluster: per mode, K queue names picked by
 * slot so they spread over the primaries, each queue run end to end (claim, seed, race, audit,
 * cleanup) on the primary that owns its slot, with its own admin connection and sweepers, all K
 * side by side. On a single server every queue lives on that server.
 */
import { connect } from '../server/connection.js';
import { serverError } from '../errors.js';
import type { Interrupts } from '../interrupt.js';
import { pickQueueNames } from '../queue/placement.js';
import { queueSlot } from '../queue/keys.js';
import type { Topology } from '../server/cluster/topology.js';
import { runMode } from './run-mode.js';
import type { Session } from '../server/session.js';
import type { ModeRun, RunResult } from '../model.js';

/** `host:port` of a URL, or the socket path of a unix:// one: how reports name a node. */
export function nodeName(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol === 'unix:') return decodeURIComponent(parsed.pathname);
  return `${parsed.hostname}:${parsed.port || '6379'}`;
}

/**
 * One mode's run on `queues` queues named from `name`, side by side: each on the primary that owns
 * its slot (on a single server, on that server), with its own admin connection and sweepers.
 */
export async function runQueues(session: Session, topology: Topology | undefined, name: string, queues: number, runFor: (queue: string) => ModeRun, interrupts: Interrupts): Promise<RunResult[]> {
  const here = nodeName(session.target.url);
  const names = pickQueueNames(name, queues, topology?.primaries ?? [], (slot) => topology?.ownerOf(slot));
  const settled = await Promise.allSettled(
    names.map(async (queue) => {
      const node = topology ? topology.ownerOf(queueSlot(queue)) : here;
      if (!node) throw serverError(`no primary of the cluster owns the slot of queue ${queue} (${queueSlot(queue)}): is every slot assigned?`);
      const target = topology ? topology.targetOf(node) : session.target;
      const admin = await connect(target);
      try {
        // On a single server the race may go through the latency proxy; a cluster refuses --latency.
        const result = await runMode({ target, admin, ...(!topology && session.raceTarget ? { raceTarget: session.raceTarget } : {}) }, runFor(queue), interrupts);
        return { ...result, node };
      } finally {
        await admin.quit().catch(() => admin.disconnect());
      }
    }),
  );
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
}

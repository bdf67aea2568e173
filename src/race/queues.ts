/**
 * Several queues at once (--queues), and any run on a cluster: per mode, K queue names picked by
 * slot so they spread over the primaries, each queue run end to end (claim, seed, race, audit,
 * cleanup) on the primary that owns its slot, with its own admin connection and sweepers, all K
 * side by side. On a single server every queue lives on that server.
 */
import { defaultMaxListeners, setMaxListeners } from 'node:events';
import type { Redis } from 'ioredis';
import { closeConnection, connect, type ServerTarget } from '../server/connection.js';
import { serverError } from '../shared/errors.js';
import { withStop, type Interrupts } from '../shared/interrupt.js';
import { pickQueueNames } from '../queue/placement.js';
import { queueSlot } from '../queue/keys.js';
import { refuseUsedQueues } from '../queue/owner-claim.js';
import { checkRunMemory, type ServerLoad } from '../queue/memory-guard.js';
import type { Topology } from '../server/cluster/topology.js';
import type { PlanStep } from './plan.js';
import { runMode } from './run-mode.js';
import { memoryTraits } from '../sweepers/strategies.js';
import type { Session } from '../server/session.js';
import type { ModeRun, RunResult } from '../shared/model.js';

/** `host:port` of a URL, or the socket path of a unix:// one: how reports name a node. */
export function nodeName(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol === 'unix:') return decodeURIComponent(parsed.pathname);
  return `${parsed.hostname}:${parsed.port || '6379'}`;
}

/** Where one queue of a run lives: its name, the server (`host:port`) owning its slot, and how to reach it. */
export interface Placement {
  readonly queue: string;
  readonly node: string;
  readonly target: ServerTarget;
}

/**
 * The `queues` queues named from `name`: each on the primary that owns its slot (on a single
 * server, all on that server). What runs them and what checks their memory beforehand share this.
 */
function placeQueues(session: Pick<Session, 'target'>, topology: Topology | undefined, name: string, queues: number): Placement[] {
  const here = nodeName(session.target.url);
  return pickQueueNames(name, queues, topology?.primaries ?? [], (slot) => topology?.ownerOf(slot)).map((queue) => {
    const node = topology ? topology.ownerOf(queueSlot(queue)) : here;
    if (!node) throw serverError(`no primary of the cluster owns the slot of queue ${queue} (${queueSlot(queue)}): is every slot assigned?`);
    return { queue, node, target: topology ? topology.targetOf(node) : session.target };
  });
}

/**
 * One mode's run on `queues` queues named from `name`, side by side: each on the primary that owns
 * its slot (on a single server, on that server), with its own admin connection and sweepers. The
 * first queue that fails (its node gone, say) stops the others at once, as a signal would: each
 * cleans up on its own node, and the first failure is the run's.
 */
export async function runQueues(
  session: Session,
  topology: Topology | undefined,
  name: string,
  queues: number,
  runFor: (queue: string) => ModeRun,
  interrupts: Interrupts,
): Promise<RunResult[]> {
  const firstFailure = new AbortController();
  const watched = withStop(interrupts, firstFailure.signal);
  // Every queue's run listens for the stop on this one signal at once (up to 64 queues): past
  // Node's default of 10, Node 20 would print a leak warning on the run's stderr.
  setMaxListeners(defaultMaxListeners + queues, watched.signal);
  let settled: PromiseSettledResult<RunResult>[];
  try {
    settled = await Promise.allSettled(
      placeQueues(session, topology, name, queues).map(async ({ queue, node, target }) => {
        try {
          const admin = await connect(target);
          try {
            // On a single server the race may go through the latency proxy; a cluster refuses --latency.
            const result = await runMode(
              { target, admin, ...(!topology && session.raceTarget ? { raceTarget: session.raceTarget } : {}) },
              runFor(queue),
              watched,
            );
            return { ...result, node };
          } finally {
            await closeConnection(admin);
          }
        } catch (err) {
          if (!firstFailure.signal.aborted) firstFailure.abort(err);
          throw err;
        }
      }),
    );
  } finally {
    watched.release();
  }
  // A signal is every queue's end; else the first queue's failure, which stopped the rest.
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw interrupts.signal.aborted || !firstFailure.signal.aborted ? failed.reason : firstFailure.signal.reason;
  const results = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  return results.map((result) => (sharesItsServer(result, results) ? { ...result, serverUsPerJob: null } : result));
}

/**
 * A queue raced beside another on the same server (node): the server's script time between its
 * two readings is every such queue's, so no time per job of its own can be read from it.
 */
function sharesItsServer(result: RunResult, all: readonly RunResult[]): boolean {
  return all.filter((other) => other.node === result.node).length > 1;
}

/** One plan the memory guard looks at: its steps, and how many queues each step runs side by side. */
export interface PlannedQueues {
  readonly queues: number;
  readonly steps: readonly PlanStep[];
}

/**
 * The checks over whole plans, before their first write: for every server the plans use, that
 * none of the queues placed there (as runQueues places them) already has keys, and what lives
 * there at each step, checked by checkRunMemory, the memory guard. One plan is one race; a grid
 * hands over every cell's, so a taken queue or the dearest cell is refused before the first cell
 * writes. Connections opened here to other primaries are closed again.
 */
export async function checkPlanBeforeWrites(
  session: Session,
  topology: Topology | undefined,
  plans: readonly PlannedQueues[],
  interrupts?: Pick<Interrupts, 'signal' | 'owe'>,
): Promise<void> {
  const signal = interrupts?.signal;
  const placed = plans.flatMap(({ queues, steps }) => steps.map((step) => ({ step, placements: placeQueues(session, topology, step.name, queues) })));
  const longest = placed.flatMap(({ placements }) => placements.map((p) => p.queue)).reduce((a, b) => (b.length > a.length ? b : a), '');
  const here = nodeName(session.target.url);
  const nodes = [...new Set(placed.flatMap(({ placements }) => placements.map((p) => p.node)))];
  const opened: Redis[] = [];
  try {
    const loads: ServerLoad[] = [];
    for (const node of nodes) {
      const target = node === here ? session.target : (topology?.targetOf(node) ?? session.target);
      const redis = node === here ? session.admin : await connect(target);
      if (redis !== session.admin) opened.push(redis);
      // The first step's claim checks its own queues before anything of the command is written, and
      // says why it failed as it would alone (taken, in use, or a permission refused on the way): the
      // steps after it are the ones checked here.
      // Their markers are read with the rest all the same where there is a rest, so that a refusal
      // names every queue of the command in use; a command of one step sends nothing here.
      const queuesOf = (steps: typeof placed) => steps.flatMap(({ placements }) => placements.filter((p) => p.node === node).map((p) => p.queue));
      const later = queuesOf(placed.slice(1));
      await refuseUsedQueues(redis, later, target.display, signal, later.length > 0 ? queuesOf(placed.slice(0, 1)) : []);
      loads.push({ where: target.display, redis, moments: momentsOn(node, placed), probeQueue: probeQueueOn(node, longest, topology) });
    }
    await checkRunMemory(loads, memoryTraits, interrupts);
  } finally {
    for (const redis of opened) await closeConnection(redis);
  }
}

/**
 * What lives on `node` at each step of the plans: the step's own runs, and beside them every run a
 * step before it kept (`--keep`): a kept queue stays on the server through the rest of the command,
 * so the modes and trials of a kept run add up, where without it each step's queues go before the
 * next step's are seeded.
 */
function momentsOn(node: string, placed: readonly { readonly step: PlanStep; readonly placements: readonly Placement[] }[]): ModeRun[][] {
  const moments: ModeRun[][] = [];
  const kept: ModeRun[] = [];
  for (const { step, placements } of placed) {
    const runs = placements.filter((p) => p.node === node).map((p) => step.runFor(p.queue));
    if (runs.length === 0) continue;
    moments.push([...kept, ...runs]);
    kept.push(...runs.filter((run) => run.keep));
  }
  return moments;
}

/** The measuring slice's queue: named after the run's longest queue name (keys as long), on `node`'s slots. */
function probeQueueOn(node: string, longest: string, topology: Topology | undefined): string {
  // Cut to leave room for the suffix within a queue name's 128 characters.
  const base = `${longest.slice(0, 120)}-m`;
  let name = base;
  for (let n = 1; topology && topology.ownerOf(queueSlot(name)) !== node && n < 100_000; n++) name = `${base}${n}`;
  return name;
}

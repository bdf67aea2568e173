/**
 * `--embedded-cluster N`: a private N-primary cluster on loopback, from the same redis-server (or
 * valkey-server) binary as the embedded server, joined with `redis-cli --cluster create` (or
 * valkey-cli for valkey-server, where installed), and torn down on every way out. Ports are picked
 * below 55000 because every node also binds its port + 10000 for the cluster bus.
 */
import { execFile } from 'node:child_process';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { connect, parseServerUrl } from '../connection.js';
import { findServerBinary, probePort, startEmbeddedServer, which, type EmbeddedServer } from '../embedded-server.js';
import { ServerGoneError, serverError } from '../../shared/errors.js';
import { childEnvironment } from '../../shared/secrets.js';

const run = promisify(execFile);

/** How long the nodes may take to join before the tool gives up on `--cluster create`. */
const JOIN_MS = 60_000;

/** How long a cli killed by a signal waits for the tool's own signal to be handled (see startEmbeddedCluster). */
const SIGNAL_SETTLE_MS = 1_000;

/** Cluster bus port = client port + this. */
export const BUS_OFFSET = 10_000;
/** Highest client port: its bus port must stay a valid port, clear of the usual ephemeral range's top. */
export const MAX_PORT = 54_999;
const MIN_PORT = 20_000;

export interface EmbeddedCluster extends EmbeddedServer {
  readonly nodes: readonly EmbeddedServer[];
}

function portIsFree(port: number): Promise<boolean> {
  return probePort(port).then(
    () => true,
    () => false,
  );
}

/** A random port in MIN_PORT..MAX_PORT whose bus port is free too, not in `taken`. */
async function clusterPort(taken: ReadonlySet<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = MIN_PORT + Math.floor(Math.random() * (MAX_PORT - MIN_PORT + 1));
    if (taken.has(port) || taken.has(port + BUS_OFFSET)) continue;
    if ((await portIsFree(port)) && (await portIsFree(port + BUS_OFFSET))) return port;
  }
  throw serverError('could not find free loopback ports for the embedded cluster');
}

/** valkey-cli beside valkey-server (redict-cli beside redict-server) where installed; redis-cli otherwise (it speaks to all). */
function clusterCli(serverBin: string): string {
  const own = ['valkey', 'redict'].find((fork) => basename(serverBin).includes(fork));
  const preferred = own ? [`${own}-cli`, 'redis-cli'] : ['redis-cli', 'valkey-cli', 'redict-cli'];
  for (const name of preferred) {
    const found = which(name);
    if (found) return found;
  }
  throw serverError(`--embedded-cluster needs ${preferred.join(' or ')} on PATH to join the nodes`);
}

async function waitForClusterOk(nodes: readonly EmbeddedServer[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (const node of nodes) {
    const redis = await connect(parseServerUrl(node.url));
    try {
      for (;;) {
        const info = String(await redis.call('CLUSTER', 'INFO'));
        if (/cluster_state:ok/.test(info) && /cluster_slots_assigned:16384/.test(info)) break;
        if (Date.now() > deadline) throw serverError(`the embedded cluster did not become ready (node ${node.port}: ${info.split(/\r?\n/)[0]})`);
        await sleep(100);
      }
    } finally {
      redis.disconnect();
    }
  }
}

/**
 * The cluster's `lost`: a node's keeper killed (its own words), or a node that died, in the words
 * of `when` at that moment. It stops the joining, which would otherwise wait JOIN_MS on a node
 * gone, and then the run: unlike one embedded server, whose death its connections report, a
 * cluster with a node gone still answers, with CLUSTERDOWN for a while and then as if nothing had
 * happened for the other nodes' slots. The run's keys go with the cluster the tool stops (no
 * `clean` to name).
 */
function clusterLost(nodes: readonly EmbeddedServer[], when: () => string): AbortSignal {
  const lost = new AbortController();
  for (const node of nodes) {
    node.ended.addEventListener(
      'abort',
      () => lost.abort(node.lost.aborted ? node.lost.reason : new ServerGoneError(`a node of the embedded cluster (${node.url}) died ${when()}`)),
      { once: true },
    );
  }
  return lost.signal;
}

/** `signal`: the run's interrupts; aborted, the nodes started so far are stopped and its reason thrown. */
export async function startEmbeddedCluster(
  primaries: number,
  serverBin?: string,
  signal: AbortSignal = new AbortController().signal,
): Promise<EmbeddedCluster> {
  const bin = findServerBinary(serverBin);
  const cli = clusterCli(bin);
  const nodes: EmbeddedServer[] = [];
  let joined = false;
  const stopAll = async (): Promise<void> => {
    await Promise.all(nodes.map((node) => node.stop()));
  };
  try {
    const taken = new Set<number>();
    for (let i = 0; i < primaries; i++) {
      const port = await clusterPort(taken);
      taken.add(port).add(port + BUS_OFFSET);
      nodes.push(
        await startEmbeddedServer({
          bin,
          port,
          extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000'],
        }),
      );
      signal.throwIfAborted();
    }
    const lost = clusterLost(nodes, () => (joined ? 'during the run' : 'while the cluster was being created'));
    // What ends the joining early: the run's signal (a Ctrl-C: its reason, so the command exits
    // with the signal's code) or a node gone.
    const stopIfStopped = (): void => {
      if (signal.aborted) throw signal.reason;
      if (lost.aborted) throw lost.reason;
    };
    const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
    try {
      await run(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'], {
        timeout: JOIN_MS,
        signal: AbortSignal.any([signal, lost]),
        env: childEnvironment(),
      });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string; signal?: string | null };
      // The terminal's Ctrl-C reaches the cli too (it shares the tool's process group), and its
      // death may be seen before the tool's own signal is handled: that signal, not a cli killed
      // with nothing to say, is what the command ends with.
      if (e.signal && !signal.aborted) await sleep(SIGNAL_SETTLE_MS, undefined, { signal, ref: false }).catch(() => {});
      // A node that died under the joining makes the cli fail on its own ("connection refused"),
      // often before the node's keeper has told the tool: a moment is given for that word, the
      // cause, to come first. Only a joining that failed waits it.
      else if (!e.signal && !lost.aborted) await sleep(SIGNAL_SETTLE_MS, undefined, { signal: AbortSignal.any([signal, lost]), ref: false }).catch(() => {});
      stopIfStopped();
      const said = `${e.stderr ?? ''}${e.stdout ?? ''}`.trim().split('\n').slice(-1)[0] || (e.signal ? `killed by ${e.signal}` : e.message);
      throw serverError(`could not join the embedded cluster with ${basename(cli)}: ${said}`);
    }
    stopIfStopped();
    await waitForClusterOk(nodes);
    signal.throwIfAborted();
    joined = true;
    const first = nodes[0];
    // Only for the type checker: with fewer than 3 nodes `--cluster create` has already failed above.
    if (!first) throw new Error('startEmbeddedCluster: no node was started');
    return {
      nodes,
      url: first.url,
      port: first.port,
      pid: first.pid,
      bin,
      lost,
      // Any node's end is the cluster's, in the cluster's words (clusterLost): a node killed or one
      // that died alike, as one server's `ended` is its keeper's exit for either reason.
      ended: lost,
      stop: stopAll,
      detach() {
        for (const node of nodes) node.detach();
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * Sessions on a cluster: one started here (--embedded-cluster) or found at --url (--cluster, or
 * INFO cluster saying cluster_enabled:1), and the topology every queue is placed by.
 */
import { parseServerUrl } from '../connection.js';
import { usageError } from '../../shared/errors.js';
import { sessionFor, type Session } from '../session.js';
import { startEmbeddedCluster } from './embedded-cluster.js';
import { discoverTopology, isClusterNode, type Topology } from './topology.js';

/** `signal`: the command's interrupts, which stop the cluster's start too. */
export async function openEmbeddedClusterSession(primaries: number, serverBin: string | undefined, signal: AbortSignal): Promise<Session> {
  const cluster = await startEmbeddedCluster(primaries, serverBin, signal);
  return sessionFor(parseServerUrl(cluster.url), cluster, signal);
}

/**
 * The cluster's topology when the session's server is a cluster node, else undefined. With
 * `required` (--cluster) a server that is not a cluster node is a usage error.
 */
export async function clusterTopology(session: Session, required: boolean): Promise<Topology | undefined> {
  if (!(await isClusterNode(session.admin, session.target.display))) {
    if (required) throw usageError(`--cluster: the server at ${session.target.display} is not a cluster node (INFO cluster: cluster_enabled:0)`);
    return undefined;
  }
  return discoverTopology(session.target);
}

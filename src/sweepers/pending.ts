/**
 * The push that puts a recovered job back in pending, for either shape of pending: a list, where
 * a second push leaves a second entry, or a sorted set (EchoMQ's own keyspace), where it does not.
 */
import type { QueueKeys } from '../queue/keys.js';
import type { PendingKind } from '../shared/model.js';

export function pushArgs(keys: QueueKeys, pending: PendingKind | undefined, id: string): [string, ...(string | number)[]] {
  return pending === 'zset' ? ['ZADD', keys.pending, 0, id] : ['RPUSH', keys.pending, id];
}

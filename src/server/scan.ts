/**
 * The SCAN family's replies, checked before a loop trusts them. A loop over SCAN ends when the
 * server hands back cursor 0; a peer that answers every command with `+OK` (or any reply of another
 * shape) never does, and ioredis gives such a reply to the caller as it came, so an unchecked loop
 * would walk a string's letters for ever. Every reply is checked for a SCAN reply's shape, and the
 * cursors are watched: a server's cursor only moves forward through its keyspace (in reversed-bit
 * order, slot by slot on a cluster node), so it never comes back to one it gave before within a
 * walk. A walk whose cursors have come round again more often than it has seen distinct ones (and
 * more than a few times) is in a cycle no keyspace has: the server is broken, and the walk ends.
 */
import { UnlikeRedisReply } from '../errors.js';

/** Cursors seen again that a walk forgives before it judges the cycle, however short the walk. */
const REPEATS_FORGIVEN = 16;

/** One SCAN-family walk (SCAN, SSCAN): `page` checks each reply and says what to ask for next. */
export class CursorWalk {
  private readonly seen = new Set<string>();
  private repeats = 0;

  constructor(private readonly command: string) {}

  /** The reply's next cursor and its keys (or members); an UnlikeRedisReply when it is not a SCAN reply or the cursors cycle. */
  page(reply: unknown): { readonly cursor: string; readonly batch: readonly string[] } {
    if (!Array.isArray(reply) || reply.length !== 2) throw new UnlikeRedisReply(this.command, 'is not a cursor and a list');
    const [cursor, batch] = reply as [unknown, unknown];
    if (typeof cursor !== 'string' || !/^\d+$/.test(cursor)) throw new UnlikeRedisReply(this.command, 'does not start with a cursor');
    if (!Array.isArray(batch) || !batch.every((item) => typeof item === 'string')) throw new UnlikeRedisReply(this.command, 'does not hold a list of names');
    if (cursor !== '0') {
      if (this.seen.has(cursor)) this.repeats++;
      else this.seen.add(cursor);
      if (this.repeats > Math.max(REPEATS_FORGIVEN, this.seen.size))
        throw new UnlikeRedisReply(this.command, `keeps giving cursors it gave before, ${this.repeats} times over, so its walk would never end`);
    }
    return { cursor, batch: batch as string[] };
  }
}

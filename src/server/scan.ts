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
import { UnlikeRedisReply } from '../shared/errors.js';

/** Cursors seen again that a walk forgives before it judges the cycle, however short the walk. */
const REPEATS_FORGIVEN = 16;

/** One SCAN-family walk (SCAN, SSCAN): `page` checks each reply and says what to ask for next. */
class CursorWalk {
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

/**
 * The pages of one SCAN-family walk, each reply checked (CursorWalk): `call` asks for the page at
 * a cursor. `signal` is looked at before every call; `between` is awaited between two calls.
 */
export async function* scanPages(
  command: string,
  call: (cursor: string) => Promise<unknown>,
  { signal, between }: { readonly signal?: AbortSignal | undefined; readonly between?: (() => Promise<void>) | undefined } = {},
): AsyncGenerator<readonly string[]> {
  const walk = new CursorWalk(command);
  let cursor = '0';
  do {
    signal?.throwIfAborted();
    const page = walk.page(await call(cursor));
    cursor = page.cursor;
    yield page.batch;
    if (cursor !== '0') await between?.();
  } while (cursor !== '0');
}

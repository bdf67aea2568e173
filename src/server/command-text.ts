/**
 * Commands and replies as a terminal shows them: a reply the way redis-cli prints one, a command
 * with the queue's key prefix left out (the heading names it). Shared by explain's timeline and the
 * race report's example, so both print the wire the same way; text.ts breaks their lines.
 */
import type { Reply } from '../shared/model.js';

/** A reply the way redis-cli prints one, on one line. */
export function formatReply(reply: Reply): string {
  if (reply === null) return '(nil)';
  if (typeof reply === 'number') return `(integer) ${reply}`;
  if (typeof reply === 'string') return JSON.stringify(reply);
  if (reply.length === 0) return '(empty array)';
  return reply.map((item, i) => `${i + 1}) ${formatReply(item)}`).join(' ');
}

/** A command's arguments, keys without the queue's prefix and a script's SHA1 cut to 8 characters. */
export function formatArgs(args: readonly string[], prefix: string): string {
  return args
    .map((arg, i) => {
      if (i > 0 && arg !== prefix && arg.startsWith(prefix)) return arg.slice(prefix.length);
      if (args[0] === 'EVALSHA' && i === 1 && /^[0-9a-f]{40}$/.test(arg)) return `${arg.slice(0, 8)}…`;
      return arg;
    })
    .join(' ');
}

/**
 * The command line that reproduces a run, rebuilt from the options it was parsed into: the server
 * URL with its password redacted, and each argument quoted for a POSIX shell where it needs it.
 */
import { redactUrl, scrubUrlText } from '../server/connection.js';

/** One argument as a POSIX shell reads it back. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

export type CommandValue = string | number | boolean | readonly string[] | undefined;

/**
 * `emq-race [subcommand] --flag value …`: booleans appear only when set, lists are joined with
 * commas, undefined is left out, and `--url` is always redacted. Every other value is scrubbed as
 * a line of text is: a file's name may be a URL with its password (`--html 'redis://:PASS@host'`
 * in a folder `redis:`), and the page prints this line.
 */
export function commandLine(words: readonly string[], flags: readonly (readonly [string, CommandValue])[]): string {
  const args: string[] = ['emq-race', ...words];
  for (const [flag, value] of flags) {
    if (value === undefined || value === false) continue;
    if (value === true) {
      args.push(flag);
      continue;
    }
    const text = Array.isArray(value) ? value.join(',') : String(value);
    args.push(flag, flag === '--url' ? redactUrl(text) : scrubUrlText(text));
  }
  return args.map(shellQuote).join(' ');
}

/**
 * A command line (as commandLine writes it) cut into the pieces a line break must not split: each
 * flag with its value, and the words before the first flag one by one.
 */
export function commandPieces(line: string): string[] {
  // An argument: unquoted characters and '…' runs (with '\'' for a quote), up to a space.
  const args = line.match(/(?:'[^']*'|\\'|[^\s'\\])+/g) ?? [];
  const pieces: string[] = [];
  for (const arg of args) {
    const last = pieces.at(-1);
    if (last?.startsWith('--') && !last.includes(' ') && !arg.startsWith('--')) pieces[pieces.length - 1] = `${last} ${arg}`;
    else pieces.push(arg);
  }
  return pieces;
}

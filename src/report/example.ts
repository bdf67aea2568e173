/**
 * The example under the race table: one job of a loop run that the sweepers recovered more than
 * once, every command they sent for it with its reply, one line each, in the order the replies
 * prove the server ran them (src/audit/interleaving.ts) — or, where they prove none, in the order
 * sent, and said so. Keys lose the queue's prefix, as in explain's timeline; 80 columns.
 */
import { formatArgs, formatReply } from '../server/command-text.js';
import { wrap } from '../shared/text.js';
import type { InterleavingExample, RunResult } from '../shared/model.js';

const WIDTH = 80;
const COMMAND_COLUMN = 46;

type ExampleRun = { readonly mode: string; readonly queue: string; readonly example: InterleavingExample };

/** What the example is, above its lines. */
export function exampleHeading(run: ExampleRun): string {
  const order = run.example.proven ? 'in the order the server ran them' : 'in the order they were sent';
  return `Example: job ${run.example.job} of the ${run.mode} run, every command its sweepers sent for it, ${order} (keys under emq:{${run.queue}}:):`;
}

/** How far the replies prove that order, below its lines. */
export function exampleProof(example: InterleavingExample): string {
  const evidence = example.evidence.join('; ');
  if (example.serial) {
    return `One command was in flight at a time (--seed): the replies came back in the order the server ran the commands, and the lines stand in that order${evidence ? ` (which the replies prove by themselves as well: ${evidence})` : ''}.`;
  }
  return example.proven
    ? `Proven from the replies alone: ${evidence}. Where the order cannot matter to the job (two pushes of it, two reads of one value, commands on other keys) lines stand as sent.`
    : `The replies do not prove the server's order (${evidence}): these lines are the order of sending, which is no evidence.`;
}

export function exampleLines(run: Pick<RunResult, 'mode' | 'queue' | 'example'>, width = WIDTH): string[] {
  const example = run.example;
  if (!example) return [];
  const prefix = `emq:{${run.queue}}:`;
  // Sweeper labels padded to the widest, so that commands start in one column past s9.
  const label = Math.max(...example.commands.map((c) => String(c.sweeper).length)) + 1;
  const rows = example.commands.map((c) => ({
    sent: `${`s${c.sweeper}`.padEnd(label)}  ${formatArgs(c.command, prefix)}`,
    reply: c.reply === undefined ? '(no reply)' : formatReply(c.reply),
  }));
  const column = Math.min(COMMAND_COLUMN, Math.max(...rows.map((r) => r.sent.length)));
  const lines = rows.flatMap(({ sent, reply }) => {
    const line = `  ${sent.padEnd(column)}  ← ${reply}`;
    return line.length <= width ? [line] : [...wrap(`  ${sent}`, width, '      '), ...wrap(`      ← ${reply}`, width, '        ')];
  });
  return [...wrap(exampleHeading({ ...run, example }), width, '  '), ...lines, ...wrap(exampleProof(example), width, '  ')];
}

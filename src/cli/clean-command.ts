/**
 * `emq-race clean`: removes a kept or crashed run's keys from a --url server, one queue by name or
 * every queue the tool owns (after a confirmation on a terminal, or --yes).
 */
import { Command, Option } from 'commander';
import type { Redis } from 'ioredis';
import type { CleanResult, OwnedQueue } from '../queue/leftovers.js';
import { closeConnection, connect, scrubUrlText } from '../server/connection.js';
import {
  CodeBugError,
  describeServerError,
  EmqError,
  ExitCode,
  InterruptedError,
  isTryAgainReply,
  serverError,
  slotRedirect,
  usageError,
} from '../shared/errors.js';
import { bugAfterOutput, orStopped, stopCause, watchInterrupts, type Interrupts, type SignalWords } from '../shared/interrupt.js';
import type { Io } from '../shared/model.js';
import { parseCleanQueueName, urlOnce } from './options.js';
import { addTlsOptions, type TlsFlags } from '../server/tls.js';
import { plural } from '../shared/text.js';

interface CleanFlags extends TlsFlags {
  queue?: string;
  all?: boolean;
  yes?: boolean;
  url?: string;
}

/** What clean needs of the process: its output, the environment, and a terminal to confirm on. */
export type CleanIo = Pick<Io, 'out' | 'err' | 'env' | 'stdinIsTty' | 'confirm' | 'leave'>;

export function addCleanCommand(program: Command, io: CleanIo, exit: { code: number }): Command {
  const command = new Command('clean')
    // The program's one-line errors, exit override and suggestions apply here too.
    .copyInheritedSettings(program)
    .allowExcessArguments(false)
    .description("remove a kept or crashed run's keys (only queues whose owner marker emq-race wrote, only the keys a run creates, by name)")
    .addOption(new Option('--queue <name>', 'the queue to remove').argParser(parseCleanQueueName))
    .addOption(new Option('--all', 'every queue emq-race owns on the server (asks first on a terminal)'))
    .addOption(new Option('--yes', 'with --all: remove without asking (needed when stdin is not a terminal)'))
    .addOption(new Option('--url <url>', 'server URL (default: $REDIS_URL); clean needs a server that outlives a run').argParser(urlOnce));
  addTlsOptions(command);
  command.action(async (flags: CleanFlags) => {
    exit.code = await clean(flags, io);
  });
  program.addCommand(command);
  return command;
}

async function clean(flags: CleanFlags, io: CleanIo): Promise<number> {
  // Loaded when clean runs, not for the program's --help: the session's module brings what starts
  // an embedded server, the leftovers' the scripts that remove a run's keys.
  const { chooseTarget } = await import('../server/session.js');
  const { describeOwned, findOwnedQueues, ownedQueue } = await import('../queue/leftovers.js');
  const { discoverTopology, isClusterNode } = await import('../server/cluster/topology.js');
  const { queueSlot } = await import('../queue/keys.js');
  const { cleanCommand } = await import('../queue/owner-claim.js');
  if (Boolean(flags.all) === (flags.queue !== undefined)) {
    throw usageError('clean: give either --queue NAME or --all');
  }
  if (flags.yes && !flags.all) throw usageError('clean --yes: only applies with --all');
  const target = chooseTarget({ ...(flags.url !== undefined ? { url: flags.url } : {}), tls: flags }, io.env);
  if (!target) throw usageError('clean: needs --url (or REDIS_URL); an embedded server ends with its run, keys and all');
  // From here a signal stops clean between its calls, with the signal's exit code and one line.
  const interrupts = watchInterrupts(io.err, io.leave, undefined, CLEAN_WORDS);
  const { signal } = interrupts;
  let code: number;
  // Set as the first deletion begins: a stop before it removed nothing, whichever way it came.
  let deleting = false;
  try {
    code = await (async (): Promise<number> => {
      const redis = await connect(target, { signal });
      const nodes = new Map<string, Redis>();
      try {
        signal.throwIfAborted();
        const again = cleanCommand(flags.all ? `--all${flags.yes ? ' --yes' : ''}` : `--queue ${flags.queue}`);
        // On a cluster each queue lives on the primary owning its slot: clean goes there, for one
        // queue, and looks on every primary for --all (a run's queues are spread over them).
        // A primary that is down is met when clean reaches it: one line naming it, as for a run.
        const topology = (await orStopped(signal, isClusterNode(redis, target.display))) ? await discoverTopology(target, signal) : undefined;
        const on = async (node: string | undefined): Promise<Redis> => {
          if (!topology || node === undefined) return redis;
          let held = nodes.get(node);
          if (!held) {
            held = await connect(topology.targetOf(node), { signal });
            nodes.set(node, held);
          }
          return held;
        };
        const nodeOf = (queue: string): string | undefined => topology?.ownerOf(queueSlot(queue));
        const through = (queue: OwnedQueue): Promise<Redis> => on(nodeOf(queue.queue));
        if (flags.queue !== undefined) {
          const owner = await on(nodeOf(flags.queue));
          // Reads only, until removeQueues: a stop while they wait on a silent server ends clean at once.
          const queue = await orStopped(signal, ownedQueue(owner, flags.queue));
          deleting = true;
          return await removeQueues(through, [queue], io, interrupts, { where: target.display, all: false, again });
        }
        const owned: OwnedQueue[] = [];
        const unreadable: string[] = [];
        for (const node of topology?.primaries ?? [undefined]) owned.push(...(await orStopped(signal, findOwnedQueues(await on(node), signal, unreadable))));
        if (unreadable.length > 0)
          io.err(
            `emq-race: not cleaned, whether emq-race's or not: ${plural(unreadable.length, 'queue')} whose owner marker this user may not read (outside its key patterns): ${unreadable.sort().join(', ')}\n`,
          );
        owned.sort((a, b) => a.queue.localeCompare(b.queue));
        const where = topology ? `the cluster of ${target.display} (${plural(topology.primaries.length, 'primary', 'primaries')})` : target.display;
        if (owned.length === 0) {
          io.out(`no emq-race queues on ${where}${unreadable.length > 0 ? ' that this user may read' : ''}\n`);
          return leftOver(io, where, unreadable, []);
        }
        io.out(`emq-race queues on ${where}:\n`);
        for (const queue of owned) io.out(`  ${describeOwned(queue)}${topology ? ` [on ${nodeOf(queue.queue)}]` : ''}\n`);
        if (!flags.yes) {
          if (!io.stdinIsTty || !io.confirm)
            throw usageError(
              `clean --all: ${plural(owned.length, 'queue')} found; no terminal to confirm on, so pass --yes to remove ${owned.length === 1 ? 'it' : 'them'}`,
            );
          if (!(await io.confirm(`remove ${owned.length === 1 ? 'this queue' : `these ${owned.length} queues`}? [y/N] `, signal))) {
            io.out('nothing removed\n');
            return leftOver(io, where, unreadable, []);
          }
        }
        const refused: string[] = [];
        deleting = true;
        await removeQueues(through, owned, io, interrupts, { where: target.display, all: true, again, refused });
        return leftOver(io, where, unreadable, refused);
      } finally {
        // Stopped, whatever was in flight has been waited for: the sockets are dropped, not closed
        // with QUIT, which a server that stopped answering would hold for the whole bounded wait.
        for (const held of [redis, ...nodes.values()]) {
          if (signal.aborted) held.disconnect();
          else await closeConnection(held);
        }
      }
    })();
  } catch (err) {
    // Stopped before any deletion (connecting, reading the markers, at the question): nothing removed.
    const stop = stopCause(signal) ?? (err instanceof InterruptedError ? err : undefined);
    // (A bug that removeQueues has already said with what it left is thrown as it is.)
    if (stop && !(err instanceof StoppedClean) && !(deleting && err === stop)) throw stoppedClean(stop, 'nothing removed');
    // A queue whose slot the cluster is moving: its keys lie on the node named, or on two at once.
    if (slotRedirect(err) || isTryAgainReply(err)) throw serverError(`${slotMoving(err)}: clean stops; run it again once the move has ended`);
    throw describeServerError(err, target.display);
  } finally {
    interrupts.dispose();
  }
  // A bug of the tool's met once clean's lines were written stopped nothing it still had to do: the
  // lines stand, and the bug is said after them, as withSession has it for a race (a signal then
  // ends nothing: see removeQueues).
  const bug = bugAfterOutput(signal);
  if (bug) throw bug;
  return code;
}

/** A clean's signal lines: it stops after the calls in flight, and nothing it stops leaves a queue it cannot clean later. */
const CLEAN_WORDS: SignalWords = {
  first: "stopping after the deletions in flight (a queue's owner marker goes last, so clean can finish it later)",
  second: 'still stopping',
  third: 'leaving now',
};

/** A clean a signal stopped once it had begun removing: its line names what is left. */
class StoppedClean extends EmqError {}

/**
 * The error a stopped clean ends with, `said` (what it removed, or not) added: a signal's line
 * reads "interrupted by SIGINT: nothing removed"; any other stop (an exception past every caller,
 * cli/uncaught.ts) is a sentence of its own, and a bug among them stays the bug it is, to be
 * reported with its stack, `said` as what it left behind.
 */
function stoppedClean(stop: EmqError, said: string): EmqError {
  if (stop instanceof InterruptedError) return new StoppedClean(`${stop.message}: ${said}`, stop.exitCode);
  if (!(stop instanceof CodeBugError)) return new StoppedClean(`${stop.message}; ${said}`, stop.exitCode);
  stop.message += `; ${said}`;
  return stop;
}

interface Removal {
  /** The server, as errors name it. */
  readonly where: string;
  /** The queues came from --all: a refused one is reported and skipped rather than ending the command. */
  readonly all: boolean;
  /** The command that removes what a stop leaves. */
  readonly again: string;
  /** With `all`: where the queues refused (and skipped) are named. */
  readonly refused?: string[];
}

/**
 * The end of `clean --all` that left queues behind: one line naming them all, and the exit code
 * `clean --queue` gives for such a queue: 3 for a marker this user may not read (the server's
 * permission refusal), 2 for a queue refused as in use.
 */
function leftOver(io: CleanIo, where: string, unreadable: readonly string[], refused: readonly string[]): number {
  if (unreadable.length === 0 && refused.length === 0) return ExitCode.ok;
  const parts = [
    ...(refused.length > 0 ? [`refused: ${queueList(refused)}`] : []),
    ...(unreadable.length > 0 ? [`owner marker not readable by this user: ${queueList(unreadable)}`] : []),
  ];
  io.err(`emq-race: clean --all left ${plural(refused.length + unreadable.length, 'queue')} on ${where} (${parts.join('; ')})\n`);
  return unreadable.length > 0 ? ExitCode.server : ExitCode.usage;
}

/**
 * Removes `queues` one after the other, each reported as it goes. A signal stops the removal
 * between calls: the command then ends with the signal's exit code and one line naming what is
 * left and the command that removes it (a third signal, leaving at once, names them too). A signal
 * that comes once every queue is removed stops nothing: the command ends as it would have.
 */
async function removeQueues(
  redisFor: (queue: OwnedQueue) => Promise<Redis>,
  queues: readonly OwnedQueue[],
  io: CleanIo,
  interrupts: Interrupts,
  removal: Removal,
): Promise<number> {
  const { cleanQueue, FOREIGN_SHOWN } = await import('../queue/leftovers.js');
  let midway: string | undefined;
  const notStarted: string[] = [];
  // What a third signal names: the queues from the one under way on.
  const owed = (from: number): (() => void) =>
    interrupts.owe(`not removed, or only partly: ${queueList(queues.slice(from).map((q) => q.queue))}; ${removal.again} removes them`);
  let settle = owed(0);
  try {
    for (const [i, queue] of queues.entries()) {
      if (interrupts.signal.aborted) {
        notStarted.push(queue.queue);
        continue;
      }
      try {
        const result = await cleanQueue(await redisFor(queue), queue, interrupts.signal);
        if (result.stopped === 'unbegun') notStarted.push(queue.queue);
        else if (result.stopped === 'partly') midway = queue.queue;
        else report(result, io, FOREIGN_SHOWN);
      } catch (err) {
        const e = describeServerError(err, removal.where);
        if (!removal.all || e.exitCode !== ExitCode.usage) throw err;
        removal.refused?.push(queue.queue);
        // Said here, not by the program's last guard: scrubbed as every error line is.
        io.err(`emq-race: ${scrubUrlText(e.message)}\n`);
      }
      settle();
      settle = i + 1 < queues.length ? owed(i + 1) : () => {};
    }
  } finally {
    settle();
  }
  const stop = stopCause(interrupts.signal);
  if (stop && (midway !== undefined || notStarted.length > 0)) {
    const said = midway === undefined && notStarted.length === queues.length ? 'nothing removed' : whatRemains(midway, notStarted, removal.again);
    throw stoppedClean(stop, said);
  }
  return (removal.refused?.length ?? 0) > 0 ? ExitCode.usage : ExitCode.ok;
}

/** A MOVED, ASK or TRYAGAIN reply met by clean, in words: the queue's slot is being moved, or was, to another node. */
function slotMoving(err: unknown): string {
  const redirect = slotRedirect(err);
  if (!redirect) return "a queue's slot is being moved to another node (TRYAGAIN: the cluster is being resharded)";
  return redirect.kind === 'MOVED'
    ? `the queue's slot ${redirect.slot} moved to ${redirect.node} (MOVED: the cluster was resharded)`
    : `the queue's slot ${redirect.slot} is being moved to ${redirect.node} (ASK: the cluster is being resharded)`;
}

const queueList = (queues: readonly string[]): string => queues.map((queue) => `queue ${queue}`).join(', ');

/** The line's second half after a signal stopped a clean: what is left, and `again`, the command that removes it. */
function whatRemains(midway: string | undefined, notStarted: readonly string[], again: string): string {
  const left: string[] = [];
  if (midway !== undefined) left.push(`queue ${midway} stopped midway, its owner marker kept`);
  if (notStarted.length > 0) left.push(`not started: ${queueList(notStarted)}`);
  return `${left.join('; ')}; ${again} ${midway !== undefined ? 'removes the rest' : 'removes them'}`;
}

/** What clean removed; `shown` is how many foreign keys a clean names at most (FOREIGN_SHOWN). */
function report(result: CleanResult, io: CleanIo, shown: number): void {
  const keys = plural(result.deleted, 'key');
  if (result.markerGone) io.out(`the marker of queue ${result.queue} was gone already (${result.markerGone}): nothing to remove\n`);
  else if (result.markerOnly) io.out(`removed the marker of queue ${result.queue} (${keys}); no other key is removed under an unconfirmed or older marker\n`);
  else io.out(`removed queue ${result.queue}: ${keys}${result.library?.removed ? `, and its function library ${result.library.name}` : ''}\n`);
  if (result.library && !result.library.removed)
    io.err(
      `emq-race: left the function library ${result.library.name} of queue ${result.queue}: this user may not delete it (FUNCTION DELETE ${result.library.name})\n`,
    );
  if (result.foreign === null)
    io.err(`emq-race: keys under emq:{${result.queue}}: that emq-race did not create were not looked for: this user may not run SCAN\n`);
  else if (result.foreign.length > 0) {
    const count = result.foreign.length === shown ? `${shown} or more keys` : plural(result.foreign.length, 'key');
    io.err(`emq-race: left ${count} under emq:{${result.queue}}: that emq-race did not create or cannot prove are its run's (e.g. ${result.foreign[0]})\n`);
  }
}

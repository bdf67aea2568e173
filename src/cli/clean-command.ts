/**
 * `emq-race clean`: removes a kept or crashed run's keys from a --url server, one queue by name or
 * every queue the tool owns (after a confirmation on a terminal, or --yes).
 */
import { Command, Option } from 'commander';
import type { Redis } from 'ioredis';
import type { CleanResult, OwnedQueue } from '../queue/leftovers.js';
import { connect } from '../server/connection.js';
import { describeServerError, EmqError, ExitCode, usageError } from '../errors.js';
import { stopCause, watchInterrupts, type SignalWords } from '../interrupt.js';
import type { Io } from '../model.js';
import { parseQueueName, urlOnce } from './options.js';
import { addTlsOptions, type TlsFlags } from '../server/tls.js';
import { plural } from '../text.js';

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
    .addOption(new Option('--queue <name>', 'the queue to remove').argParser(parseQueueName))
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
  if (Boolean(flags.all) === (flags.queue !== undefined)) {
    throw usageError('clean: give either --queue NAME or --all');
  }
  if (flags.yes && !flags.all) throw usageError('clean --yes: only applies with --all');
  const target = chooseTarget({ ...(flags.url !== undefined ? { url: flags.url } : {}), tls: flags }, io.env);
  if (!target) throw usageError('clean: needs --url (or REDIS_URL); an embedded server ends with its run, keys and all');
  const redis = await connect(target);
  try {
    if (flags.queue !== undefined) return await removeQueues(redis, [await ownedQueue(redis, flags.queue)], io, target.display, false);
    const owned = await findOwnedQueues(redis);
    if (owned.length === 0) {
      io.out(`no emq-race queues on ${target.display}\n`);
      return ExitCode.ok;
    }
    io.out(`emq-race queues on ${target.display}:\n`);
    for (const queue of owned) io.out(`  ${describeOwned(queue)}\n`);
    if (!flags.yes) {
      if (!io.stdinIsTty || !io.confirm)
        throw usageError(`clean --all: ${plural(owned.length, 'queue')} found; no terminal to confirm on, so pass --yes to remove them`);
      if (!(await io.confirm(`remove ${owned.length === 1 ? 'this queue' : `these ${owned.length} queues`}? [y/N] `))) {
        io.out('nothing removed\n');
        return ExitCode.ok;
      }
    }
    return await removeQueues(redis, owned, io, target.display, true);
  } catch (err) {
    throw describeServerError(err, target.display);
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** A clean's signal lines: it stops after the calls in flight, and nothing it stops leaves a queue it cannot clean later. */
const CLEAN_WORDS: SignalWords = {
  first: "stopping after the deletions in flight (a queue's owner marker goes last, so clean can finish it later)",
  second: 'still stopping',
  third: 'leaving now',
};

/**
 * Removes `queues` one after the other, each reported as it goes. From here on a signal stops the
 * removal between calls rather than the process mid-call: the command then ends with the signal's
 * exit code and one line naming what is left and the command that removes it. `where`: the
 * server, as errors name it. `all`: the queues came from --all, and a refused one is reported and
 * skipped rather than ending the command.
 */
async function removeQueues(redis: Redis, queues: readonly OwnedQueue[], io: CleanIo, where: string, all: boolean): Promise<number> {
  const { cleanQueue, FOREIGN_SHOWN } = await import('../queue/leftovers.js');
  const interrupts = watchInterrupts(io.err, io.leave, undefined, CLEAN_WORDS);
  let refused = 0;
  let partly: string | undefined;
  const notStarted: string[] = [];
  try {
    for (const queue of queues) {
      if (interrupts.signal.aborted) {
        notStarted.push(queue.queue);
        continue;
      }
      try {
        const result = await cleanQueue(redis, queue, interrupts.signal);
        if (result.stopped === 'unbegun') notStarted.push(queue.queue);
        else if (result.stopped === 'partly') partly = queue.queue;
        else report(result, io, FOREIGN_SHOWN);
      } catch (err) {
        const e = describeServerError(err, where);
        if (!all || e.exitCode !== ExitCode.usage) throw err;
        refused++;
        io.err(`emq-race: ${e.message}\n`);
      }
    }
  } finally {
    interrupts.dispose();
  }
  const stop = stopCause(interrupts.signal);
  const again = all ? 'emq-race clean --all' : `emq-race clean --queue ${queues[0]?.queue}`;
  if (stop) throw new EmqError(`${stop.message}: ${whatRemains(partly, notStarted, again)}`, stop.exitCode);
  return refused > 0 ? ExitCode.usage : ExitCode.ok;
}

/** The line's second half after a signal stopped a clean: what is left, and `again`, the command that removes it. */
function whatRemains(partly: string | undefined, notStarted: readonly string[], again: string): string {
  const left: string[] = [];
  if (partly !== undefined) left.push(`queue ${partly} partly removed, its owner marker kept`);
  if (notStarted.length > 0) left.push(`not started: ${notStarted.map((queue) => `queue ${queue}`).join(', ')}`);
  if (left.length === 0) return 'every queue asked for was removed';
  return `${left.join('; ')}; ${again} (and the same --url) removes the rest`;
}

/** What clean removed; `shown` is how many foreign keys a clean names at most (FOREIGN_SHOWN). */
function report(result: CleanResult, io: CleanIo, shown: number): void {
  const keys = plural(result.deleted, 'key');
  if (result.markerOnly) io.out(`removed the marker of queue ${result.queue} (${keys}); no other key is removed under an unconfirmed or older marker\n`);
  else io.out(`removed queue ${result.queue}: ${keys}\n`);
  if (result.foreign.length > 0) {
    const count = result.foreign.length === shown ? `${shown} or more keys` : plural(result.foreign.length, 'key');
    io.err(`emq-race: left ${count} under emq:{${result.queue}}: that emq-race did not create or cannot prove are its run's (e.g. ${result.foreign[0]})\n`);
  }
}

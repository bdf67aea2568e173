/**
 * `emq-race clean`: removes a kept or crashed run's keys from a --url server, one queue by name or
 * every queue the tool owns (after a confirmation on a terminal, or --yes).
 */
import { Command, Option } from 'commander';
import type { CleanResult } from '../queue/leftovers.js';
import { connect } from '../server/connection.js';
import { describeServerError, ExitCode, usageError } from '../errors.js';
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
export type CleanIo = Pick<Io, 'out' | 'err' | 'env' | 'stdinIsTty' | 'confirm'>;

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
  const { cleanQueue, describeOwned, findOwnedQueues, FOREIGN_SHOWN, ownedQueue } = await import('../queue/leftovers.js');
  if (Boolean(flags.all) === (flags.queue !== undefined)) {
    throw usageError('clean: give either --queue NAME or --all');
  }
  if (flags.yes && !flags.all) throw usageError('clean --yes: only applies with --all');
  const target = chooseTarget({ ...(flags.url !== undefined ? { url: flags.url } : {}), tls: flags }, io.env);
  if (!target) throw usageError('clean: needs --url (or REDIS_URL); an embedded server ends with its run, keys and all');
  const redis = await connect(target);
  try {
    if (flags.queue !== undefined) {
      report(await cleanQueue(redis, await ownedQueue(redis, flags.queue)), io, FOREIGN_SHOWN);
      return ExitCode.ok;
    }
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
    let refused = 0;
    for (const queue of owned) {
      try {
        report(await cleanQueue(redis, queue), io, FOREIGN_SHOWN);
      } catch (err) {
        const e = describeServerError(err, target.display);
        if (e.exitCode !== ExitCode.usage) throw e;
        refused++;
        io.err(`emq-race: ${e.message}\n`);
      }
    }
    return refused > 0 ? ExitCode.usage : ExitCode.ok;
  } catch (err) {
    throw describeServerError(err, target.display);
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
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

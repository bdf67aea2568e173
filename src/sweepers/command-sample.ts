/**
 * Per-job command logs for a few jobs of a run: every command any sweeper sent for one of them,
 * with its reply, so that the report can show one job's interleaving as the server ran it. Only
 * SAMPLE_SIZE ids are logged, spread evenly over the run's ids (and so over its lease deadlines:
 * early jobs, fought over by every sweeper at once, and later ones, where the sweepers have drifted
 * apart), so a run of a million jobs pays for a few dozen: every other id goes straight to the plain
 * command runner.
 */
import type { SweeperSample } from './sweeper.js';
import type { Reply, SweeperCommand } from '../shared/model.js';

const SAMPLE_SIZE = 32;

export class CommandSample {
  private readonly logs = new Map<string, { sweeper: number; command: string[]; reply: Reply | undefined }[]>();
  private removals = 0;

  /**
   * Samples `size` of the ids 1 … jobs, evenly spaced. `logged`: when a command takes its place in
   * its job's log. 'sent' keeps each sweeper's commands in the order it sent them, for the audit to
   * order across sweepers by what the replies prove. 'replied' is for a race with one command in
   * flight at a time (--seed): a command may wait at the scheduler's gate after it is sent to it,
   * so the order of the replies is the one the server ran them in, and the order of the sends is not.
   */
  constructor(
    jobs: number,
    size = SAMPLE_SIZE,
    private readonly logged: 'sent' | 'replied' = 'sent',
  ) {
    const stride = Math.max(1, Math.floor(jobs / size));
    for (let id = stride; id <= jobs && this.logs.size < size; id += stride) this.logs.set(String(id), []);
  }

  /** Entries were taken out of pending by a sweeper during the race. */
  get pendingShrank(): boolean {
    return this.removals > 0;
  }

  /** Every sampled job's commands, in the order they were sent (or, `replied`, answered). */
  jobs(): ReadonlyMap<string, readonly SweeperCommand[]> {
    return this.logs;
  }

  /** The view of sweeper `index` (0-based; the logs number sweepers from 1). */
  forSweeper(index: number): SweeperSample {
    return {
      execFor: (id, exec) => {
        const log = this.logs.get(id);
        if (!log) return exec;
        return async (command, ...args) => {
          const entry = { sweeper: index + 1, command: [command, ...args.map(String)], reply: undefined as Reply | undefined };
          if (this.logged === 'sent') log.push(entry);
          try {
            const reply = (await exec(command, ...args)) as Reply;
            entry.reply = reply;
            return reply;
          } finally {
            // A command that failed took its turn too.
            if (this.logged === 'replied') log.push(entry);
          }
        };
      },
      notePendingRemoval: () => {
        this.removals++;
      },
    };
  }
}

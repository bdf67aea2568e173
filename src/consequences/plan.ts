/**
 * Checks on the flags that add consequences to a run (--fault, --workers, --cycles, --observe),
 * made before anything is written: combinations that cannot work, and a server-wide fault that
 * needs the user's explicit say-so.
 */
import { usageError } from '../shared/errors.js';
import { faultsForMode } from './faults/names.js';
import type { Consequences, ConsequenceOptions, FaultName, Mode } from '../shared/model.js';

/** `embedded`: the run has a private server of its own, so nobody else's scripts can be flushed. */
export function checkConsequenceOptions(options: ConsequenceOptions, embedded: boolean, processes = false): void {
  if (processes && hasConsequences(options)) {
    throw usageError(
      '--processes cannot go with --fault, --workers, --cycles or --observe: those act on sweeper connections of this process; drop one or the other',
    );
  }
  if (options.workers > 0 && options.cycles > 1) {
    throw usageError(`--workers cannot go with --cycles ${options.cycles}: workers finish jobs, while cycles lease them again; use one or the other`);
  }
  if (options.faults.includes('failover')) checkFailover(options, embedded);
  if (options.faults.includes('script-flush') && !embedded && !options.allowServerWide) {
    throw usageError(
      '--fault script-flush empties the script cache of every application on that server: it runs only on the embedded server, or with --allow-server-wide',
    );
  }
}

/**
 * What a run of `mode` gets: the faults that can reach it (with a note for each that cannot);
 * `misses` is the strategy's own list of faults that cannot reach it.
 */
export function consequencesFor(options: ConsequenceOptions, mode: Mode, misses: Partial<Readonly<Record<FaultName, string>>>): Consequences {
  const { applied, notes } = faultsForMode(options.faults, mode, misses);
  return {
    faults: applied,
    workers: options.workers,
    cycles: options.cycles,
    observe: options.observe,
    notes,
    ...(options.failover && applied.includes('failover') ? { failover: options.failover } : {}),
  };
}

/** Whether any consequence flag was given: sweepers in child processes take none of them. */
function hasConsequences(options: ConsequenceOptions): boolean {
  return options.faults.length > 0 || options.workers > 0 || options.cycles > 1 || options.observe;
}

/** --fault failover starts a primary and a replica of its own, and drills them alone. */
function checkFailover(options: ConsequenceOptions, embedded: boolean): void {
  if (!embedded) throw usageError('--fault failover starts its own primary and replica: it runs on the embedded server only; leave out --url and REDIS_URL');
  if (options.faults.length > 1) throw usageError('--fault failover goes alone: drop the other --fault');
  // Workers go through the pair's front proxy like the sweepers, and the drill waits for them
  // (failover-drill.ts); the re-leaser and the observer would write and read across the cut unwaited,
  // and a re-lease made after the cut, lost with the old primary, would still be in the re-leaser's
  // record that the audit judges the promoted replica's counters and pending entries by.
  if (options.cycles > 1 || options.observe) {
    const flag = options.cycles > 1 ? `--cycles ${options.cycles}` : '--observe';
    throw usageError(
      `--fault failover cannot go with ${flag}: the drill waits for the sweepers and the workers before it cuts the replica off and kills the primary, not for the re-leaser of --cycles or the observer of --observe, whose calls would cross the cut and the kill unaccounted for; drop one or the other`,
    );
  }
}

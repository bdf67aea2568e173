/**
 * Checks on the flags that add consequences to a run (--fault, --workers, --cycles, --observe),
 * made before anything is written: combinations that cannot work, and a server-wide fault that
 * needs the user's explicit say-so.
 */
import { usageError } from './errors.js';
import type { FaultName } from './faults/names.js';

export interface ConsequenceOptions {
  readonly faults: readonly FaultName[];
  readonly workers: number;
  readonly cycles: number;
  readonly observe: boolean;
  readonly allowServerWide: boolean;
}

/** `embedded`: the run has a private server of its own, so nobody else's scripts can be flushed. */
export function checkConsequenceOptions(options: ConsequenceOptions, embedded: boolean): void {
  if (options.workers > 0 && options.cycles > 1) {
    throw usageError(`--workers cannot go with --cycles ${options.cycles}: workers finish jobs, while cycles lease them again; use one or the other`);
  }
  if (options.faults.includes('script-flush') && !embedded && !options.allowServerWide) {
    throw usageError('--fault script-flush empties the script cache of every application on that server: it runs only on the embedded server, or with --allow-server-wide');
  }
}

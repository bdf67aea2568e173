/**
 * The faults a run can inject, and the split of a run's faults into those that reach its mode and
 * those that cannot (which ones, and why, each strategy says in sweepers/strategies.ts).
 */
import { usageError } from '../../shared/errors.js';
import { shownChoice } from '../../shared/text.js';
import { FAULTS, type FaultName } from '../../shared/model.js';

/** A commander collector: `--fault` may be given several times; each name counts once. */
export function collectFault(raw: string, previous: readonly FaultName[] = []): FaultName[] {
  const name = raw.trim();
  if (!(FAULTS as readonly string[]).includes(name)) {
    throw usageError(`--fault: ${shownChoice(raw, FAULTS)} is not a fault; expected one of ${FAULTS.join(', ')} (repeat the flag for several)`);
  }
  return previous.includes(name as FaultName) ? [...previous] : [...previous, name as FaultName];
}

/**
 * The faults that apply to `mode`, and a note for each that does not. `misses` is the mode's own
 * list of faults that cannot reach it, with why (its entry in sweepers/strategies.ts).
 */
export function faultsForMode(
  faults: readonly FaultName[],
  mode: string,
  misses: Partial<Readonly<Record<FaultName, string>>>,
): { applied: FaultName[]; notes: string[] } {
  const applied: FaultName[] = [];
  const notes: string[] = [];
  for (const fault of faults) {
    const reason = misses[fault];
    if (reason === undefined) applied.push(fault);
    else notes.push(`${fault} does not apply to ${mode}: ${reason}`);
  }
  return { applied, notes };
}

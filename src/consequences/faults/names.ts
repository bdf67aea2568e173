/**
 * The faults a run can inject, and which of them cannot reach a given mode (and why). Modes are
 * named by string so that a strategy added later only needs a line in NOT_APPLICABLE.
 */
import { usageError } from '../../errors.js';

export const FAULTS = ['sweeper-crash', 'script-flush', 'client-kill'] as const;
export type FaultName = (typeof FAULTS)[number];

/** A commander collector: `--fault` may be given several times; each name counts once. */
export function collectFault(raw: string, previous: readonly FaultName[] = []): FaultName[] {
  const name = raw.trim();
  if (!(FAULTS as readonly string[]).includes(name)) {
    throw usageError(`--fault: ${JSON.stringify(raw)} is not a fault; expected one of ${FAULTS.join(', ')} (repeat the flag for several)`);
  }
  return previous.includes(name as FaultName) ? [...previous] : [...previous, name as FaultName];
}

const NOT_APPLICABLE: Record<FaultName, Readonly<Record<string, string>>> = {
  'sweeper-crash': {},
  'script-flush': {
    loop: 'the loop sends no script, so an emptied script cache cannot touch it',
    watch: 'MULTI/EXEC sends no script, so an emptied script cache cannot touch it',
    function: 'functions are not in the script cache that SCRIPT FLUSH empties',
  },
  'client-kill': {},
};

/** Why `fault` cannot reach `mode`, or undefined when it applies. */
export function faultNotApplicable(fault: FaultName, mode: string): string | undefined {
  return NOT_APPLICABLE[fault][mode];
}

/** The faults that apply to `mode`, and a note for each that does not. */
export function faultsForMode(faults: readonly FaultName[], mode: string): { applied: FaultName[]; notes: string[] } {
  const applied: FaultName[] = [];
  const notes: string[] = [];
  for (const fault of faults) {
    const reason = faultNotApplicable(fault, mode);
    if (reason === undefined) applied.push(fault);
    else notes.push(`${fault} does not apply to ${mode}: ${reason}`);
  }
  return { applied, notes };
}

/**
 * One job after two sweeps, judged by the audit's own rules (audit/rules.ts): the job's facts, as
 * read back from the server or as the model predicts them, and the moves the sweeps recorded, made
 * into the audit's snapshot of a one-job queue; the anomalies the audit counts name the outcome's
 * class. Pure.
 */
import { auditJobs, blankSnapshot } from '../audit/rules.js';
import { stateCode } from '../audit/job-state.js';
import { ANOMALIES, type AuditCounts } from '../shared/model.js';

/** The job as it stands after both sweeps. */
export interface JobFacts {
  /** Times its id stands in pending. */
  readonly pendingEntries: number;
  readonly inActive: boolean;
  /** In active with a lease deadline already past. */
  readonly activeExpired: boolean;
  readonly inDead: boolean;
  /** The hash's `stalled` field; null when it has none. */
  readonly stalled: number | null;
  /** The hash's `state` field; null when it has none. */
  readonly state: string | null;
}

export const CLEAN = 'clean';

/** The audit's anomalies that make a duplicate: the job recovered twice, or standing twice in pending. */
const DUPLICATE: readonly string[] = ['doubleRecoveries', 'duplicatePending'];

/** The word an anomaly gives a class; the audit's own field name where no shorter word is given. */
const WORDS: Readonly<Record<string, string>> = {
  lostIncrements: 'lostIncrement',
  extraIncrements: 'extraIncrement',
  overcountedStalls: 'overCount',
  lostJobs: 'lostJob',
  deadLetterEscapes: 'deadLetterEscape',
};

/** The audit's counts for the one job, against the moves the two sweeps recorded. */
export function auditJob(facts: JobFacts, moves: number, stalledBefore: number, maxStalled: number): AuditCounts {
  const snapshot = blankSnapshot(1, stalledBefore);
  snapshot.inPending[1] = facts.pendingEntries;
  snapshot.inActive[1] = facts.inActive ? 1 : 0;
  snapshot.activeExpired[1] = facts.activeExpired ? 1 : 0;
  snapshot.inDead[1] = facts.inDead ? 1 : 0;
  snapshot.stalled[1] = facts.stalled ?? Number.NaN;
  snapshot.state[1] = stateCode(facts.state);
  return auditJobs(snapshot, Uint32Array.of(0, moves), { maxStalled });
}

/**
 * The class of an outcome: `clean`, or the anomalies the audit found, joined in the audit's order
 * (`duplicate`, `lostIncrement`, `duplicateAndLostIncrement`, `duplicateAndOverCount`, …).
 */
export function outcomeClass(counts: AuditCounts): string {
  const words: string[] = [];
  for (const name of ANOMALIES) {
    if ((counts[name] ?? 0) === 0) continue;
    const word = DUPLICATE.includes(name) ? 'duplicate' : (WORDS[name] ?? name);
    if (!words.includes(word)) words.push(word);
  }
  if (words.length === 0) return CLEAN;
  return words.map((word, i) => (i === 0 ? word : `${word.charAt(0).toUpperCase()}${word.slice(1)}`)).join('And');
}

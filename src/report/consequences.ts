/**
 * The report's part for faults, workers, cycles and the observer: which runs they apply to, the
 * JSON fields that appear where they apply, and a plain-words line on what the faults did. Their
 * table columns sit with the others in report.ts.
 */
import type { FailoverFigures, FaultName, LapsedLockFigures, RunResult } from '../shared/model.js';
import { groupThousands, plural } from '../shared/text.js';

export const hasFaults = (r: RunResult): boolean => r.faultCounts !== undefined || r.consequences.notes.length > 0;
export const hasWorkers = (r: RunResult): boolean => r.consequences.workers > 0;
export const hasCycles = (r: RunResult): boolean => r.consequences.cycles > 1;
export const observed = (r: RunResult): boolean => r.samples !== undefined;

/**
 * The JSON fields beyond the plain race: always the reconciliation and escapes, and the worker and
 * observer figures (null where the run had no workers, no observer: not measured, not 0); the
 * fault figures where faults apply.
 */
export interface ConsequenceJson {
  readonly cycles: number;
  readonly unacknowledgedMoves: number;
  /** Null where the queue dead-letters nothing by its stalls (a library with no stall count). */
  readonly deadLetterEscapes: number | null;
  readonly noscriptFallbacks: number;
  /** The same of the workers', the re-leaser's and the observer's script calls: null without them. */
  readonly workerNoscriptFallbacks: number | null;
  readonly releaserNoscriptFallbacks: number | null;
  readonly observerNoscriptFallbacks: number | null;
  /** With --fault: */
  readonly faults?: readonly FaultName[];
  readonly faultNotes?: readonly string[];
  readonly crashes?: number;
  readonly lostReplies?: number;
  readonly reconnects?: number;
  readonly scriptFlushes?: number;
  readonly clientKills?: number;
  /** Workers: 0 without --workers, and then what they measure is null. */
  readonly workers: number;
  readonly executions: number | null;
  readonly doubleExecutions: number | null;
  /** The observer's figures: null without --observe. */
  readonly samples: number | null;
  readonly windowInNeither: number | null;
  readonly windowInBoth: number | null;
}

export function consequenceFields(run: RunResult): ConsequenceJson {
  const counts = run.faultCounts;
  return {
    cycles: run.consequences.cycles,
    unacknowledgedMoves: run.unacknowledgedMoves,
    deadLetterEscapes: run.deadLetterEscapes,
    noscriptFallbacks: run.noscriptFallbacks,
    workerNoscriptFallbacks: run.workerNoscriptFallbacks ?? null,
    releaserNoscriptFallbacks: run.releaserNoscriptFallbacks ?? null,
    observerNoscriptFallbacks: run.observerNoscriptFallbacks ?? null,
    ...(hasFaults(run)
      ? {
          faults: run.consequences.faults,
          faultNotes: run.consequences.notes,
          crashes: counts?.crashes ?? 0,
          lostReplies: counts?.lostReplies ?? 0,
          reconnects: counts?.reconnects ?? 0,
          scriptFlushes: counts?.scriptFlushes ?? 0,
          clientKills: counts?.clientKills ?? 0,
        }
      : {}),
    workers: run.consequences.workers,
    executions: run.executions ?? null,
    doubleExecutions: run.doubleExecutions,
    samples: run.samples ?? null,
    windowInNeither: run.windowInNeither,
    windowInBoth: run.windowInBoth,
  };
}

/**
 * What the faults did to one run, and why a requested fault was left out, in plain words. `label`
 * names the run (its mode by default; a trial's lines add the trial).
 */
export function consequenceLines(run: RunResult, label: string = run.mode): string[] {
  const lines: string[] = [];
  const counts = run.faultCounts;
  if (counts) {
    const parts: string[] = [];
    if (run.consequences.faults.includes('sweeper-crash'))
      parts.push(counts.crashes > 0 ? 'one sweeper crashed at its crash point' : 'no sweeper reached its crash point');
    if (run.consequences.faults.includes('script-flush'))
      parts.push(`the script cache was flushed ${plural(counts.scriptFlushes, 'time')} (${fallbacksPhrase(run)})`);
    if (run.consequences.faults.includes('client-kill')) {
      const killed = counts.clientKills === 1 ? '1 sweeper connection was killed' : `${plural(counts.clientKills, 'sweeper connection')} were killed`;
      parts.push(`${killed} (${plural(counts.reconnects, 'reconnect')}, ${plural(counts.lostReplies, 'reply', 'replies')} lost)`);
    }
    const unacked =
      run.unacknowledgedMoves > 0
        ? `; ${run.unacknowledgedMoves === 1 ? '1 move ran without its reply' : `${plural(run.unacknowledgedMoves, 'move')} ran without their reply`} reaching the sweeper (reconciled from the server, not anomalies)`
        : '';
    if (run.failover) parts.push(failoverLine(run.failover));
    if (run.lapsedLock) parts.push(lapsedLockLine(run.lapsedLock));
    lines.push(`  faults on ${label}: ${parts.join(', ')}${unacked}.`);
  }
  const helpers = helperFallbacks(run);
  // Under script-flush the faults line says them; elsewhere (the scripts missing on a promoted
  // replica, a cache someone else emptied) only this line does: the table's row is the sweepers'.
  if (helpers > 0 && !run.consequences.faults.includes('script-flush')) {
    const why = run.failover ? ' (the promoted replica held none of the scripts the run had loaded on the primary)' : '';
    lines.push(`  scripts on ${label}: ${fallbacksPhrase(run)}${why}.`);
  }
  for (const note of run.consequences.notes) lines.push(`  note: ${note}.`);
  return lines;
}

/** The workers', the re-leaser's and the observer's NOSCRIPT fallbacks together: 0 where none of them ran. */
function helperFallbacks(run: Pick<RunResult, 'workerNoscriptFallbacks' | 'releaserNoscriptFallbacks' | 'observerNoscriptFallbacks'>): number {
  return (run.workerNoscriptFallbacks ?? 0) + (run.releaserNoscriptFallbacks ?? 0) + (run.observerNoscriptFallbacks ?? 0);
}

/**
 * The NOSCRIPT fallbacks to EVAL in a phrase: the sweepers' alone, or, where the workers, the
 * re-leaser or the observer sent scripts too (a flush reaches their connections as much), the sum
 * and each one's own count. Each is a NOSCRIPT reply that made its caller re-send the script as
 * EVAL, not an EVAL the server is known to have run: one sent on a connection killed meanwhile
 * (client-kill, sweeper-crash) may never have reached it.
 */
export function fallbacksPhrase(
  run: Pick<RunResult, 'noscriptFallbacks' | 'workerNoscriptFallbacks' | 'releaserNoscriptFallbacks' | 'observerNoscriptFallbacks'>,
): string {
  const present: { count: number; who: string }[] = [];
  for (const [count, who] of [
    [run.workerNoscriptFallbacks, 'the workers'],
    [run.releaserNoscriptFallbacks, 'the re-leaser'],
    [run.observerNoscriptFallbacks, 'the observer'],
  ] as const) {
    if (count !== undefined) present.push({ count, who });
  }
  if (present.length === 0) return `${plural(run.noscriptFallbacks, 'NOSCRIPT fallback')} to EVAL`;
  const total = present.reduce((sum, { count }) => sum + count, run.noscriptFallbacks);
  const parts = [`${groupThousands(run.noscriptFallbacks)} by the sweepers`, ...present.map(({ count, who }) => `${groupThousands(count)} by ${who}`)];
  return `${plural(total, 'NOSCRIPT fallback')} to EVAL: ${parts.join(', ')}`;
}

/** --fault lapsed-lock in plain words: the jobs, what the check did, the second runs and the refused completions. */
function lapsedLockLine(f: LapsedLockFigures): string {
  const accepted = f.lateCompletionsAccepted > 0 ? `, yet accepted ${plural(f.lateCompletionsAccepted, 'late completion')} (a job completed twice)` : '';
  const refusal = f.refusal === null ? '' : ` ("${f.refusal}")`;
  const moves = f.recovered === f.lapsedJobs ? `moved ${plural(f.recovered, 'job')} back to wait` : `made ${plural(f.recovered, 'move')} of them back to wait`;
  const again =
    f.secondRunsRefused > 0
      ? `, and refused the second worker's completion of ${plural(f.secondRunsRefused, 'job')} it had taken twice (another take held the lock)`
      : '';
  return `${plural(f.lapsedJobs, 'job')} whose locks lapsed while their worker still ran them: the check ${moves}, ${f.executedTwice} of them executed more than once (the handlers' own counts), and the library refused ${plural(f.lateCompletionsRefused, 'late completion')} of the first worker${refusal}${accepted}${again}`;
}

/** WAIT's price: the companion run without it, under the same schedule, beside this one. */
function withoutWait(f: FailoverFigures): string {
  const w = f.withoutWait;
  if (!w) return '';
  return `; without WAIT, the same schedule on a fresh pair run just ${w.order} swept ${groupThousands(w.jobsPerSec)} jobs/s and lost ${plural(w.ackedMovesLost, 'acknowledged move')}`;
}

/** Why the drill's calls before the cut outnumber --failover-after: calls in flight at the K-th were answered before the link could be cut. */
export function inFlightNote(f: Pick<FailoverFigures, 'after' | 'callsBeforeCut'>): string {
  return `(--failover-after ${f.after}, and ${f.callsBeforeCut - f.after} more in flight then)`;
}

/**
 * WAIT's replies in a phrase: how many were sent and what each reported, e.g. "sent 44 times: 4
 * reached none, 40 reached 1 replica". Its own count of what it reached, not only its verdict: a
 * WAIT for 2 replicas that reached 1 timed out as much as one that reached none, and they say
 * different things.
 */
export function waitRepliesPhrase(replies: FailoverFigures['waitReplies']): string {
  const sent = replies.reduce((sum, reply) => sum + reply.waits, 0);
  const parts = replies.map(({ replicas, waits }) => `${groupThousands(waits)} reached ${replicas === 0 ? 'none' : plural(replicas, 'replica')}`);
  return `sent ${plural(sent, 'time')}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}

/** The failover drill in plain words: the loss, its prediction, and what WAIT does and does not promise. */
function failoverLine(f: FailoverFigures): string {
  const predicted = f.predictedLoss === null ? '' : ` (predicted ${f.predictedLoss})`;
  const wait = f.waitReplicas
    ? `; WAIT ${f.waitReplicas.replicas} ${f.waitReplicas.timeoutMs} ${waitRepliesPhrase(f.waitReplies)}; it timed out ${plural(f.waitTimeouts, 'time')}, leaving ${plural(f.unconfirmedMoves, 'move')} unconfirmed (WAIT says a replica received a write, not that the write survives a failover, nor does it undo a write it could not confirm)${withoutWait(f)}`
    : '';
  const lag = f.replicaLagMs > 0 ? ` (held ${f.replicaLagMs} ms each way)` : '';
  // The drill's own counts: cut before K calls only when the sweeps ran dry first, after more when
  // calls in flight at the K-th were answered before the link could be cut; the same of M after it.
  const cut =
    f.callsBeforeCut < f.after
      ? `once the sweeps had run dry, after ${plural(f.callsBeforeCut, 'answered sweep call')} (fewer than --failover-after ${f.after})`
      : f.callsBeforeCut > f.after
        ? `after ${plural(f.callsBeforeCut, 'answered sweep call')} ${inFlightNote(f)}`
        : `after ${plural(f.after, 'answered sweep call')}`;
  const killed =
    f.callsAfterCut < f.calls
      ? `once the sweeps had run dry, ${plural(f.callsAfterCut, 'call')} later (fewer than --failover-calls ${f.calls})`
      : `${plural(f.callsAfterCut, 'call')} later`;
  // The workers' own records, not the promoted replica's: its `runs` counters lost the old primary's increments.
  const runTwice =
    f.jobsRunTwice === null ? '' : `; by the workers' own records, jobs run twice (taken before the failover and again after it) ${f.jobsRunTwice}`;
  return `the replica's link${lag} was cut ${cut} and the primary killed ${killed}${f.promotedBy === 'sentinel' ? ', the replica promoted by Sentinel' : ''}; on the promoted replica: acknowledged moves lost ${f.ackedMovesLost}${predicted}, jobs recovered twice ${f.jobsRecoveredTwice}, counter increments lost ${f.counterIncrementsLost}${runTwice}${wait}`;
}

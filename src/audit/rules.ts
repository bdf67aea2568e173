/**
 * The audit's arithmetic: pure functions over what was read back from the server (a JobSnapshot)
 * and what the sweepers recorded (moves per job). No I/O here, so every rule is tested directly.
 */
import { ANOMALIES, type Anomaly, type AuditCounts } from '../shared/model.js';
import { doubleExecutions, isDeadLetterEscape, isDeadLetteredEarly, type JobDoubt, overcount, placement, reconcileGap } from './consequence-rules.js';
import { STATE_CODES, excess } from './job-state.js';

/** Per-job facts read from the server, indexed by job id (1..jobs; index 0 is unused). */
export interface JobSnapshot {
  readonly jobs: number;
  readonly stalledBefore: number;
  /** Occurrences of the id in the pending list. */
  readonly inPending: Uint32Array;
  readonly inActive: Uint8Array;
  /** 1 where the job is in active with a lease deadline at or before the audit's server time. */
  readonly activeExpired: Uint8Array;
  readonly inDead: Uint8Array;
  /** The hash's `stalled` field; NaN where the hash has none. */
  readonly stalled: Float64Array;
  readonly state: Uint8Array;
  /** 1 where a worker's running list holds the job (absent: no workers). */
  readonly inRunning?: Uint8Array;
  /** The hash's `runs` field: times a worker executed the job (absent: no workers). */
  readonly runs?: Float64Array;
  /** Jobs seeded with valid leases, ids jobs+1 … jobs+live; the arrays cover them too. */
  readonly live?: number;
  /** Entries of pending, active and dead that name no job of the run (not an id as seeding writes one, or past the last). */
  readonly strayEntries?: number;
}

/**
 * A snapshot of `jobs` expired jobs (and `live` more after them) with nothing read yet: in no
 * place, no hash. Readers fill it in.
 */
export function blankSnapshot(jobs: number, stalledBefore: number, live = 0): JobSnapshot {
  const n = jobs + live + 1;
  return {
    jobs,
    stalledBefore,
    inPending: new Uint32Array(n),
    inActive: new Uint8Array(n),
    activeExpired: new Uint8Array(n),
    inDead: new Uint8Array(n),
    stalled: new Float64Array(n).fill(Number.NaN),
    state: new Uint8Array(n),
    live,
  };
}

/** What the audit needs beyond the snapshot and the moves, when the run had faults or cycles. */
export interface AuditContext {
  /** Sweep calls a fault left unanswered: moves the tool never heard of may have happened. */
  readonly doubts?: AuditDoubts;
  /** For dead-letter escapes; without it none are counted. */
  readonly maxStalled?: number;
  /**
   * Cycles in which each job stalled, when the run knows them (--cycles: the seeded stall plus one
   * per re-lease). Without it every job stalled once, and forgotten stalls are not measured.
   */
  readonly trueStalls?: Uint32Array;
}

/** The calls in doubt (CallDoubts in model.ts) as the audit reads them, with what the mode's moves leave behind. */
export interface AuditDoubts {
  /** Per job id: calls lost while a round-trip sweeper held the job. */
  readonly held: Uint32Array;
  /** One-call modes: the jobs the unanswered calls may have moved in all (calls × --batch); 0 for round trips. */
  readonly blindMoves: number;
  /** The mode sweeps in one call per batch, whose jobs the server chooses (no job is held). */
  readonly oneCall: boolean;
  /** The mode is a built-in strategy: one entry in pending per move, the stall counted with it (JobDoubt). */
  readonly trusted: boolean;
}

/** The per-job counts of CallDoubts.held, sized for a run's `size` ids. */
export function heldCounts(held: readonly number[], size: number): Uint32Array {
  const counts = new Uint32Array(size);
  for (const id of held) if (id < size) counts[id] = (counts[id] ?? 0) + 1;
  return counts;
}

/**
 * Moves not reflected in the counter (positive: increments lost) or counter rises without a move
 * (negative: increments from nowhere). Kept signed so one cannot hide the other in a sum.
 */
export function incrementGap(moves: number, stalled: number, stalledBefore: number): number {
  const counted = Number.isNaN(stalled) ? 0 : stalled - stalledBefore;
  return moves - counted;
}

/**
 * Stalls a job truly had (beyond stalled-before) that its counter does not show: 0 when the counter
 * rose at least as often as the job stalled.
 */
export function forgottenStalls(trueStalls: number, stalled: number, stalledBefore: number): number {
  const counted = Number.isNaN(stalled) ? 0 : stalled - stalledBefore;
  return trueStalls > counted ? trueStalls - counted : 0;
}

/** How many of active, pending and dead hold the job. */
export function placeCount(inActive: number, inPending: number, inDead: number): number {
  return (inActive > 0 ? 1 : 0) + (inPending > 0 ? 1 : 0) + (inDead > 0 ? 1 : 0);
}

/**
 * A job is misplaced when it stands in more than one place, or in one place its `state` does not
 * name. A job in no place is lost, not misplaced.
 */
export function isMisplaced(inActive: number, inPending: number, inDead: number, state: number): boolean {
  const places = placeCount(inActive, inPending, inDead);
  if (places === 0) return false;
  if (places > 1) return true;
  if (inActive > 0) return state !== STATE_CODES.active;
  if (inPending > 0) return state !== STATE_CODES.pending;
  return state !== STATE_CODES.dead;
}

/**
 * A live job was stolen when a sweeper says it moved it, or the server shows it touched: out of
 * active, in pending or dead (where it will run again beside its busy worker, or never), or its
 * counter changed.
 */
export function isStolen(moves: number, inActive: number, stalled: number, stalledBefore: number, inPending = 0, inDead = 0): boolean {
  return moves > 0 || inActive === 0 || inPending > 0 || inDead > 0 || (!Number.isNaN(stalled) && stalled !== stalledBefore);
}

/**
 * An expired job left unreclaimed: still in active with its lease expired, or with a lease that
 * something pushed into the future while nothing moved the job, counted its stall, or gave it to a
 * worker (a sweep that renews leases instead of recovering them hides the job for as long). Pure.
 */
export function isUnreclaimed(
  job: { readonly inActive: number; readonly activeExpired: number; readonly inPending: number; readonly inDead: number; readonly inRunning: number },
  moved: number,
  stalled: number,
  stalledBefore: number,
): boolean {
  if (job.activeExpired > 0) return true;
  const untouched = moved === 0 && (Number.isNaN(stalled) || stalled === stalledBefore);
  return job.inActive > 0 && job.inPending === 0 && job.inDead === 0 && job.inRunning === 0 && untouched;
}

/**
 * A strategy's record disagrees with the server about a job when it says it moved the job yet the
 * job is still in active, or it says nothing yet the job left active; and, where every move leaves
 * its entry behind (`entries` given: a list pending that nothing consumes), when it says it moved
 * the job more times than the job stands in pending and dead together (one id returned twice by
 * one call, say). `moves` counts the moves the audit reconciled from the server too: a call whose
 * reply a killed connection lost moved its jobs all the same.
 */
export function recordDisagrees(moves: number, inActive: number, entries?: number): boolean {
  return moves > 0 === inActive > 0 || (entries !== undefined && moves > entries);
}

export interface AuditOptions {
  /** Compare the record with the server job by job (the script mode's returns are its only record). */
  readonly crossCheck?: boolean;
  /** Returned values that name no job of the run (not a job id, or an id above its jobs): each one a disagreement. */
  readonly strayIds?: number;
  /**
   * Every move leaves one entry in pending or dead until the audit reads it: a list pending, no
   * workers or re-leaser taking entries out, no failover losing them. The cross-check then also
   * holds the record to the entries.
   */
  readonly movesLeaveEntries?: boolean;
  /**
   * Across a failover with workers: their own count of takes beyond each job's first
   * (takesBeyondFirst), the run's double executions. The promoted replica's `runs` counters lack
   * every increment the old primary made and never sent it, so Σ max(0, runs − 1) would undercount.
   * Null: a failover without workers, where nothing counts them.
   */
  readonly takesBeyondFirst?: number | null;
}

/** The figures every audit counts alike, job by job: the main one here and each library's (numbers: a tally measures what it is given). */
type TalliedFigures = NonNullablePick<
  AuditCounts,
  | 'recoveries'
  | 'doubleRecoveries'
  | 'jobsRecoveredMoreThanOnce'
  | 'duplicatePending'
  | 'mostPendingEntries'
  | 'lostIncrements'
  | 'extraIncrements'
  | 'overcountedStalls'
  | 'overcountedStallCount'
>;

type NonNullablePick<T, K extends keyof T> = { readonly [P in K]: NonNullable<T[P]> };

/**
 * Counts, a job at a time, what every audit reads the same way: the moves the sweepers recorded
 * against the entries the job has in the list they push onto, and, where the layout keeps a stall
 * counter, that counter against the moves and against the stalls the job really had. auditJobs and
 * the libraries' audits (src/libraries/) add to it; `figures` is their share of AuditCounts.
 */
export class JobTally {
  private readonly counts: { -readonly [K in keyof TalliedFigures]: TalliedFigures[K] } = {
    recoveries: 0,
    doubleRecoveries: 0,
    jobsRecoveredMoreThanOnce: 0,
    duplicatePending: 0,
    mostPendingEntries: 0,
    lostIncrements: 0,
    extraIncrements: 0,
    overcountedStalls: 0,
    overcountedStallCount: 0,
  };

  /** A job the sweepers recorded moving `moved` times, and which stands `entries` times in the list they push onto. */
  moves(moved: number, entries: number): void {
    const c = this.counts;
    c.recoveries += moved;
    c.doubleRecoveries += excess(moved);
    if (moved > 1) c.jobsRecoveredMoreThanOnce++;
    c.duplicatePending += excess(entries);
    if (entries > c.mostPendingEntries) c.mostPendingEntries = entries;
  }

  /** The counter's gap from incrementGap: positive, increments lost; negative, increments from nowhere. */
  counterGap(gap: number): void {
    if (gap > 0) this.counts.lostIncrements += gap;
    else this.counts.extraIncrements -= gap;
  }

  /** Stalls the counter shows beyond the job's real ones, from overcount. */
  overcount(over: number): void {
    if (over <= 0) return;
    this.counts.overcountedStalls++;
    this.counts.overcountedStallCount += over;
  }

  get figures(): TalliedFigures {
    return { ...this.counts };
  }
}

export function auditJobs(snapshot: JobSnapshot, moves: Uint32Array, context: AuditContext & AuditOptions = {}): AuditCounts {
  const tally = new JobTally();
  let forgottenJobs = 0;
  let forgottenCount = 0;
  let lostJobs = 0;
  let misplaced = 0;
  let unreclaimed = 0;
  let doubleExecutionCount = 0;
  let deadLetterEscapes = 0;
  let deadLetteredEarly = 0;
  let unacknowledgedMoves = 0;
  let misreported = context.strayIds ?? 0;
  const doubts = context.doubts;
  // The jobs the one-call mode's unanswered calls may still have moved, spent as the audit finds them.
  let blindMoves = doubts?.blindMoves ?? 0;

  for (let id = 1; id <= snapshot.jobs; id++) {
    const moved = moves[id] ?? 0;
    const inPending = snapshot.inPending[id] ?? 0;
    const inActive = snapshot.inActive[id] ?? 0;
    const inDead = snapshot.inDead[id] ?? 0;

    const gap = incrementGap(moved, snapshot.stalled[id] ?? Number.NaN, snapshot.stalledBefore);
    // Without --cycles each job stalled once: the expired lease it was seeded with.
    const stalls = context.trueStalls?.[id] ?? 1;
    const doubt: JobDoubt | undefined = doubts && {
      allowance: doubts.oneCall ? Math.min(blindMoves, Math.max(0, stalls - moved)) : (doubts.held[id] ?? 0),
      trusted: doubts.trusted,
      holds: !doubts.oneCall,
    };
    const runs = snapshot.runs?.[id] ?? 0;
    const place = placement(
      inActive,
      inPending,
      inDead,
      snapshot.inRunning?.[id] ?? 0,
      Number.isNaN(runs) ? 0 : runs,
      snapshot.state[id] ?? STATE_CODES.missing,
    );
    // Placed: in pending or dead, or taken by a worker (running, or run and done).
    const reconciled = reconcileGap(gap, { inActive, placed: place !== 'lost', moved, entries: inPending }, doubt);
    if (doubts?.oneCall) blindMoves -= reconciled.unacknowledged;
    unacknowledgedMoves += reconciled.unacknowledged;
    // Moves the server shows that no sweeper heard back are recoveries all the same.
    tally.moves(moved + reconciled.unacknowledged, inPending);
    tally.counterGap(reconciled.gap);
    if (context.crossCheck && recordDisagrees(moved + reconciled.unacknowledged, inActive, context.movesLeaveEntries ? inPending + inDead : undefined))
      misreported++;
    if (context.trueStalls) {
      const forgotten = forgottenStalls(context.trueStalls[id] ?? 1, snapshot.stalled[id] ?? Number.NaN, snapshot.stalledBefore);
      if (forgotten > 0) {
        forgottenJobs++;
        forgottenCount += forgotten;
      }
    }

    if (place === 'lost') lostJobs++;
    else if (place === 'misplaced') misplaced++;
    doubleExecutionCount += doubleExecutions(runs);
    tally.overcount(overcount(stalls, snapshot.stalled[id] ?? Number.NaN, snapshot.stalledBefore));
    const job = { inActive, activeExpired: snapshot.activeExpired[id] ?? 0, inPending, inDead, inRunning: snapshot.inRunning?.[id] ?? 0 };
    const left = isUnreclaimed(job, moved + reconciled.unacknowledged, snapshot.stalled[id] ?? Number.NaN, snapshot.stalledBefore);
    if (left) unreclaimed++;
    if (context.maxStalled !== undefined) {
      const facts = { inDead, runs: Number.isNaN(runs) ? 0 : runs, unreclaimed: left };
      if (isDeadLetterEscape(stalls, snapshot.stalledBefore, context.maxStalled, facts)) deadLetterEscapes++;
      if (isDeadLetteredEarly(stalls, snapshot.stalledBefore, context.maxStalled, inDead)) deadLetteredEarly++;
    }
  }

  let stolenLeases = 0;
  const total = snapshot.jobs + (snapshot.live ?? 0);
  for (let id = snapshot.jobs + 1; id <= total; id++) {
    const stalled = snapshot.stalled[id] ?? Number.NaN;
    const [inActive, inPending, inDead] = [snapshot.inActive[id] ?? 0, snapshot.inPending[id] ?? 0, snapshot.inDead[id] ?? 0];
    // Under the cross-check (a user's script, whose returns are its word only) the server alone
    // says whether a live job was touched: a live id returned for a job the server shows untouched
    // is a misreport, counted below, not a lease stolen.
    const said = context.crossCheck ? 0 : (moves[id] ?? 0);
    if (isStolen(said, inActive, stalled, snapshot.stalledBefore, inPending, inDead)) stolenLeases++;
    if (context.crossCheck && recordDisagrees(moves[id] ?? 0, inActive, context.movesLeaveEntries ? inPending + inDead : undefined)) misreported++;
  }

  const figures = tally.figures;
  return {
    ...figures,
    duplicatePendingAtEnd: figures.duplicatePending,
    forgottenStalls: context.trueStalls ? forgottenJobs : null,
    forgottenStallCount: context.trueStalls ? forgottenCount : null,
    lostJobs,
    misplaced,
    unreclaimed,
    // Only workers write `runs`; without them nothing was executed, so nothing was measured.
    doubleExecutions: context.takesBeyondFirst !== undefined ? context.takesBeyondFirst : snapshot.runs ? doubleExecutionCount : null,
    deadLetterEscapes,
    deadLetteredEarly,
    windowInNeither: null,
    windowInBoth: null,
    unacknowledgedMoves,
    stolenLeases: (snapshot.live ?? 0) > 0 ? stolenLeases : null,
    misreported: context.crossCheck ? misreported : null,
    strayEntries: snapshot.strayEntries ?? 0,
  };
}

/** Clean: every anomaly measured is 0 (one not measured, null, counts for nothing either way). */
export function isClean(counts: Pick<AuditCounts, Anomaly>): boolean {
  return ANOMALIES.every((name) => (counts[name] ?? 0) === 0);
}

/** The sum of a run's anomaly figures (one not measured counts as none): 0 exactly when the run is clean. */
export function anomalyTotal(counts: Pick<AuditCounts, (typeof ANOMALIES)[number]>): number {
  return ANOMALIES.reduce((sum, name) => sum + (counts[name] ?? 0), 0);
}

/**
 * Sums each sweeper's record into moves per job id 1..jobs; `beyond` counts the recorded ids above
 * `jobs`, which name no job of the run: a script that returns one reports a move nobody made.
 */
export function movesPerJob(jobs: number, records: Iterable<{ countInto(counts: Uint32Array): number }>): { moves: Uint32Array; beyond: number } {
  const moves = new Uint32Array(jobs + 1);
  let beyond = 0;
  for (const record of records) beyond += record.countInto(moves);
  return { moves, beyond };
}

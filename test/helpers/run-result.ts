/** Whole RunResults (a clean atomic run unless told otherwise) and ModeRuns for pure tests of the report and the memory guard. */
import { figureSources } from '../../src/audit/sources.js';
import { FAILOVER_SOURCES } from '../../src/race/failover-drill.js';
import { NO_CONSEQUENCES, type FailoverFigures, type ModeRun, type RunResult } from '../../src/shared/model.js';

/** The server a pure test's report names: nothing is asked of it. */
export const SERVER = { kind: 'redis' as const, version: '7.0.15', url: 'redis://127.0.0.1:1' };

export function runResult(over: Partial<RunResult> = {}): RunResult {
  const run: Omit<RunResult, 'sources' | 'example'> = {
    mode: 'atomic',
    queue: 'race-test',
    sweepers: 2,
    jobs: 10,
    batch: 5,
    maxStalled: 3,
    stalledBefore: 0,
    recoveries: 10,
    doubleRecoveries: 0,
    duplicatePending: 0,
    lostIncrements: 0,
    extraIncrements: 0,
    lostJobs: 0,
    misplaced: 0,
    unreclaimed: 0,
    doubleExecutions: 0,
    deadLetterEscapes: 0,
    overcountedStalls: 0,
    overcountedStallCount: 0,
    deadLetteredEarly: 0,
    windowInNeither: 0,
    windowInBoth: 0,
    unacknowledgedMoves: 0,
    stolenLeases: 0,
    misreported: 0,
    strayEntries: 0,
    jobsRecoveredMoreThanOnce: 0,
    mostPendingEntries: 0,
    wallMs: 10,
    jobsPerSec: 1000,
    roundTrips: 4,
    sweeps: 4,
    cutShort: false,
    consequences: NO_CONSEQUENCES,
    noscriptFallbacks: 0,
    workerNoscriptFallbacks: undefined,
    releaserNoscriptFallbacks: undefined,
    observerNoscriptFallbacks: undefined,
    samples: undefined,
    faultCounts: undefined,
    executions: undefined,
    trial: 1,
    pending: 'list',
    live: 0,
    maxSweeps: 10,
    processes: false,
    retries: 0,
    callMsP50: 1,
    callMsP99: 2,
    callMsMax: 3,
    serverCallMsP99: null,
    forgottenStalls: null,
    forgottenStallCount: null,
    ...over,
    duplicatePendingAtEnd: over.duplicatePendingAtEnd ?? over.duplicatePending ?? 0,
  };
  return { ...run, sources: over.sources ?? figureSources(run, run.consequences.cycles), example: over.example ?? null };
}

/** A failover drill's figures with every field set (a WAIT, lag, a kept replica, the run without WAIT; no workers), unless told otherwise. */
export function failoverFigures(over: Partial<FailoverFigures> = {}): FailoverFigures {
  return {
    after: 5,
    calls: 2,
    ackedMovesLost: 20,
    predictedLoss: 20,
    jobsRecoveredTwice: 20,
    counterIncrementsLost: 20,
    jobsRunTwice: null,
    callsBeforeCut: 5,
    callsAfterCut: 2,
    unconfirmedMoves: 0,
    waitTimeouts: 0,
    waitReplies: [{ replicas: 1, waits: 7 }],
    waitReplicas: { replicas: 1, timeoutMs: 500 },
    replicaLagMs: 20,
    keptServer: { url: 'redis://127.0.0.1:2', pid: 2 },
    withoutWait: { jobsPerSec: 1000, ackedMovesLost: 20, order: 'before' },
    promotedBy: 'tool',
    sources: FAILOVER_SOURCES,
    ...over,
  };
}

/** One mode's run as the plan hands it on (atomic, 6,000 jobs and 600 live), for what reads a plan without racing it: the memory guard. */
export function modeRun(overrides: Partial<ModeRun> = {}): ModeRun {
  return {
    mode: 'atomic',
    queue: 'race-units',
    jobs: 6000,
    live: 600,
    sweepers: 2,
    batch: 100,
    maxStalled: 3,
    stalledBefore: 0,
    probeDelayMs: 0,
    keep: false,
    pending: 'list',
    ...overrides,
  };
}

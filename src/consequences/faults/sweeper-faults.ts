/**
 * The fault hooks every sweeping strategy calls at its named points, and the run-wide plan behind
 * them: which sweeper crashes (the first to reach its crash point, once per run), which connection
 * ids the chaos connection may kill, and what a sweeper does when its connection went away.
 *
 * Where each strategy calls the hooks:
 * - loop (and claim): `afterClaim()` right after its first ZREM that returned 1, before the push;
 * - atomic: `afterSend()` right after its EVALSHA was sent, before awaiting the reply;
 * - watch: `afterSend()` right after its EXEC was sent; function: right after its FCALL was sent.
 */
import type { Redis } from 'ioredis';
import { once } from 'node:events';
import { serverError } from '../../shared/errors.js';
import { timeoutSignal } from '../../shared/interrupt.js';
import type { CallDoubts, FaultName, FaultCounts } from '../../shared/model.js';

export interface SweeperFaults {
  /**
   * Right after a command that took a job out of `active` for this sweeper alone, before the job
   * is pushed on. When this sweeper is the one to crash, its socket is destroyed and this throws.
   */
  afterClaim(): void;
  /**
   * Right after the one command that does (or commits) a whole sweep was sent, before its reply.
   * Never throws: when this sweeper crashes here, the awaited reply fails instead.
   */
  afterSend(): void;
}

class SweeperCrashed extends Error {
  constructor(index: number) {
    super(`sweeper ${index + 1} crashed (fault injected)`);
    this.name = 'SweeperCrashed';
  }
}

/** What ioredis says when a reply can no longer come, or a command could not be sent at all. */
const LOST_CONNECTION = /Connection is closed|max retries per request|Stream isn't writeable|ECONNRESET|EPIPE/i;
const NOT_SENT = /Stream isn't writeable/i;

function isConnectionLoss(err: unknown): boolean {
  return err instanceof SweeperCrashed || LOST_CONNECTION.test(String((err as { message?: unknown })?.message ?? err));
}

/** How long a killed sweeper may take to get its connection back before the run gives up. */
const RECONNECT_TIMEOUT_MS = 5000;
/** Reconnections one sweeper may need for a single recovery (each may be killed again). */
const RECOVERY_ATTEMPTS = 50;

export class FaultPlan {
  private crashArmed: boolean;
  private readonly reconnecting: boolean;
  private readonly crashedSweepers = new Set<number>();
  private readonly crashDoubted = new Set<number>();
  private readonly clientIds = new Map<number, number>();
  private lostReplies = 0;
  private reconnects = 0;
  private readonly held: number[] = [];
  private blindCalls = 0;

  constructor(
    readonly faults: readonly FaultName[],
    private readonly where: string,
  ) {
    this.crashArmed = faults.includes('sweeper-crash');
    this.reconnecting = faults.includes('client-kill');
    this.crashDone = this.crashArmed ? new Promise<void>((resolve) => (this.crashed = resolve)) : Promise.resolve();
  }

  get counts(): FaultCounts {
    return { crashes: this.crashedSweepers.size, lostReplies: this.lostReplies, reconnects: this.reconnects };
  }

  /**
   * The calls that may have run without their reply reaching the tool (a lost reply, a crash), for
   * the audit to reconcile (reconcileGap): the job a round-trip sweeper held at each, and how many
   * held none (a one-call sweep's, whose jobs the server chose; a round trip's before it held one).
   */
  get doubts(): CallDoubts {
    return { held: [...this.held], blindCalls: this.blindCalls };
  }

  private doubt(heldJob: number): void {
    if (heldJob > 0) this.held.push(heldJob);
    else this.blindCalls++;
  }

  /** The server-side ids of the live sweeper connections: the only ones the chaos connection kills. */
  liveClientIds(): number[] {
    return [...this.clientIds.values()];
  }

  /**
   * Settles once the crash has happened, at once where none is planned. The chaos connection's
   * kills wait for it (sweeper-crash beside client-kill): a kill just before the crash cut the
   * connection its crashing call went out on, and the server never ran that call (one sweeper, 300
   * jobs: no job moved, in every run, where the crash alone leaves its batch moved).
   */
  readonly crashDone: Promise<void>;
  private crashed: () => void = () => {};

  /** Learns a sweeper connection's id; needed (again after each reconnect) only when it may be killed. */
  async register(index: number, redis: Redis): Promise<void> {
    if (!this.reconnecting || this.crashedSweepers.has(index)) return;
    this.clientIds.set(index, Number(await redis.client('ID')));
  }

  forSweeper(index: number, redis: Redis): SweeperFaults {
    return {
      afterClaim: () => {
        if (this.crashHere(index, redis)) throw new SweeperCrashed(index);
      },
      afterSend: () => {
        this.crashHere(index, redis);
      },
    };
  }

  /**
   * A sweep failed. A crashed sweeper stops; with client-kill, a lost connection is waited back and
   * the sweeper goes on with a new sweep (the lost one is not re-sent); anything else is rethrown.
   */
  async recover(index: number, redis: Redis, err: unknown, signal: AbortSignal, heldJob = 0): Promise<'stop' | 'retry'> {
    if (this.crashedSweepers.has(index)) {
      // Its crash left one call in doubt; its later rounds (--cycles) fail on the closed
      // connection before sending anything.
      if (!this.crashDoubted.has(index)) {
        this.crashDoubted.add(index);
        this.doubt(heldJob);
      }
      return 'stop';
    }
    if (!this.reconnecting || !isConnectionLoss(err)) throw err;
    const sent = !NOT_SENT.test(String((err as { message?: unknown })?.message ?? err));
    if (sent) this.lostReplies++;
    // A call never sent changed nothing, but the job held may have had earlier commands answered
    // (a claim's ZREM and HINCRBY before its push): it stays in doubt all the same.
    if (sent || heldJob > 0) this.doubt(heldJob);
    for (let attempt = 0; attempt < RECOVERY_ATTEMPTS; attempt++) {
      signal.throwIfAborted();
      await this.untilReady(redis, signal);
      try {
        await this.register(index, redis);
        return 'retry';
      } catch (again) {
        if (!isConnectionLoss(again)) throw again;
      }
    }
    throw serverError(`a sweeper could not keep its connection to ${this.where} (killed ${RECOVERY_ATTEMPTS} times in a row)`);
  }

  private crashHere(index: number, redis: Redis): boolean {
    if (!this.crashArmed) return false;
    this.crashArmed = false;
    this.crashedSweepers.add(index);
    this.clientIds.delete(index);
    this.crashed();
    // Cut the socket with no QUIT, as a dying process would; disconnect() then stops reconnects.
    redis.stream.destroy();
    redis.disconnect();
    return true;
  }

  private async untilReady(redis: Redis, signal: AbortSignal): Promise<void> {
    if (redis.status === 'ready' && redis.stream?.writable) return;
    if (redis.status === 'end') throw serverError(`lost a sweeper's connection to ${this.where} for good`);
    const timeout = timeoutSignal(RECONNECT_TIMEOUT_MS);
    try {
      await once(redis, 'ready', { signal: AbortSignal.any([signal, timeout]) });
      this.reconnects++;
    } catch (err) {
      if (signal.aborted) throw err;
      throw serverError(`a sweeper's connection to ${this.where} did not come back within ${RECONNECT_TIMEOUT_MS} ms`);
    }
  }
}

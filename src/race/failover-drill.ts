/**
 * The failover drill's schedule, kept in the race itself. Every sweep call passes a gate: until
 * the K-th acknowledged call the sweepers run freely; then the gate lets no new call start, and
 * once none is in flight the replication link is cut. Exactly M calls are then let through
 * (each acknowledged by the primary and never replicated), after which, with none in flight, the
 * primary is killed and the replica promoted. The gate then opens for good and the race goes on
 * on the new primary until the sweeps find nothing. A sweep that finds nothing before the
 * failover waits for it and sweeps again: the jobs the failover brings back must be found.
 *
 * With --wait-replicas each call that moved jobs is followed by WAIT on the sweeper's own
 * connection; a call whose WAIT came back short of its replicas is unconfirmed, not acknowledged.
 *
 * With --workers, each step also waits (bounded, abortable) until the workers have taken every job
 * pending held and are idle: before the cut, so that every take and finish of the jobs moved
 * before it reaches the replica; before the kill, so that every job the calls after the cut moved
 * was handed to a worker on the old primary. Those handings die with it, and the jobs come back in
 * `active` on the promoted replica, to be recovered and handed to a worker again: for a one-call
 * sweep, exactly the jobs recovered twice are run twice (without WAIT, the predicted loss), and no
 * worker command is in flight when the connections are carried over.
 */
import type { Sweeper, SweeperFactory } from '../sweepers/sweeper.js';
import type { TakeSide } from '../consequences/workers.js';
import type { FailoverFigures, FailoverSettings } from '../shared/model.js';

/** Where each of a drill's figures comes from (docs/failover.md): the same for every run. */
export const FAILOVER_SOURCES: FailoverFigures['sources'] = {
  ackedMovesLost: 'server+sweepers',
  predictedLoss: 'sweepers',
  jobsRecoveredTwice: 'sweepers',
  counterIncrementsLost: 'server+sweepers',
  jobsRunTwice: 'workers',
};

export interface FailoverSteps {
  cut(signal: AbortSignal): Promise<void>;
  /** `promoted` is called once the new primary is promoted, before any connection of the run is carried to it. */
  failover(signal: AbortSignal, promoted: () => void): Promise<void>;
}

/** The run's workers as the drill waits for them: idle once pending is empty and no job is in hand. */
interface IdleWorkers {
  idle(signal: AbortSignal): Promise<void>;
}

type Phase = 'before' | 'draining' | 'cut' | 'after';
type Ticket = 'before' | 'window' | 'after';

/** The drill's own record of every move: before the failover (and of those, unconfirmed), and after. */
export interface FailoverTally {
  readonly before: Uint32Array;
  readonly unconfirmed: Uint32Array;
  readonly after: Uint32Array;
}

export class FailoverDrill {
  private phase: Phase = 'before';
  private acked = 0;
  private inFlight = 0;
  private permits: number;
  private live = 0;
  private waitingForFailover = 0;
  private stepping = false;
  private failure: unknown;
  private wake: () => void = () => {};
  private changed: Promise<void>;
  private predicted = 0;
  private windowCalls = 0;
  private unconfirmedMoves = 0;
  private waitTimeouts = 0;
  /** WAIT's own replies: how many WAITs came back with each count of replicas reached. */
  private readonly reached = new Map<number, number>();
  /** Turned 'after' as the replica is promoted, before any connection reaches it (see `side`). */
  private answering: TakeSide = 'before';
  private workers: IdleWorkers | undefined;
  private doing: string | undefined;
  readonly tally: FailoverTally;

  constructor(
    readonly settings: FailoverSettings,
    private readonly steps: FailoverSteps,
    tracked: number,
    private readonly signal: AbortSignal,
  ) {
    this.permits = settings.calls;
    this.changed = this.nextChange();
    // A stopped run wakes every sweeper at the gate, which then throws the abort.
    signal.addEventListener('abort', () => this.notify(), { once: true });
    this.tally = { before: new Uint32Array(tracked + 1), unconfirmed: new Uint32Array(tracked + 1), after: new Uint32Array(tracked + 1) };
  }

  /**
   * The drill's counts: calls acknowledged before the cut (--failover-after, one or more besides
   * when calls in flight at the k-th finish first, fewer when the sweeps ran dry), calls after it,
   * their moves (the predicted loss), WAIT's verdicts.
   */
  get counts(): {
    happened: boolean;
    callsBeforeCut: number;
    callsAfterCut: number;
    predictedLoss: number;
    unconfirmedMoves: number;
    waitTimeouts: number;
    waitReplies: FailoverFigures['waitReplies'];
  } {
    return {
      happened: this.phase === 'after',
      callsBeforeCut: this.acked,
      callsAfterCut: this.windowCalls,
      predictedLoss: this.predicted,
      unconfirmedMoves: this.unconfirmedMoves,
      waitTimeouts: this.waitTimeouts,
      waitReplies: [...this.reached].sort(([a], [b]) => a - b).map(([replicas, waits]) => ({ replicas, waits })),
    };
  }

  /**
   * Which server a reply handled now came from: 'before' (the old primary) until the replica is
   * promoted, 'after' from then on. It turns before the switch proxy carries any connection to the
   * new primary, so no reply of the new primary is ever read as the old one's; with the workers
   * idle before the kill, no reply of the old primary is still due when it turns.
   */
  side(): TakeSide {
    return this.answering;
  }

  /**
   * What the drill is doing while the sweeps wait on it, for the progress line (the sweeps reclaim
   * nothing meanwhile, and a wait for the workers can last seconds): none between its steps.
   */
  get stage(): string | undefined {
    return this.doing;
  }

  /** The run's workers: each step waits until they are idle (see the file's comment). */
  attachWorkers(workers: IdleWorkers): void {
    this.workers = workers;
  }

  /** The race's sweepers, each passing the gate around every sweep call. */
  wrap(factory: SweeperFactory): SweeperFactory {
    return (context) => {
      const inner = factory(context);
      this.live++;
      let waits = 0;
      const wait = this.settings.waitReplicas;
      const sweeper: Sweeper = {
        get record() {
          return inner.record;
        },
        get commands() {
          return inner.commands + waits;
        },
        get noscriptFallbacks() {
          return inner.noscriptFallbacks;
        },
        get retries() {
          return inner.retries;
        },
        get strayIds() {
          return inner.strayIds;
        },
        get latency() {
          return inner.latency;
        },
        sweep: async () => {
          for (;;) {
            const ticket = await this.enter();
            const start = inner.record.length;
            let moved = 0;
            let confirmed = true;
            try {
              moved = await inner.sweep();
              if (wait && moved > 0) {
                waits++;
                const reached = Number(await context.redis.call('WAIT', wait.replicas, wait.timeoutMs));
                this.reached.set(reached, (this.reached.get(reached) ?? 0) + 1);
                confirmed = reached >= wait.replicas;
              }
            } finally {
              this.leave(ticket, inner.record, start, confirmed);
            }
            if (moved > 0 || ticket === 'after') return moved;
            await this.untilFailover();
          }
        },
      };
      return sweeper;
    };
  }

  private async enter(): Promise<Ticket> {
    for (;;) {
      this.check();
      if (this.phase === 'before') {
        this.inFlight++;
        return 'before';
      }
      if (this.phase === 'cut' && !this.stepping && this.permits > 0) {
        this.permits--;
        this.inFlight++;
        return 'window';
      }
      if (this.phase === 'after') {
        this.inFlight++;
        return 'after';
      }
      await this.changed;
    }
  }

  private leave(ticket: Ticket, record: Sweeper['record'], start: number, confirmed: boolean): void {
    this.inFlight--;
    const moved = record.length - start;
    const into = ticket === 'after' ? this.tally.after : this.tally.before;
    for (let i = start; i < record.length; i++) {
      const id = record.idAt(i);
      if (id < into.length) {
        into[id] = (into[id] ?? 0) + 1;
        if (!confirmed && ticket !== 'after') this.tally.unconfirmed[id] = (this.tally.unconfirmed[id] ?? 0) + 1;
      }
    }
    if (!confirmed) {
      this.waitTimeouts++;
      this.unconfirmedMoves += moved;
    }
    if (ticket === 'before') {
      this.acked++;
      if (this.acked >= this.settings.after && this.phase === 'before') this.phase = 'draining';
    }
    if (ticket === 'window') {
      this.windowCalls++;
      if (confirmed) this.predicted += moved;
    }
    this.step();
  }

  private async untilFailover(): Promise<void> {
    this.waitingForFailover++;
    try {
      this.step();
      while (this.phase !== 'after') {
        this.check();
        await this.changed;
      }
    } finally {
      this.waitingForFailover--;
    }
  }

  /** Takes the next step of the schedule when it is due: nothing in flight, and its calls made. */
  private step(): void {
    if (this.stepping || this.failure !== undefined || this.inFlight > 0) return;
    const idle = this.waitingForFailover === this.live;
    let next: (() => Promise<void>) | undefined;
    if (this.phase === 'draining' || (this.phase === 'before' && idle)) {
      next = async () => {
        await this.idleWorkers('the cut');
        this.doing = 'failover: cutting the replica off';
        await this.steps.cut(this.signal);
        this.phase = 'cut';
      };
    } else if (this.phase === 'cut' && (this.permits === 0 || idle)) {
      next = async () => {
        await this.idleWorkers('the failover');
        this.doing = 'failover: killing the primary, promoting the replica';
        await this.steps.failover(this.signal, () => {
          this.answering = 'after';
        });
        this.phase = 'after';
      };
    }
    if (!next) return;
    this.stepping = true;
    next().then(
      () => {
        this.stepping = false;
        this.doing = undefined;
        this.notify();
        this.step();
      },
      (err: unknown) => {
        this.stepping = false;
        this.doing = undefined;
        this.failure = err;
        this.notify();
      },
    );
  }

  /** Waits, where the run has workers, until they are idle before `step` (see the file's comment). */
  private async idleWorkers(step: string): Promise<void> {
    if (!this.workers) return;
    this.doing = `waiting for the workers to finish their jobs before ${step}`;
    await this.workers.idle(this.signal);
  }

  private check(): void {
    if (this.failure !== undefined) throw this.failure;
    this.signal.throwIfAborted();
  }

  private nextChange(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
    });
  }

  private notify(): void {
    const wake = this.wake;
    this.changed = this.nextChange();
    wake();
  }
}

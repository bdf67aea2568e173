/**
 * A barrier the callers meet at inside a check, once: it opens when each of the race's callers
 * has either arrived or left (a caller the library's gate turned away, or one that failed, leaves
 * rather than arrives). The start barrier lines the callers up before their first command; a
 * round-trip port's windows sit a few round trips later (between a gate's read and its write, a
 * read of what to recover and its delete), by which time one caller may have run a round trip
 * ahead of the rest on a busy machine and closed one alone. Meeting again where a window opens
 * keeps the run about the port's order, not about which connection the machine served first. It
 * changes no command: every caller still sends what it sent, in its own order, and a caller the
 * gate stopped is not brought back; what it picks is the interleaving, the overlapping checks the
 * port's run stands for.
 */
export class PhaseBarrier {
  private arrived = 0;
  private left = 0;
  private opened = false;
  private readonly open: Promise<void>;
  private release!: () => void;

  constructor(private readonly parties: number) {
    this.open = new Promise<void>((resolve) => (this.release = resolve));
  }

  /** Waits until every caller has arrived or left; at once after the barrier has opened. */
  arrive(): Promise<void> {
    if (!this.opened) {
      this.arrived++;
      this.openIfAllIn();
    }
    return this.open;
  }

  /** A caller that will not arrive this time: the barrier no longer waits for it. */
  leave(): void {
    if (this.opened) return;
    this.left++;
    this.openIfAllIn();
  }

  private openIfAllIn(): void {
    if (this.arrived + this.left < this.parties) return;
    this.opened = true;
    this.release();
  }
}

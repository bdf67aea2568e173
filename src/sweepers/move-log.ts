/**
 * A sweeper's own record of every job it moved and where to. Ids sit in a growable Int32Array and
 * destinations in a parallel Uint8Array, so a million moves cost megabytes, not a million objects.
 */
export type Destination = 'pending' | 'dead' | 'unknown';

const CODES: readonly Destination[] = ['unknown', 'pending', 'dead'];

export class MoveLog {
  private ids = new Int32Array(1024);
  private destinations = new Uint8Array(1024);
  private size = 0;
  private inHand = 0;

  get length(): number {
    return this.size;
  }

  /**
   * A round-trip sweeper is about to change job `id` on the server (its first write of the job):
   * until its move is added, a call whose reply is lost, or a crash, leaves that job in doubt, and
   * the audit may reconcile one unacknowledged move of it, no other (takeHeld).
   */
  hold(id: number): void {
    this.inHand = id;
  }

  /** The job held and not yet added (0 for none), let go: the sweep it belonged to has ended. */
  takeHeld(): number {
    const id = this.inHand;
    this.inHand = 0;
    return id;
  }

  /** `unknown` is for strategies (a script) that report what they moved but not where to. */
  add(id: number, destination: Destination): void {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 0x7fffffff) {
      throw new Error(`job id ${id} is not a positive 32-bit integer`);
    }
    this.inHand = 0;
    if (this.size === this.ids.length) {
      const ids = new Int32Array(this.size * 2);
      ids.set(this.ids);
      this.ids = ids;
      const destinations = new Uint8Array(this.size * 2);
      destinations.set(this.destinations);
      this.destinations = destinations;
    }
    this.ids[this.size] = id;
    this.destinations[this.size] = CODES.indexOf(destination);
    this.size++;
  }

  *[Symbol.iterator](): Generator<{ id: number; destination: Destination }> {
    for (let i = 0; i < this.size; i++) {
      yield { id: this.ids[i] ?? 0, destination: CODES[this.destinations[i] ?? 0] ?? 'unknown' };
    }
  }

  /** The id of the i-th move (0-based). */
  idAt(i: number): number {
    return this.ids[i] ?? 0;
  }

  /**
   * Adds one to counts[id] for every move in the log. Ids beyond the array name no job of the run (a
   * script's return can name any number): they are counted apart, and how many is the return value.
   */
  countInto(counts: Uint32Array): number {
    let beyond = 0;
    for (let i = 0; i < this.size; i++) {
      const id = this.ids[i] ?? 0;
      if (id < counts.length) counts[id] = (counts[id] ?? 0) + 1;
      else beyond++;
    }
    return beyond;
  }
}

/**
 * One job's interleaving, proven from the replies: given every command the sweepers sent for a job
 * and the reply each got, the order in which the server ran them, as far as the replies themselves
 * fix it. No client clock is used. The facts used are these, each sound only where stated:
 *
 *  - each sweeper awaits a reply before sending its next command, so its own commands ran in the
 *    order it sent them;
 *  - the job leaves `active` once, and nothing puts it back (no re-leases): the one ZREM answering
 *    1 ran after every ZSCORE that still found the job and before every ZSCORE or ZREM that did not;
 *  - RPUSH answers the list's length after the push: where nothing took entries out of pending
 *    during the race, a smaller answer ran earlier; into a sorted set, where nothing but the
 *    sweepers' pushes touched the job's member, the ZADD answering 1 ran first;
 *  - only the sweepers' HSETs write `stalled`: an HGET answering the starting count ran before
 *    every HSET of another value, and one answering v ran after the HSET that wrote v when only one
 *    did;
 *  - the ZADD into dead answering 1 ran before those answering 0.
 *
 * Two commands whose order cannot change the job's state or what a reply says about the job commute,
 * and need no order: two reads of the same value, two writes of the same value, commands on
 * different keys, two pushes of the job onto a list (each adds an entry; what their replies count
 * is the whole list, other jobs included). The order is proven when every other pair is ordered by
 * the facts above; it is then shown as one order those facts allow (ties broken by the order of
 * sending, which proves nothing and needs to prove nothing: any order the facts allow tells the
 * job's story the same way).
 */
import type { QueueKeys } from '../queue/keys.js';
import type { InterleavingExample, SweeperCommand } from '../shared/model.js';

export interface OrderContext {
  readonly keys: QueueKeys;
  /** The counter every job started with. */
  readonly stalledBefore: number;
  /** Nothing took entries out of pending during the race (no workers, re-leases or LREM). */
  readonly pendingOnlyGrows: boolean;
  /** Something besides the sweepers took jobs from pending during the race (workers, re-leases). */
  readonly othersTakeFromPending: boolean;
  /** Nothing put jobs back in active during the race (no re-leases). */
  readonly activeOnlyShrinks: boolean;
  /**
   * One command was in flight at a time (--seed), and each job's commands are logged in the order
   * their replies came: that is the server's order, proven or not by the replies' contents.
   */
  readonly serial?: boolean;
}

/** What a command did to the one job, as far as ordering goes. */
type Op =
  | { readonly on: 'active'; readonly kind: 'probe' | 'remove'; readonly found: boolean }
  | { readonly on: 'pending'; readonly kind: 'push'; readonly length: number }
  | { readonly on: 'pending'; readonly kind: 'add'; readonly added: boolean }
  | { readonly on: 'pending'; readonly kind: 'take' }
  | { readonly on: 'dead'; readonly added: boolean }
  | { readonly on: 'job'; readonly reads: number | null | undefined; readonly stalled: number | undefined; readonly state: string | undefined }
  | { readonly on: 'other' };

function classify(entry: SweeperCommand, keys: QueueKeys, id: string): Op {
  const [name = '', key, ...rest] = entry.command;
  const command = name.toUpperCase();
  const reply = entry.reply;
  if (key === keys.active && command === 'ZSCORE') return { on: 'active', kind: 'probe', found: reply !== null };
  if (key === keys.active && command === 'ZREM') return { on: 'active', kind: 'remove', found: reply === 1 };
  if (key === keys.pending && command === 'RPUSH' && typeof reply === 'number') return { on: 'pending', kind: 'push', length: reply };
  if (key === keys.pending && command === 'ZADD') return { on: 'pending', kind: 'add', added: reply === 1 };
  if (key === keys.pending && (command === 'LREM' || command === 'ZREM')) return { on: 'pending', kind: 'take' };
  if (key === keys.dead && command === 'ZADD') return { on: 'dead', added: reply === 1 };
  if (key === keys.job(id) && command === 'HGET' && rest[0] === 'stalled') {
    return { on: 'job', reads: reply === null ? null : Number(reply), stalled: undefined, state: undefined };
  }
  if (key === keys.job(id) && command === 'HSET') {
    let stalled: number | undefined;
    let state: string | undefined;
    for (let i = 0; i + 1 < rest.length; i += 2) {
      if (rest[i] === 'stalled') stalled = Number(rest[i + 1]);
      else if (rest[i] === 'state') state = rest[i + 1];
      else return { on: 'other' };
    }
    return { on: 'job', reads: undefined, stalled, state };
  }
  return { on: 'other' };
}

/** Whether the order of two commands on the job could change a reply or the job's final state. */
function conflicts(a: Op, b: Op): boolean {
  if (a.on === 'other' || b.on === 'other') return true;
  if (a.on !== b.on) return false;
  if (a.on === 'active' && b.on === 'active') {
    // Reads that both found the job, or commands that both found it gone, saw the same thing and changed nothing.
    const unchanged = (op: typeof a) => (!op.found ? 'absent' : op.kind === 'probe' ? 'present' : 'changed');
    const x = unchanged(a);
    const y = unchanged(b);
    return x === 'changed' || y === 'changed' || x !== y;
  }
  if (a.on === 'pending' && b.on === 'pending') {
    if (a.kind === 'push' && b.kind === 'push') return false;
    return !(a.kind === 'add' && b.kind === 'add' && !a.added && !b.added);
  }
  if (a.on === 'dead' && b.on === 'dead') return a.added || b.added;
  if (a.on === 'job' && b.on === 'job') {
    const readWrite = (r: typeof a, w: typeof a) => r.reads !== undefined && w.stalled !== undefined;
    const stalled = a.stalled !== undefined && b.stalled !== undefined && a.stalled !== b.stalled;
    const state = a.state !== undefined && b.state !== undefined && a.state !== b.state;
    return readWrite(a, b) || readWrite(b, a) || stalled || state;
  }
  return true;
}

/** Reachability over n commands: before[i][j] when i is known to have run before j. */
class Order {
  readonly before: boolean[][];
  constructor(readonly size: number) {
    this.before = Array.from({ length: size }, () => new Array<boolean>(size).fill(false));
  }

  knows(i: number, j: number): boolean {
    return this.before[i]?.[j] === true;
  }

  /** Adds i → j; true when it is new. */
  add(i: number, j: number): boolean {
    const row = this.before[i];
    if (!row || row[j]) return false;
    row[j] = true;
    return true;
  }

  /** Closes the relation under transitivity (Warshall). */
  close(): void {
    for (let k = 0; k < this.size; k++) {
      for (let i = 0; i < this.size; i++) {
        if (!this.knows(i, k)) continue;
        const row = this.before[i] as boolean[];
        const via = this.before[k] as boolean[];
        for (let j = 0; j < this.size; j++) if (via[j]) row[j] = true;
      }
    }
  }
}

export interface ProvenOrder {
  /** Indices into the commands, in an order the replies allow (send order where not proven). */
  readonly order: readonly number[];
  readonly proven: boolean;
  readonly evidence: readonly string[];
}

/** The order the server ran one job's commands in, from their replies (see the header). */
export function proveOrder(commands: readonly SweeperCommand[], id: string, context: OrderContext): ProvenOrder {
  const sendOrder = commands.map((_, i) => i);
  const unproven = (why: string): ProvenOrder => ({ order: sendOrder, proven: false, evidence: [why] });
  if (commands.some((c) => c.reply === undefined)) return unproven('a command got no reply');

  const ops = commands.map((c) => classify(c, context.keys, id));
  const order = new Order(commands.length);
  const evidence: string[] = [];

  // Each sweeper's own commands, in the order it sent them.
  const last = new Map<number, number>();
  commands.forEach((c, i) => {
    const previous = last.get(c.sweeper);
    if (previous !== undefined) order.add(previous, i);
    last.set(c.sweeper, i);
  });

  const indices = (test: (op: Op) => boolean): number[] => ops.flatMap((op, i) => (test(op) ? [i] : []));

  if (context.activeOnlyShrinks) {
    const removals = indices((op) => op.on === 'active' && op.kind === 'remove' && op.found);
    if (removals.length > 1) return unproven('ZREM answered 1 more than once');
    const [taken] = removals;
    if (taken !== undefined) {
      for (const i of indices((op) => op.on === 'active')) {
        const op = ops[i] as Extract<Op, { on: 'active' }>;
        if (i === taken) continue;
        if (op.kind === 'probe' && op.found) order.add(i, taken);
        else order.add(taken, i);
      }
      const zrems = indices((op) => op.on === 'active' && op.kind === 'remove');
      if (zrems.length > 1) evidence.push(`ZREM answered 1, and ${zrems.length - 1 === 1 ? 'the other' : `${zrems.length - 1} others`} 0 after it`);
    }
  }

  if (context.pendingOnlyGrows) {
    // Pushes need no order among themselves (see the header), but where the list's length is a
    // clock they get one, for a reader to check.
    const pushes = indices((op) => op.on === 'pending' && op.kind === 'push').sort((x, y) => lengthOf(ops[x]) - lengthOf(ops[y]));
    for (let k = 1; k < pushes.length; k++) {
      const earlier = pushes[k - 1] as number;
      const later = pushes[k] as number;
      if (lengthOf(ops[earlier]) === lengthOf(ops[later])) return unproven('two RPUSH answered the same length');
      order.add(earlier, later);
    }
    if (pushes.length > 1) evidence.push(`RPUSH answered ${pushes.map((i) => lengthOf(ops[i])).join(' then ')} (pending only grew)`);
  } else if (indices((op) => op.on === 'pending' && op.kind === 'push').length > 1) {
    evidence.push('the pushes need no order: each adds one entry');
  }
  const takes = indices((op) => op.on === 'pending' && op.kind === 'take');
  if (!context.othersTakeFromPending && takes.length === 0) {
    const adds = indices((op) => op.on === 'pending' && op.kind === 'add');
    const added = adds.filter((i) => (ops[i] as { added: boolean }).added);
    if (added.length > 1) return unproven('ZADD into pending answered 1 more than once');
    const [first] = added;
    if (first !== undefined) for (const i of adds) if (i !== first) order.add(first, i);
    if (first !== undefined && adds.length > 1) evidence.push('the ZADD into pending that answered 1 ran first');
  }

  const deadAdds = indices((op) => op.on === 'dead');
  const deadFirst = deadAdds.filter((i) => (ops[i] as { added: boolean }).added);
  if (deadFirst.length > 1) return unproven('ZADD into dead answered 1 more than once');
  if (deadFirst[0] !== undefined) for (const i of deadAdds) if (i !== deadFirst[0]) order.add(deadFirst[0], i);

  // The counter: which write each read saw.
  const writes = indices((op) => op.on === 'job' && op.stalled !== undefined);
  const written = (i: number) => (ops[i] as { stalled?: number }).stalled;
  const sources = new Map<number, number>();
  const readFacts = new Set<string>();
  for (const r of indices((op) => op.on === 'job' && op.reads !== undefined)) {
    const value = (ops[r] as { reads: number | null }).reads;
    if (value === null) return unproven('HGET found no counter');
    const writers = writes.filter((w) => written(w) === value);
    if (writers.length === 0) {
      if (value !== context.stalledBefore) return unproven(`HGET read ${value}, which no HSET wrote`);
      for (const w of writes) order.add(r, w);
      readFacts.add(`HGET answered ${value} before any HSET`);
    } else if (writers.length === 1) {
      order.add(writers[0] as number, r);
      sources.set(r, writers[0] as number);
      readFacts.add(`HGET answered ${value} after the one HSET of ${value}`);
    }
  }
  evidence.push(...readFacts);

  // The write a read saw was the last before it: any other value's write before the read came
  // before that write, and any after that write came after the read.
  for (let changed = true; changed; ) {
    order.close();
    changed = false;
    for (const [r, w] of sources) {
      for (const u of writes) {
        if (u === w || written(u) === written(w)) continue;
        if (order.knows(u, r)) changed = order.add(u, w) || changed;
        if (order.knows(w, u)) changed = order.add(r, u) || changed;
      }
    }
  }

  for (let i = 0; i < commands.length; i++) if (order.knows(i, i)) return unproven('the replies contradict each other');
  for (let i = 0; i < commands.length; i++) {
    for (let j = i + 1; j < commands.length; j++) {
      if (conflicts(ops[i] as Op, ops[j] as Op) && !order.knows(i, j) && !order.knows(j, i)) {
        return unproven(
          `the replies do not order ${commandName(commands[i])} (s${commands[i]?.sweeper}) and ${commandName(commands[j])} (s${commands[j]?.sweeper})`,
        );
      }
    }
  }
  return { order: topological(order), proven: true, evidence };
}

function lengthOf(op: Op | undefined): number {
  return op && op.on === 'pending' && op.kind === 'push' ? op.length : Number.NaN;
}

function commandName(command: SweeperCommand | undefined): string {
  return command?.command[0] ?? '?';
}

/** An order consistent with `order`, taking the earliest-sent command whenever several may come next. */
function topological(order: Order): number[] {
  const placed = new Array<boolean>(order.size).fill(false);
  const out: number[] = [];
  while (out.length < order.size) {
    let next = -1;
    for (let i = 0; i < order.size && next < 0; i++) {
      if (placed[i]) continue;
      let free = true;
      for (let j = 0; j < order.size; j++) if (!placed[j] && order.knows(j, i)) free = false;
      if (free) next = i;
    }
    placed[next] = true;
    out.push(next);
  }
  return out;
}

/** Pushes onto pending among a job's commands: more than one, and the job was recovered more than once. */
function pushes(commands: readonly SweeperCommand[], keys: QueueKeys): number {
  return commands.filter((c) => c.command[1] === keys.pending && ['RPUSH', 'ZADD'].includes((c.command[0] ?? '').toUpperCase())).length;
}

/**
 * The example a report shows: among the sampled jobs pushed onto pending more than once, one whose
 * order the replies prove (the fewest commands, to read at a glance); failing that, the first such
 * job with its order marked unproven; null when no sampled job was pushed twice.
 */
export function pickExample(jobs: ReadonlyMap<string, readonly SweeperCommand[]>, context: OrderContext): InterleavingExample | null {
  let unprovenExample: InterleavingExample | null = null;
  let best: { example: InterleavingExample; rank: number } | null = null;
  for (const [job, commands] of jobs) {
    if (pushes(commands, context.keys) < 2) continue;
    const found = proveOrder(commands, job, context);
    // Served one at a time, the log's own order is the server's: kept whole, and proven by that.
    const { order, proven, evidence } = context.serial
      ? { order: commands.map((_, i) => i), proven: true, evidence: found.proven ? found.evidence : [] }
      : found;
    const example: InterleavingExample = {
      job,
      commands: order.map((i) => commands[i] as SweeperCommand),
      proven,
      evidence,
      ...(context.serial ? { serial: true as const } : {}),
    };
    if (!proven) {
      unprovenExample ??= example;
      continue;
    }
    // The page's story first (two sweeps wrote back the same count), then the shortest.
    const rank = (writesRepeat(commands) ? 0 : 1_000_000) + commands.length;
    if (!best || rank < best.rank) best = { example, rank };
  }
  return best?.example ?? unprovenExample;
}

/** Two HSETs of the same counter value: an increment lost, as the source page tells it. */
function writesRepeat(commands: readonly SweeperCommand[]): boolean {
  const values = commands.filter((c) => c.command[0] === 'HSET' && c.command[2] === 'stalled').map((c) => c.command[3]);
  return new Set(values).size < values.length;
}

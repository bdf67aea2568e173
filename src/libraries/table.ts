/**
 * The queue libraries a race can take its stalled-job recovery from (`--lib`): one entry per
 * library, its modes among them. The library itself is never ours: it is the user's installed
 * package, found from their project's folder (resolve.ts), an optional peer dependency of the tool.
 *
 * A new library is a folder beside bullmq/ whose `run.ts` runs one of its modes end to end, an
 * entry here, and its modes' names in MODES (model.ts) and the schema's mode enum
 * (docs/architecture.md, "How to add a library").
 */
import type { FaultName, LibraryName, Mode, QueueWords } from '../shared/model.js';
import type { LibraryRunner } from './runner.js';
import type { Lacks } from './missing-api.js';
import { bullmqLacks } from './bullmq/module.js';
import { nodeResqueLacks } from './node-resque/module.js';
import { beeQueueLacks } from './bee-queue/module.js';

/** One mode a library brings: what the strategy table needs to know of it. */
export interface LibraryMode {
  readonly mode: Mode;
  /** One line for --help and the docs. */
  readonly summary: string;
  /** `--expect race` expects it to race (the naive port). */
  readonly racesByDesign: boolean;
  /** A round trip per command: it runs on --loop-jobs jobs. */
  readonly roundTrips: boolean;
  /** Connections each of its callers opens (one unless named): what the memory guard counts. */
  readonly connectionsPerCaller?: number;
}

/**
 * What a run of the library holds on the server, for the memory guard (queue/memory-guard.ts),
 * which weighs a library's run by these rather than by the model queue's slice.
 *
 * Measured, not guessed (`node scripts/measure-library-memory.mjs` does it again, for a new
 * version of a library): each mode run with `--keep` on a fresh redis-server 7.0.15 and
 * valkey-server 8.0.1 (no maxmemory), eight callers, at two sizes (BullMQ and Bee-Queue 200 and
 * 2,000 jobs, node-resque 100 and 400), reading INFO memory before the run and used_memory_peak
 * after it, MEMORY USAGE of every key the run kept, INFO clients while it ran (the most connections
 * at once) and INFO latencystats after it (the commands it sent). A job's bytes are the rise of the
 * peak from the small run to the large one over the jobs added: everything the run holds per job
 * at its dearest moment, the seeding's transient keys and buffers included, where the kept keys
 * alone tell only the end. The figures are the highest of both servers, rounded up.
 */
export interface LibraryMemory {
  /** Bytes a job holds at the peak of a run that recovers it once (the library's own check or the guarded port). */
  readonly bytesPerJob: number;
  /** Bytes each further recovery of a job adds, in a mode that races (its peak's rise over the guarded port's, per other caller). */
  readonly bytesPerDuplicate: number;
  /** Connections the seeding's clients hold besides the callers'. */
  readonly seedConnections: number;
  /** The commands a run sends beyond the tool's own (INFO latencystats after it): each new one costs the server a latency histogram. */
  readonly commands: readonly string[];
  /** Its Lua scripts in the server's script cache (INFO memory's used_memory_scripts_eval after a run). */
  readonly scriptBytes: number;
  /** With `--fault lapsed-lock` (its jobs run again and finish): bytes a job, and a duplicate, as above. */
  readonly lapsedLock?: { readonly bytesPerJob: number; readonly bytesPerDuplicate: number };
}

export interface Library {
  /** The npm package the user installs. */
  readonly packageName: string;
  /** The versions the tool was tested with: from `from` up to, not including, `below`. */
  readonly tested: { readonly from: string; readonly below: string };
  /**
   * The Redis client packages the library loads from its own folder: where its package.json names
   * one (a dependency, or a peer npm may leave out), resolve.ts refuses, before any server starts,
   * a copy of the library that cannot load it.
   */
  readonly clients: readonly string[];
  /**
   * Those of `clients` that `npm install` of the library alone leaves out (an optional peer:
   * BullMQ 6's ioredis): the not-installed line names them beside the library, so that following
   * it leads to no second refusal. A client the library depends on is installed with it.
   */
  readonly installWith: readonly string[];
  /** Why `--max-stalled` means nothing to it, for the refusal of the flag given; undefined where it has a stall limit the flag sets. */
  readonly noStallLimit?: string;
  readonly modes: readonly LibraryMode[];
  /** The faults its modes take (`--fault`); none unless named. `lapsed-lock` needs workers that hold locks. */
  readonly faults?: readonly FaultName[];
  /** What the tool calls of the package's exports, the first piece missing (its module.ts's loader refuses the same). */
  readonly lacks: Lacks;
  readonly memory: LibraryMemory;
  /**
   * What the library calls its own parts, for the table's labels and the readout under it: the
   * list its recovered jobs go back on, what a stalled job is in it, the counter it keeps, if any
   * (see QueueWords in model.ts; its audit.ts says what each figure reads).
   */
  readonly words: QueueWords;
  /** Its runner, loaded when a run needs it. */
  readonly load: () => Promise<LibraryRunner>;
}

export const LIBRARIES: Readonly<Record<LibraryName, Library>> = {
  bullmq: {
    packageName: 'bullmq',
    tested: { from: '6.7.0', below: '7.0.0' },
    // An optional peer in 6.x: `npm install bullmq` alone leaves it out.
    clients: ['ioredis'],
    installWith: ['ioredis'],
    modes: [
      {
        mode: 'bullmq',
        summary: "BullMQ's own stalled-job recovery, unmodified: its moveStalledJobsToWait script",
        racesByDesign: false,
        roundTrips: false,
        // A Worker and its blocking connection (INFO clients: 19 at once for eight callers).
        connectionsPerCaller: 2,
      },
      {
        mode: 'bullmq-naive',
        summary: "BullMQ's recovery ported to round trips in its own order, deaf to LREM's reply",
        racesByDesign: true,
        roundTrips: true,
      },
      {
        mode: 'bullmq-guarded',
        summary: 'the same port, where only the caller whose LREM removed the job requeues and counts it',
        racesByDesign: false,
        roundTrips: true,
      },
    ],
    faults: ['lapsed-lock'],
    memory: {
      // Peak per job 400–469 bytes (its hash, its entries in the events stream, its lock while seeded); the naive port 75–87 more per other caller.
      bytesPerJob: 480,
      bytesPerDuplicate: 90,
      // Its Queue and Worker (two connections); --fault lapsed-lock's two Workers and Queue (23 clients at once for eight callers).
      seedConnections: 5,
      // 48,000 bytes; 89,240 with --fault lapsed-lock's scripts.
      scriptBytes: 90 * 1024,
      // --fault lapsed-lock at 200 and 1,000 jobs, measured again with the handlers' run count in each hash: 772–779 bytes a job kept
      // (each job completed, its hash grown), 635–768 by the peak's rise; the naive port's second worker runs each job once per push:
      // 265–273 bytes a duplicate (2,749–2,760 a job kept with eight callers, under the 800 + 7 × 320 the guard weighs).
      lapsedLock: { bytesPerJob: 800, bytesPerDuplicate: 320 },
      commands: [
        'client|setinfo',
        'client|setname',
        'exists',
        'hgetall',
        'hmset',
        'incr',
        'lpush',
        'pttl',
        'rpoplpush',
        'sadd',
        'scard',
        'smembers',
        'xadd',
        'xtrim',
      ],
    },
    words: {
      // A job's lock lapses (its worker stopped renewing it); the check moves it from `active` back to `wait`, counting the stall in the job's `stc`.
      pending: 'wait',
      dead: 'failed',
      // A job past maxStalledCount stays in wait, marked to fail (`defa`): BullMQ 6 fails it when a
      // worker next takes it (under --fault lapsed-lock a second worker does, and it is in failed by the audit).
      deadLetter: { verb: 'marked', to: 'to fail (defa: BullMQ fails each at its next take)', notIn: 'neither in failed nor marked to fail (defa)' },
      // Each entry in wait is a take, not always a run: a job marked to fail (defa) fails at its next
      // take without running, and each take after that runs it.
      entriesAre: 'that would be taken up to',
      headings: { duplicatePending: 'duplicate\nin wait' },
      race: "jobs whose locks lapsed, seeded by BullMQ's own Queue and Worker on a live server, recovered by concurrent callers (its own check, and two ports of it in round trips)",
      recoveredOnce: 'every job whose lock lapsed was recovered exactly once',
      nowhere: "in none of BullMQ's lists and sets",
      unreclaimed: { one: 'job in active, its lock lapsed', many: 'jobs in active, their locks lapsed' },
      counter: {
        counted: "every stall was counted in its job's stc",
        increment: 'stc increment',
        lost: "moves the job's stc does not show",
        extra: { one: 'stall', many: 'stalls', after: 'in stc that no caller recorded' },
      },
    },
    lacks: bullmqLacks,
    load: async () => (await import('./bullmq/run.js')).runBullmqMode,
  },
  'node-resque': {
    packageName: 'node-resque',
    tested: { from: '9.7.0', below: '10.0.0' },
    clients: ['ioredis'],
    installWith: [],
    noStallLimit: "node-resque fails a dead worker's job at once, with no count of stalls",
    modes: [
      {
        mode: 'node-resque',
        summary: "node-resque's own recovery of dead workers, unmodified: its Queue#cleanOldWorkers",
        racesByDesign: true,
        roundTrips: true,
      },
      {
        mode: 'node-resque-naive',
        summary: "node-resque's cleanOldWorkers ported to round trips in its own order",
        racesByDesign: true,
        roundTrips: true,
      },
      {
        mode: 'node-resque-guarded',
        summary: "the same port, where only the caller whose SREM removed the worker's entry fails its job",
        racesByDesign: false,
        roundTrips: true,
      },
    ],
    memory: {
      // Peak per job 817–820 bytes (a dead worker's keys and its entry in `workers`, its job, its failure);
      // its own recovery and the naive port 752 more per other caller at most (the failures pushed again, the replies of each caller's reads).
      bytesPerJob: 832,
      bytesPerDuplicate: 768,
      // Its seeding Queue; the dead workers share the tool's connection.
      seedConnections: 1,
      scriptBytes: 4 * 1024,
      commands: ['client|setinfo', 'exec', 'exists', 'incr', 'lpop', 'multi', 'sadd', 'select', 'smembers', 'srem'],
    },
    words: {
      // No lock: a dead worker keeps its job under its own key; recovery fails the job onto `failed` (retryStuckJobs enqueues each entry there again) and counts it in `stat:failed`.
      pending: 'failed',
      dead: 'failed',
      headings: { duplicatePending: 'duplicate\nin failed' },
      race: "dead workers each holding a job, seeded by node-resque's own Queue and Workers on a live server, cleaned by concurrent callers (its own cleanOldWorkers, and two ports of it in round trips)",
      recoveredOnce: "every dead worker's job was pushed onto failed exactly once",
      nowhere: "in none of failed, the queue or a registered worker's hands",
      unreclaimed: { one: 'job held by a dead worker still registered', many: 'jobs held by dead workers still registered' },
      counter: {
        counted: 'every failure was counted in stat:failed',
        increment: 'stat:failed increment',
        lost: 'pushes onto failed that stat:failed does not count',
        extra: { one: 'failure', many: 'failures', after: 'in stat:failed with no job pushed' },
      },
    },
    lacks: nodeResqueLacks,
    load: async () => (await import('./node-resque/run.js')).runNodeResqueMode,
  },
  'bee-queue': {
    packageName: 'bee-queue',
    tested: { from: '2.0.0', below: '3.0.0' },
    // The `redis` package (v3), its own dependency.
    clients: ['redis'],
    installWith: [],
    noStallLimit: 'Bee-Queue keeps no count of stalls and never fails a job for stalling',
    modes: [
      { mode: 'bee-queue', summary: "Bee-Queue's own stalled-job check, unmodified: its Queue#checkStalledJobs", racesByDesign: false, roundTrips: false },
      {
        mode: 'bee-queue-naive',
        summary: "Bee-Queue's check ported to round trips in its own order, deaf to LREM's reply",
        racesByDesign: true,
        roundTrips: true,
      },
      {
        mode: 'bee-queue-guarded',
        summary: 'the same port, where only the caller whose LREM removed the job puts it back in waiting',
        racesByDesign: false,
        roundTrips: true,
      },
    ],
    memory: {
      // Peak per job 174–239 bytes (its entry in the `jobs` hash, in `active`, `stalling` and `waiting`); a duplicate is a short id in a list.
      bytesPerJob: 256,
      bytesPerDuplicate: 8,
      // The seeding Queue, and the worker's client and blocking client.
      seedConnections: 3,
      scriptBytes: 8 * 1024,
      commands: ['brpoplpush', 'client|setinfo', 'exists', 'hexists', 'lpush', 'sadd', 'scard', 'script|exists', 'smembers', 'srem', 'sscan'],
    },
    words: {
      // No lock and no count: a job whose worker died stays in `active`, its id marked in `stalling`; the check moves it back to `waiting`.
      pending: 'waiting',
      dead: 'failed',
      headings: { duplicatePending: 'duplicate\nin waiting' },
      race: "jobs whose worker died, seeded by Bee-Queue's own Queue and worker on a live server, checked by concurrent callers (its own checkStalledJobs, and two ports of it in round trips)",
      recoveredOnce: 'every stalled job was moved back to waiting exactly once',
      nowhere: "in none of Bee-Queue's lists and sets",
      unreclaimed: { one: 'job in active', many: 'jobs in active' },
      counter: null,
    },
    lacks: beeQueueLacks,
    load: async () => (await import('./bee-queue/run.js')).runBeeQueueMode,
  },
};

/** The library a mode belongs to, if any. */
export function libraryOf(mode: string): LibraryName | undefined {
  for (const [name, library] of Object.entries(LIBRARIES) as [LibraryName, Library][]) {
    if (library.modes.some((m) => m.mode === mode)) return name;
  }
  return undefined;
}

/** Every mode of every library, in table order. */
export function libraryModes(): readonly (LibraryMode & { readonly library: LibraryName })[] {
  return (Object.entries(LIBRARIES) as [LibraryName, Library][]).flatMap(([library, entry]) => entry.modes.map((mode) => ({ ...mode, library })));
}

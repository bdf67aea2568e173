/**
 * The strategies, one entry per mode: how to load its sweeper and everything the rest of the tool
 * needs to know about it, its traits. The mode sets (`--mode both`, `all`), the plan (which modes
 * a server can run), the flags (which modes run on --loop-jobs), the faults (which cannot reach a
 * mode), the run (what to load before the race), `--expect race` and the report (which columns a
 * mode always shows, how it dead-letters) all read this table; none of them names a mode.
 *
 * The sweepers are loaded only when a race needs one (`load`), so that reading a trait — the help,
 * the report — loads no sweeper.
 *
 * A new strategy is a file in this folder, an entry here, its name in MODES (model.ts) and in the
 * schema's mode enum (docs/architecture.md, "How to add a strategy").
 */
import { LIBRARIES, libraryModes } from '../libraries/table.js';
import { MODEL_QUEUE_WORDS, type FaultName, type LibraryName, type Mode, type QueueWords } from '../shared/model.js';
import type { MemoryTraits } from '../queue/memory-guard.js';
import type { SweeperFactory } from './sweeper.js';

export interface Strategy {
  /** One line for --help and the docs. */
  readonly summary: string;
  /** Its sweeper factory, loaded on first use; none for a library's mode, whose library runs it whole. */
  readonly load?: () => Promise<SweeperFactory>;
  /** The queue library whose recovery the mode races (src/libraries/): its run is the library's own, seed to audit. */
  readonly library?: LibraryName;
  /** In `--mode both`, the default: the shipped atomic sweep and the loop it is set against. */
  readonly inBoth: boolean;
  /** In `--mode all`: every mode that needs nothing the user must bring (a script file). */
  readonly inAll: boolean;
  /** It races by design: `--expect race` expects its runs to show anomalies and every other mode's to be clean. */
  readonly racesByDesign: boolean;
  /**
   * It pushes a job at max-stalled into pending before it moves it to dead (the source page's
   * loop with its dead-letter extension), rather than sending it straight to dead.
   */
  readonly deadLettersAfterPush: boolean;
  /** A round trip per command: slow by nature, so the mode runs on --loop-jobs jobs. */
  readonly roundTrips: boolean;
  /**
   * What the run must bring before the race: the sweep loaded as a Redis Function (a server with
   * Functions), or the user's script file (--script).
   */
  readonly needs?: 'functions' | 'script-file';
  /** The audit checks the strategy's own record of its moves against the server (a script we did not write). */
  readonly crossChecked?: boolean;
  /** The report column (a figure of FIGURES) this strategy always shows, even at zero (others show it only when not zero). */
  readonly ownColumn?: string;
  /** Faults that cannot reach this strategy, each with the reason the report gives. */
  readonly faultsThatMiss?: Partial<Readonly<Record<FaultName, string>>>;
  /** Its sweeps may push one job into a list pending twice: the memory check counts those entries. */
  readonly pushesTwice: boolean;
  /** Server commands it sends beyond every run's, each of which may cost the server a latency histogram. */
  readonly commands?: readonly string[];
  /**
   * Which of `explain`'s step-by-step replays tells this mode's story: `loop` (its commands one at
   * a time under a schedule) or `atomic` (one call from each sweep, sent at the same moment). A
   * mode without one is refused by `explain --mode`.
   */
  readonly replay?: ReplayKind;
}

/** `explain`'s replays, in the order it runs them: the race first, then the step that closes it. */
const REPLAY_KINDS = ['loop', 'atomic'] as const;
export type ReplayKind = (typeof REPLAY_KINDS)[number];

/** The tool's own strategies; the compiler refuses one whose name is not in MODES. */
const BUILT_IN: Readonly<Partial<Record<Mode, Strategy>>> = {
  atomic: {
    summary: 'the shipped Lua sweep: detect, move and count in one EVALSHA',
    load: async () => (await import('./atomic.js')).atomicSweeper,
    inBoth: true,
    inAll: true,
    racesByDesign: false,
    deadLettersAfterPush: false,
    roundTrips: false,
    pushesTwice: false,
    replay: 'atomic',
  },
  loop: {
    summary: 'the same recovery as separate round trips from the application',
    load: async () => (await import('./loop.js')).loopSweeper,
    inBoth: true,
    inAll: true,
    racesByDesign: true,
    deadLettersAfterPush: true,
    roundTrips: true,
    pushesTwice: true,
    replay: 'loop',
    faultsThatMiss: { 'script-flush': 'the loop sends no script, so an emptied script cache cannot touch it' },
  },
  watch: {
    summary: 'round trips under WATCH, the move in MULTI/EXEC (optimistic locking)',
    load: async () => (await import('./watch.js')).watchSweeper,
    inBoth: false,
    inAll: true,
    racesByDesign: false,
    deadLettersAfterPush: false,
    roundTrips: true,
    pushesTwice: false,
    commands: ['watch', 'multi', 'exec', 'unwatch'],
    ownColumn: 'retries',
    faultsThatMiss: { 'script-flush': 'MULTI/EXEC sends no script, so an emptied script cache cannot touch it' },
  },
  claim: {
    summary: 'round trips where the ZREM that answers 1 is the claim, counted with HINCRBY',
    load: async () => (await import('./zrem-claim.js')).claimSweeper,
    inBoth: false,
    inAll: true,
    racesByDesign: false,
    deadLettersAfterPush: false,
    roundTrips: true,
    pushesTwice: false,
    faultsThatMiss: { 'script-flush': 'its round trips send no script, so an emptied script cache cannot touch it' },
  },
  function: {
    summary: 'the atomic sweep loaded as a Redis Function and called with FCALL',
    load: async () => (await import('./function.js')).functionSweeper,
    inBoth: false,
    inAll: true,
    racesByDesign: false,
    deadLettersAfterPush: false,
    roundTrips: false,
    pushesTwice: false,
    commands: ['function|list', 'function|load', 'function|delete', 'fcall'],
    needs: 'functions',
    faultsThatMiss: { 'script-flush': 'functions are not in the script cache that SCRIPT FLUSH empties' },
  },
  script: {
    // Left out of all: it needs --script FILE.lua.
    summary: 'your own sweep script (--script FILE.lua), under the same KEYS/ARGV contract',
    load: async () => (await import('./script.js')).scriptSweeper,
    inBoth: false,
    inAll: false,
    racesByDesign: false,
    deadLettersAfterPush: false,
    roundTrips: false,
    // A user's script may do anything: the check allows for the worst.
    pushesTwice: true,
    needs: 'script-file',
    crossChecked: true,
    ownColumn: 'misreported',
  },
};

export const STRATEGIES = {
  ...BUILT_IN,
  // The libraries' modes (src/libraries/table.ts): none is in both or all, since each needs the
  // user's installed library (--lib).
  ...(Object.fromEntries(
    libraryModes().map(({ mode, summary, racesByDesign, roundTrips, library }) => [
      mode,
      {
        summary,
        library,
        inBoth: false,
        inAll: false,
        racesByDesign,
        deadLettersAfterPush: false,
        roundTrips,
        // A naive port pushes a job once per caller: the check allows for the worst.
        pushesTwice: true,
        faultsThatMiss: {
          'sweeper-crash': 'a library mode runs without the fault hooks',
          'script-flush': 'a library mode runs without the fault hooks',
          'client-kill': 'a library mode runs without the fault hooks',
        },
      } satisfies Strategy,
    ]),
  ) as Record<string, Strategy>),
} as Readonly<Record<Mode, Strategy>>;

/** A mode's sweeper factory; a library's mode has none (its library runs it, see race/run-mode.ts). */
export async function loadSweeper(mode: Mode): Promise<SweeperFactory> {
  const load = STRATEGIES[mode].load;
  if (!load) throw new Error(`mode ${mode} is run by its library, not by a sweeper`);
  return load();
}

/**
 * For tests only: adds a mode the test defines (its name need not be in MODES) to STRATEGIES, to
 * prove that the mode sets, the schema check, the report and the page take their modes from the
 * table. Returns the function that takes it out again.
 */
export function registerStrategy(mode: string, strategy: Strategy): () => void {
  const table = STRATEGIES as Record<string, Strategy>;
  table[mode] = strategy;
  return () => {
    delete table[mode];
  };
}

/** Every mode, in table order. */
export function modes(): Mode[] {
  return Object.keys(STRATEGIES) as Mode[];
}

/** The named sets `--mode` accepts beyond a single mode, from each mode's traits. */
export function modeSets(): Readonly<Record<'both' | 'all', readonly Mode[]>> {
  return { both: modes().filter((mode) => STRATEGIES[mode].inBoth), all: modes().filter((mode) => STRATEGIES[mode].inAll) };
}

/** What the memory check (queue/memory-guard.ts) needs of each mode, read from the table. */
export function memoryTraits(mode: Mode): MemoryTraits {
  const strategy = STRATEGIES[mode];
  if (strategy.library) {
    // A library's run holds the library's own keys: its measured layout stands for the slice.
    const library = LIBRARIES[strategy.library];
    const own = library.modes.find((m) => m.mode === mode);
    const { bytesPerJob, bytesPerDuplicate, seedConnections, commands, scriptBytes, lapsedLock } = library.memory;
    return {
      pushesTwice: strategy.pushesTwice,
      commands,
      layout: {
        library: library.packageName,
        bytesPerJob,
        bytesPerDuplicate,
        pushesTwice: strategy.racesByDesign,
        connectionsPerCaller: own?.connectionsPerCaller ?? 1,
        seedConnections,
        scriptBytes,
        ...(lapsedLock ? { lapsedLock } : {}),
      },
    };
  }
  return { pushesTwice: strategy.pushesTwice, commands: strategy.commands ?? [] };
}

/**
 * What the report calls a mode's queue and its parts: a library's own words (libraries/table.ts)
 * for its modes, the model queue's for the tool's own. A mode's name as the JSON gives it may be
 * one no table holds (a test's): it speaks of the model queue.
 */
export function queueWords(mode: string): QueueWords {
  const library = (STRATEGIES as Readonly<Record<string, Strategy | undefined>>)[mode]?.library;
  return library ? LIBRARIES[library].words : MODEL_QUEUE_WORDS;
}

/** The modes that need `need`, in table order. */
export function modesNeeding(need: NonNullable<Strategy['needs']>): Mode[] {
  return modes().filter((mode) => STRATEGIES[mode].needs === need);
}

/** The modes `explain` replays (`--mode both`, its default), the loop's replay before the atomic one's. */
export function replayedModes(): Mode[] {
  return REPLAY_KINDS.flatMap((kind) => modes().filter((mode) => STRATEGIES[mode].replay === kind));
}

/** Which replay explains `mode` (a mode's name as the JSON gives it), if any. */
export function replayOf(mode: string): ReplayKind | undefined {
  return (STRATEGIES as Readonly<Record<string, Strategy>>)[mode]?.replay;
}

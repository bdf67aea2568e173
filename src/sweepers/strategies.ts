/**
 * The strategies, one entry per mode: how to build its sweeper and everything the rest of the tool
 * needs to know about it. The plan (which modes a server can run), the flags (which modes run on
 * --loop-jobs), the faults (which cannot reach a mode), the run (what to load before the race) and
 * the report (which columns a mode always shows) all read this table; none of them names a mode.
 *
 * A new strategy is a file in this folder, an entry here, and its name in MODES (model.ts).
 */
import type { FaultName, Mode } from '../model.js';
import type { MemoryTraits } from '../queue/memory-guard.js';
import type { SweeperFactory } from './sweeper.js';

export interface Strategy {
  /** One line for --help and the docs. */
  readonly summary: string;
  /**
   * Loads the strategy's file and gives the factory of its sweepers: a sweeper's code loads when a
   * run races it, not when --help lists the modes.
   */
  readonly factory: () => Promise<SweeperFactory>;
  /** A round trip per command: slow by nature, so the mode runs on --loop-jobs jobs. */
  readonly roundTrips: boolean;
  /**
   * What the run must bring before the race: the sweep loaded as a Redis Function (a server with
   * Functions), or the user's script file (--script).
   */
  readonly needs?: 'functions' | 'script-file';
  /** The audit checks the strategy's own record of its moves against the server (a script we did not write). */
  readonly crossChecked?: boolean;
  /** The report column this strategy always shows, even at zero (others show it only when not zero). */
  readonly ownColumn?: 'retries' | 'misreported';
  /** Faults that cannot reach this strategy, each with the reason the report gives. */
  readonly faultsThatMiss?: Partial<Readonly<Record<FaultName, string>>>;
  /** Its sweeps may push one job into a list pending twice: the memory check counts those entries. */
  readonly pushesTwice: boolean;
  /** Server commands it sends beyond every run's, each of which may cost the server a latency histogram. */
  readonly commands?: readonly string[];
}

export const STRATEGIES: Readonly<Record<Mode, Strategy>> = {
  atomic: {
    summary: 'the shipped Lua sweep: detect, move and count in one EVALSHA',
    factory: async () => (await import('./atomic.js')).atomicSweeper,
    roundTrips: false,
    pushesTwice: false,
  },
  loop: {
    summary: 'the same recovery as separate round trips from the application',
    factory: async () => (await import('./loop.js')).loopSweeper,
    roundTrips: true,
    pushesTwice: true,
    faultsThatMiss: { 'script-flush': 'the loop sends no script, so an emptied script cache cannot touch it' },
  },
  watch: {
    summary: 'round trips under WATCH, the move in MULTI/EXEC (optimistic locking)',
    factory: async () => (await import('./watch.js')).watchSweeper,
    roundTrips: true,
    pushesTwice: false,
    commands: ['watch', 'multi', 'exec', 'unwatch'],
    ownColumn: 'retries',
    faultsThatMiss: { 'script-flush': 'MULTI/EXEC sends no script, so an emptied script cache cannot touch it' },
  },
  claim: {
    summary: 'round trips where the ZREM that answers 1 is the claim, counted with HINCRBY',
    factory: async () => (await import('./zrem-claim.js')).claimSweeper,
    roundTrips: true,
    pushesTwice: false,
  },
  function: {
    summary: 'the atomic sweep loaded as a Redis Function and called with FCALL',
    factory: async () => (await import('./function.js')).functionSweeper,
    roundTrips: false,
    pushesTwice: false,
    commands: ['function|list', 'function|load', 'function|delete', 'fcall'],
    needs: 'functions',
    faultsThatMiss: { 'script-flush': 'functions are not in the script cache that SCRIPT FLUSH empties' },
  },
  script: {
    summary: 'your own sweep script (--script FILE.lua), under the same KEYS/ARGV contract',
    factory: async () => (await import('./script.js')).scriptSweeper,
    roundTrips: false,
    // A user's script may do anything: the check allows for the worst.
    pushesTwice: true,
    needs: 'script-file',
    crossChecked: true,
    ownColumn: 'misreported',
  },
};

/** What the memory check (queue/memory-guard.ts) needs of each mode, read from the table. */
export function memoryTraits(mode: Mode): MemoryTraits {
  const strategy = STRATEGIES[mode];
  return { pushesTwice: strategy.pushesTwice, commands: strategy.commands ?? [] };
}

/** The modes that need `need`, in table order. */
export function modesNeeding(need: NonNullable<Strategy['needs']>): Mode[] {
  return (Object.keys(STRATEGIES) as Mode[]).filter((mode) => STRATEGIES[mode].needs === need);
}

/**
 * The queue libraries a race can take its stalled-job recovery from (`--lib`): one entry per
 * library, its modes among them. The library itself is never ours: it is the user's installed
 * package, found from their project's folder (resolve.ts), an optional peer dependency of the tool.
 *
 * A new library is a folder beside bullmq/ whose `run.ts` runs one of its modes end to end, an
 * entry here, and its modes' names in MODES (model.ts) and the schema's mode enum
 * (docs/architecture.md, "How to add a library").
 */
import type { FaultName, LibraryName, Mode } from '../model.js';
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
}

export interface Library {
  /** The npm package the user installs. */
  readonly packageName: string;
  /** The versions the tool was tested with: from `from` up to, not including, `below`. */
  readonly tested: { readonly from: string; readonly below: string };
  readonly modes: readonly LibraryMode[];
  /** The faults its modes take (`--fault`); none unless named. `lapsed-lock` needs workers that hold locks. */
  readonly faults?: readonly FaultName[];
  /** What the tool calls of the package's exports, the first piece missing (its module.ts's loader refuses the same). */
  readonly lacks: Lacks;
  /** Its runner, loaded when a run needs it. */
  readonly load: () => Promise<LibraryRunner>;
}

export const LIBRARIES: Readonly<Record<LibraryName, Library>> = {
  bullmq: {
    packageName: 'bullmq',
    tested: { from: '6.7.0', below: '7.0.0' },
    modes: [
      { mode: 'bullmq', summary: "BullMQ's own stalled-job recovery, unmodified: its moveStalledJobsToWait script", racesByDesign: false, roundTrips: false },
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
    lacks: bullmqLacks,
    load: async () => (await import('./bullmq/run.js')).runBullmqMode,
  },
  'node-resque': {
    packageName: 'node-resque',
    tested: { from: '9.7.0', below: '10.0.0' },
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
    lacks: nodeResqueLacks,
    load: async () => (await import('./node-resque/run.js')).runNodeResqueMode,
  },
  'bee-queue': {
    packageName: 'bee-queue',
    tested: { from: '2.0.0', below: '3.0.0' },
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

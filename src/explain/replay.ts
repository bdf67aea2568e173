/** What one replay of a sweeping strategy produced: its timeline and its readout. */
import { READOUT_SOURCES, type Readout } from './readout.js';
import type { WireStep } from './wire.js';

export type ReplayMode = 'loop' | 'atomic';

/** The modes explain has a replay for, in the order it replays them without --mode. */
export const REPLAYED_MODES = ['loop', 'atomic'] as const satisfies readonly ReplayMode[];

export interface Replay {
  readonly mode: ReplayMode;
  readonly queue: string;
  readonly maxStalled: number;
  readonly stalledBefore: number;
  readonly jobId: string;
  /** The steps in the order they ran, as `A:detect` and the like. */
  readonly schedule: string[];
  readonly steps: WireStep[];
  readonly readout: Readout;
}

/** The JSON contract of one replay. */
export function replayJson(replay: Replay): object {
  return {
    mode: replay.mode,
    queue: replay.queue,
    jobId: replay.jobId,
    maxStalled: replay.maxStalled,
    stalledBefore: replay.stalledBefore,
    schedule: replay.schedule,
    steps: replay.steps.map((step) => ({ sweep: step.sweep, step: step.step, commands: step.commands, replies: step.replies })),
    readout: {
      recoverCount: replay.readout.recoverCount,
      pendingEntries: replay.readout.pendingEntries,
      stalled: replay.readout.stalled,
      expectedStalled: replay.readout.expectedStalled,
      lostIncrements: replay.readout.lostIncrements,
      extraIncrements: replay.readout.extraIncrements,
      endedIn: replay.readout.endedIn,
    },
    // Which readout figures were read back from the server and which this tool computed.
    readoutSources: READOUT_SOURCES,
  };
}

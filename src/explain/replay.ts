/** What one replay of a sweeping strategy produced: its timeline and its readout. */
import { READOUT_SOURCES, type Readout } from './readout.js';
import type { WireStep } from './wire.js';
import type { Mode } from '../shared/model.js';

export interface Replay {
  /** The mode replayed; which replay it was is its `replay` trait in the strategy table. */
  readonly mode: Mode;
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
      realStalled: replay.readout.realStalled,
      overcountedStalls: replay.readout.overcountedStalls,
      endedIn: replay.readout.endedIn,
    },
    // Which readout figures were read back from the server and which this tool computed.
    readoutSources: READOUT_SOURCES,
  };
}

/** The sweeping strategies by mode name. */
import type { Mode } from '../options.js';
import { atomicSweeper } from './atomic.js';
import { loopSweeper } from './loop.js';
import type { SweeperFactory } from './sweeper.js';

export const SWEEPERS: Record<Mode, SweeperFactory> = {
  atomic: atomicSweeper,
  loop: loopSweeper,
};

/** The sweeping strategies by mode name. */
import type { Mode } from '../cli/options.js';
import { atomicSweeper } from './atomic.js';
import { claimSweeper } from './zrem-claim.js';
import { functionSweeper } from './function.js';
import { loopSweeper } from './loop.js';
import { scriptSweeper } from './script.js';
import type { SweeperFactory } from './sweeper.js';
import { watchSweeper } from './watch.js';

export const SWEEPERS: Record<Mode, SweeperFactory> = {
  atomic: atomicSweeper,
  loop: loopSweeper,
  watch: watchSweeper,
  claim: claimSweeper,
  function: functionSweeper,
  script: scriptSweeper,
};

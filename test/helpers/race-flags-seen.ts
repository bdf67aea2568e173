/** The main command's flags at their defaults, as the HTML page's rerun line sees them: tests spread what they change over it. */
import type { RaceFlagsSeen } from '../../src/html/reproduce.js';
import { LIMITS } from '../../src/shared/model.js';

export const DEFAULT_FLAGS_SEEN: RaceFlagsSeen = {
  mode: ['atomic', 'loop'],
  sweepers: LIMITS.sweepers.default,
  jobs: LIMITS.jobs.default,
  batch: LIMITS.batch.default,
  maxStalled: LIMITS.maxStalled.default,
  stalledBefore: LIMITS.stalledBefore.default,
  probeDelay: LIMITS.probeDelay.default,
  keep: false,
  json: false,
};

/** Uniform: every firm changes at the same rate (0.02 a day); no planner can beat round robin here. */
import { MEAN_RATE, type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'uniform';
export const about = 'every firm changes at the same rate, 0.02/day';

export function createWorld(opts: WorldOptions): RefreshWorld {
  return new SyntheticWorld(opts, {
    initial: (records) => new Float64Array(records.length).fill(MEAN_RATE),
    dates: 'follow',
  });
}

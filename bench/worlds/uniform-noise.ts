/** Uniform rates and approval dates that say nothing: no planner can beat round robin, and misleading dates must not make it try. */
import { MEAN_RATE, type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'uniform-noise';
export const about =
  'every firm changes at the same rate, 0.02/day; approval dates random, unrelated to the changes';

export function createWorld(opts: WorldOptions): RefreshWorld {
  return new SyntheticWorld(opts, {
    initial: (records) => new Float64Array(records.length).fill(MEAN_RATE),
    dates: 'noise',
  });
}

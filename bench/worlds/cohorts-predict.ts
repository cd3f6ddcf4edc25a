/** Rates that the cohort predicts: the cohort sets the mean, firms spread a little around it. */
import { cohortRates } from './cohorts.ts';
import { type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'cohorts-predict';
export const about = 'rates set by cohort (σ 1.2 between cohorts, 0.5 within)';

export function createWorld(opts: WorldOptions): RefreshWorld {
  return new SyntheticWorld(opts, {
    initial: (records, rng) => cohortRates(records, rng, opts.seed, false),
    dates: 'follow',
  });
}

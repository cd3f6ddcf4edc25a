/** The rates of cohorts-predict dealt out at random: cohorts that say nothing of a firm's rate. */
import { cohortRates } from './cohorts.ts';
import { type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'cohorts-blind';
export const about = "cohorts-predict's rates shuffled across firms: the cohort predicts nothing";

export function createWorld(opts: WorldOptions): RefreshWorld {
  return new SyntheticWorld(opts, {
    initial: (records, rng) => cohortRates(records, rng, opts.seed, true),
    dates: 'follow',
  });
}

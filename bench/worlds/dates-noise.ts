/** Heavy-tailed stable rates, with approval dates (APPRDATE) that say nothing about real changes. */
import { lognormalRates, type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'dates-noise';
export const about = 'heavy-tailed stable rates; approval dates random, unrelated to the changes';

export function createWorld(opts: WorldOptions): RefreshWorld {
  return new SyntheticWorld(opts, {
    initial: (records, rng) => lognormalRates(records.length, 1.4, rng),
    dates: 'noise',
  });
}

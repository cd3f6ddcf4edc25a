/** Heavy-tailed rates that stay put: lognormal (σ 1.4), the 10% busiest firms make about 55% of the changes. */
import { lognormalRates, type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'heavy-tailed';
export const about = 'stable lognormal rates (σ 1.4): the top 10% of firms make about 55% of the changes';

export function createWorld(opts: WorldOptions): RefreshWorld {
  return new SyntheticWorld(opts, {
    initial: (records, rng) => lognormalRates(records.length, 1.4, rng),
    dates: 'follow',
  });
}

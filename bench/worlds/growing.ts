/**
 * A watchlist that grows: two fifths of the firms are watched from the first day, the rest are
 * added in weekly batches (an analyst's import each Monday) from the second week to the eleventh,
 * a tenth of them each time. Rates are lognormal (σ 1.2) and stay put; every change is approved
 * on its day.
 *
 * What it asks of a planner: every batch arrives with nothing but its registry dates to go on,
 * planned first (a company added today is bought today), while the planner has already learned
 * from the firms watched longer. Each batch must be estimated from the watchlist's lessons, not
 * from scratch, and must not starve the firms already known.
 */
import { lognormalRates, type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'growing';
export const about =
  '40% of the firms watched from day 1, the rest added in weekly batches to day 71; lognormal σ 1.2, stable';

const FIRST = 0.4;
const BATCHES = 10;

export function createWorld(opts: WorldOptions): RefreshWorld {
  return new SyntheticWorld(opts, {
    initial: (records, rng) => lognormalRates(records.length, 1.2, rng),
    joinsOn: (_i, _records, rng) =>
      rng.next() < FIRST ? 1 : Math.min(opts.days, 8 + 7 * Math.floor(rng.next() * BATCHES)),
    dates: 'follow',
  });
}

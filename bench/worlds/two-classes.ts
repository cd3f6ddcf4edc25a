/**
 * Two kinds of firm, half and half: busy ones that change about once a week (1/7 a day) and quiet
 * ones that change about once a year (1/365 a day), mixed at random through the watchlist and its
 * cohorts. A watchlist that is half operating companies (scope, phone, managers moving) and half
 * holding or dormant shells. Rates stay put; every change is approved on its day.
 *
 * What it asks of a planner: the firms' rates are not spread around one typical rate, as a Gamma
 * or lognormal prior assumes, but fall in two clusters 50 times apart. A prior of one shape pulls a
 * quiet firm's first changes toward the middle and a busy firm's quiet weeks toward it too; a
 * planner that learns the shape of the spread itself tells the two apart after a few fetches.
 */
import { type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'two-classes';
export const about = 'half the firms at 1/7 a day, half at 1/365, at random; rates stay put';

const BUSY = 1 / 7;
const QUIET = 1 / 365;

export function createWorld(opts: WorldOptions): RefreshWorld {
  return new SyntheticWorld(opts, {
    initial(records, rng) {
      const rates = new Float64Array(records.length);
      for (let i = 0; i < rates.length; i++) rates[i] = rng.next() < 0.5 ? BUSY : QUIET;
      return rates;
    },
    dates: 'follow',
  });
}

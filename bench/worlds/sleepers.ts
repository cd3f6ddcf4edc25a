/**
 * Sleepers that wake: a fifth of the watchlist is dormant (a shell company registered and left
 * alone, a firm that stopped trading but was never deregistered), with a change every five years
 * or so (0.0005 a day), and then, on a day of its own between two weeks in and two weeks before
 * the end, it wakes: a shell bought to start trading, a firm entering restructuring. Waking comes
 * with a flurry of filings (new legal representative, scope, address, capital, shareholders: 0.25
 * changes a day) that fades over about ten days (exponential, τ = 10 days) to the rate of an
 * ordinary active firm (0.03 a day). The other four fifths are ordinary firms whose rates stay
 * put: lognormal (σ 1.0) around 0.02 a day. The sleepers' last approval dates are old, as their
 * quiet says; every change is approved on its day.
 *
 * What it asks of a planner: a firm seen still for weeks, maybe months, is rightly planned rarely,
 * and then the first change it shows must raise its rate at once (and the flurry is in the lag).
 * The oracle is told each day's rate, so it knows the day a sleeper wakes.
 */
import { lognormalRates, type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'sleepers';
export const about =
  'a fifth dormant (0.0005/day) until a day of their own, then a flurry (0.25/day, τ 10 d) fading to 0.03/day; the rest lognormal σ 1.0';

const SLEEPER_SHARE = 0.2;
const DORMANT = 0.0005;
const FLURRY = 0.25;
const FADE_DAYS = 10;
const AWAKE = 0.03;
const FIRST_WAKE = 14;

export function createWorld(opts: WorldOptions): RefreshWorld {
  const wakes = new Int32Array(opts.firms).fill(-1);
  return new SyntheticWorld(opts, {
    initial(records, rng) {
      const rates = lognormalRates(records.length, 1.0, rng);
      const last = Math.max(FIRST_WAKE, opts.days - FIRST_WAKE);
      for (let i = 0; i < rates.length; i++) {
        if (rng.next() >= SLEEPER_SHARE) continue;
        rates[i] = DORMANT;
        wakes[i] = FIRST_WAKE + rng.int(0, last - FIRST_WAKE);
      }
      return rates;
    },
    rateOn(i, day, base) {
      const wake = wakes[i] as number;
      if (wake < 0 || day < wake) return base[i] as number;
      return AWAKE + (FLURRY - AWAKE) * Math.exp(-(day - wake) / FADE_DAYS);
    },
    dates: 'follow',
  });
}

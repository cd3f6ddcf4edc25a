/**
 * Bursty: every firm is quiet for long stretches (a change every 250 days or so) and now and then
 * (about every 45 days) enters a burst of a few days (mean 5) with a change most days.
 */
import { type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'bursty';
export const about = 'long quiet periods (rate 0.004/day), bursts every ~45 days of ~5 days at 0.35/day';

const QUIET = 0.004;
const BURST = 0.35;
const START = 1 / 45;
const MEAN_LENGTH = 5;

export function createWorld(opts: WorldOptions): RefreshWorld {
  const left = new Int32Array(opts.firms);
  const share = MEAN_LENGTH / (1 / START + MEAN_LENGTH);
  const longRun = QUIET * (1 - share) + BURST * share;
  return new SyntheticWorld(opts, {
    initial: (records) => new Float64Array(records.length).fill(longRun),
    rateOn(i, _day, _base, rng) {
      if ((left[i] as number) > 0) {
        left[i] = (left[i] as number) - 1;
        return BURST;
      }
      if (rng.next() < START) {
        // A geometric length of mean MEAN_LENGTH, today included.
        let n = 1;
        while (rng.next() > 1 / MEAN_LENGTH) n++;
        left[i] = n - 1;
        return BURST;
      }
      return QUIET;
    },
    dates: 'follow',
  });
}

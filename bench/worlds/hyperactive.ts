/**
 * Hyperactive outliers among identical firms: a handful of firms (1% of the watchlist, at least 3)
 * change most days (0.3 to 0.9 changes a day, lognormal around 0.5): a listed group whose
 * branches and shareholders move daily, a firm in liquidation filing every step, a platform
 * company adding business scope line by line. Every other firm is one of hundreds alike: small
 * private firms of the same kind, each changing about once in a hundred days (0.01 a day),
 * independently. At 500 firms, the five outliers make about a third of all changes. Rates stay
 * put; every change is approved on its day.
 *
 * What it asks of a planner: the evidence that rates differ is a handful of entries, not a spread
 * over the whole watchlist, yet those few are where most of the lag is; holding every entry alike
 * costs their changes days of lag each, and trusting noisy estimates of the others costs the rest.
 */
import { gaussian, type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'hyperactive';
export const about =
  '1% of firms (at least 3) at 0.3–0.9 changes/day among identical firms at 0.01/day; rates stay put';

const OUTLIER_SHARE = 0.01;
const MIN_OUTLIERS = 3;
const QUIET = 0.01;

export function createWorld(opts: WorldOptions): RefreshWorld {
  return new SyntheticWorld(opts, {
    initial(records, rng) {
      const n = records.length;
      const rates = new Float64Array(n).fill(QUIET);
      const k = Math.min(n, Math.max(MIN_OUTLIERS, Math.round(n * OUTLIER_SHARE)));
      // k distinct firms, anywhere in the watchlist.
      const order = Array.from({ length: n }, (_, i) => i);
      for (let j = 0; j < k; j++) {
        const m = rng.int(j, n - 1);
        [order[j], order[m]] = [order[m] as number, order[j] as number];
        rates[order[j] as number] = Math.min(0.9, Math.max(0.3, 0.5 * Math.exp(0.35 * gaussian(rng))));
      }
      return rates;
    },
    dates: 'follow',
  });
}

/** Heavy-tailed rates, until half-way 20% of the firms swap: the busiest tenth with a tenth of the quiet half. */
import { lognormalRates, type RefreshWorld, SyntheticWorld, type WorldOptions } from './world.ts';

export const family = 'regime-shift';
export const about = 'heavy-tailed, then half-way the busiest 10% swap rates with 10% of the quiet half';

export function createWorld(opts: WorldOptions): RefreshWorld {
  const shiftDay = Math.max(1, Math.floor(opts.days / 2));
  return new SyntheticWorld(opts, {
    initial: (records, rng) => lognormalRates(records.length, 1.4, rng),
    beforeDay(day, base, rng) {
      if (day !== shiftDay) return;
      const order = Array.from(base.keys()).sort((a, b) => (base[b] as number) - (base[a] as number));
      const k = Math.floor(base.length / 10);
      const busy = order.slice(0, k);
      const quiet = order.slice(Math.floor(base.length / 2));
      for (let j = quiet.length - 1; j > 0; j--) {
        const m = rng.int(0, j);
        [quiet[j], quiet[m]] = [quiet[m] as number, quiet[j] as number];
      }
      for (let j = 0; j < k && j < quiet.length; j++) {
        const a = busy[j] as number;
        const b = quiet[j] as number;
        [base[a], base[b]] = [base[b] as number, base[a] as number];
      }
    },
    dates: 'follow',
  });
}

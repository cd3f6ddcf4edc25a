/** Rates set by cohort (status, type, industry, capital band): shared by cohorts-predict and cohorts-blind. */

import { cohortKey } from '../../src/normalize/cohort.ts';
import { normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import { hash32, Rng } from '../../src/sim/rng.ts';
import type { EnterpriseRecord } from '../../src/upstream/schemas.ts';
import { gaussian, MEAN_RATE } from './world.ts';

/**
 * Each cohort's mean is a lognormal draw (σ 1.2) by its key; a firm's rate is its cohort's times
 * a lognormal spread within (σ 0.5). `shuffle` then deals the same rates out at random, so the
 * cohorts say nothing.
 */
export function cohortRates(
  records: readonly EnterpriseRecord[],
  rng: Rng,
  seed: number,
  shuffle: boolean,
): Float64Array {
  const out = Float64Array.from(records, (r) => {
    const key = cohortKey(normalizeEnterprise(r));
    const c = new Rng(hash32(`${seed}:${key}`));
    const cohortMean = Math.exp(1.2 * gaussian(c) - 0.72);
    return Math.min(0.9, MEAN_RATE * cohortMean * Math.exp(0.5 * gaussian(rng) - 0.125));
  });
  if (shuffle)
    for (let j = out.length - 1; j > 0; j--) {
      const m = rng.int(0, j);
      [out[j], out[m]] = [out[m] as number, out[j] as number];
    }
  return out;
}

/**
 * The test for changed habits: whether an entry's last intervals (`ChangeHistory.recent`) are
 * better explained by a recent change of its habits than by its long record, and the rate to
 * plan with either way (`afterShift`, which `estimateShift` of src/plan/estimate.ts runs). A firm
 * that was quiet for years and is now busy, or the other way round, is planned at what its last
 * intervals show once they contradict its long record.
 */

import { MAX_RATE, MIN_RATE, type RatePrior } from './model.ts';

/**
 * How likely it is, before its last intervals are seen, that a firm's habits have changed within
 * them: the prior of `afterShift`'s accounts, spread evenly over where the change began. Not
 * learned: the mean of the entries' posteriors (an EM step) sinks toward zero even in a watchlist
 * where a fifth of the firms swap habits, because one interval rarely proves a change; a fixed
 * prior is what keeps a planner that has learned the wrong firms from starving the right ones. In a
 * watchlist whose habits hold it costs about one refresh in a hundred (a quiet firm's chance change
 * makes its next interval shorter).
 */
export const SHIFT_PRIOR = 0.15;
/** The largest shift prior a stored model may hold. */
export const MAX_SHIFT = 0.5;

/** The rates the shift test integrates over: a grid on the log scale from MIN_RATE to MAX_RATE. */
const GRID: readonly number[] = Array.from({ length: 49 }, (_, k) =>
  Math.exp(Math.log(MIN_RATE) + (k * (Math.log(MAX_RATE) - Math.log(MIN_RATE))) / 48),
);

const logSumExp = (xs: readonly number[]) => {
  const m = Math.max(...xs);
  return m === Number.NEGATIVE_INFINITY ? m : m + Math.log(xs.reduce((a, x) => a + Math.exp(x - m), 0));
};

/**
 * The rate to plan with, given the long record's rate `long` and the last intervals (oldest
 * first): the expected rate over several accounts of them. Either the firm's habits held (every
 * last interval at `long`), or they changed before the last k of them (k = 1 … all), and those k
 * came from a fresh draw from the cohort's prior. The changes together are believed `shiftPrior`
 * before the intervals are seen (evenly over k), then as far as each explains them better (Bayes'
 * rule, each marginal likelihood integrated over a grid of rates). A quiet firm whose interval ends
 * changed is planned at once at a higher rate, and at nearly its new rate when it does so again;
 * a firm whose habits hold keeps its rate. `shift` is the posterior probability of a change.
 */
export function afterShift(
  long: number,
  recent: readonly (readonly [number, number])[],
  prior: RatePrior,
  shiftPrior: number,
): { rate: number; shift: number } {
  // Without a prior (the maximum-likelihood estimate) there is no cohort to draw a new habit from.
  if (recent.length === 0 || !(shiftPrior > 0) || !(prior.strength > 0) || !(prior.rate > 0))
    return { rate: long, shift: 0 };
  const p = Math.min(MAX_SHIFT, shiftPrior);
  const shape = prior.rate * prior.strength;
  const logPrior = GRID.map((l) => shape * Math.log(l) - prior.strength * l);
  const logZ = logSumExp(logPrior);
  const joint = [...logPrior];
  // Account 0: habits held. Account k: a change before the last k intervals.
  const weights = [Math.log(1 - p)];
  const means = [long];
  let held = 0;
  for (let k = recent.length - 1; k >= 0; k--) {
    const [days, changed] = recent[k] as readonly [number, number];
    const at = (l: number) =>
      changed === 1 ? Math.log(Math.max(1e-300, -Math.expm1(-l * days))) : -l * days;
    for (let g = 0; g < GRID.length; g++) joint[g] = (joint[g] as number) + at(GRID[g] as number);
    held += at(long);
    const top = logSumExp(joint);
    weights.push(Math.log(p / recent.length) + top - logZ - held);
    let mean = 0;
    for (let g = 0; g < GRID.length; g++) mean += (GRID[g] as number) * Math.exp((joint[g] as number) - top);
    means.push(mean);
  }
  const all = logSumExp(weights);
  let rate = 0;
  for (const [k, w] of weights.entries()) rate += Math.exp(w - all) * (means[k] as number);
  return {
    rate: Math.min(MAX_RATE, Math.max(MIN_RATE, rate)),
    shift: 1 - Math.exp((weights[0] as number) - all),
  };
}

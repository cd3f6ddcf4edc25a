/**
 * The `bayes` policy of the refresh backtest (bench/refresh.ts): each firm's rate estimated by
 * Bayes' rule from what its fetches saw, with the world's true spread of rates as the prior. No
 * planner can know that spread; it is the best a watchlist could ever learn of it. Where rates
 * stay put and cohorts say nothing, this is the bound on what a better estimate of each firm's rate
 * (from its own fetches) could gain: the distance from `new` to `bayes` is what estimation leaves,
 * the distance from `bayes` to `oracle` is what the fetches cannot tell.
 */
import { type ChangeHistory, MAX_RATE, MIN_RATE } from '../src/plan/model.ts';
import { gridLogLik } from '../src/plan/spread.ts';

/** The rates the posterior is taken over: a log grid from MIN_RATE to MAX_RATE, 8 points a factor of e. */
const STEPS = 106;
const LOG_MIN = Math.log(MIN_RATE);
const STEP = (Math.log(MAX_RATE) - LOG_MIN) / (STEPS - 1);
const GRID: readonly number[] = Array.from({ length: STEPS }, (_, k) => Math.exp(LOG_MIN + k * STEP));

/** The log prior weights on the grid: how many of `rates` round to each point (a tiny floor elsewhere). */
export function spreadPrior(rates: ArrayLike<number>): Float64Array {
  const counts = new Float64Array(STEPS).fill(1e-6);
  for (let i = 0; i < rates.length; i++) {
    const r = Math.min(MAX_RATE, Math.max(MIN_RATE, rates[i] as number));
    const k = Math.round((Math.log(r) - LOG_MIN) / STEP);
    counts[k] = (counts[k] as number) + 1;
  }
  return counts.map(Math.log);
}

/**
 * The posterior mean rate of an entry under `logPrior`: the registry dates as Poisson exposure
 * (weighed as the planner weighs them), every undated interval as changed or not.
 */
export function bayesRate(h: ChangeHistory, logPrior: Float64Array, datedWeight: number): number {
  const ll = gridLogLik(h, GRID, datedWeight);
  const logPost = GRID.map((_, k) => (logPrior[k] as number) + (ll[k] as number));
  const top = Math.max(...logPost);
  let z = 0;
  let sum = 0;
  for (const [k, rate] of GRID.entries()) {
    const p = Math.exp((logPost[k] as number) - top);
    z += p;
    sum += p * rate;
  }
  return sum / z;
}

/**
 * The one backoff rule: how long to wait after a failure before trying again. Every waiting
 * loop (BullMQ's job retries, the inline runner, database patience, Redis and Postgres
 * reconnects, webhook deliveries) computes its waits here; they differ only in the numbers.
 */

export interface Backoff {
  /** The wait after the first failure (attempt 0), before jitter, in ms. */
  baseMs: number;
  /** Each further failure multiplies the wait by this: 2 doubles it (the default), 1 keeps it. */
  factor?: number;
  /** The longest wait, jitter included, in ms (default: none). */
  capMs?: number;
  /** The share of each wait taken at random, in [0, 1] (default 0: no jitter). */
  jitter?: number;
  /**
   * Which way jitter goes: 'down' takes up to `jitter` of the wait off (BullMQ's own
   * exponential backoff), 'both' makes it up to `jitter` shorter or longer (Svix's schedule).
   */
  jitterMode?: 'down' | 'both';
}

/**
 * The wait after failure number `attempt` (0 for the first failure), in whole ms. With
 * r = `random()` in [0, 1) and w = round(min(capMs, baseMs · factor^attempt)):
 *
 * - no jitter: w;
 * - 'down' (default): floor(r · w · jitter + w · (1 − jitter)), so within [⌊w · (1 − jitter)⌋, w];
 * - 'both': round(w · (1 − jitter + 2 · jitter · r)), so within w · (1 ± jitter), rounded;
 *
 * and never more than capMs, so every wait is in [0, capMs]. Each mode keeps the rounding of the
 * rule it came from (BullMQ floors, the webhook schedule rounds), so those waits are unchanged to
 * the millisecond. With factor ≥ 1 the wait never shrinks from one attempt to the next for the
 * same r, so neither does its expectation.
 */
export function backoffMs(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  const { baseMs, factor = 2, capMs = Number.POSITIVE_INFINITY, jitter = 0, jitterMode = 'down' } = backoff;
  if (!(attempt >= 0)) throw new RangeError(`attempt must be 0 or more, not ${attempt}`);
  if (!(baseMs >= 0)) throw new RangeError(`baseMs must be 0 or more, not ${baseMs}`);
  if (!(capMs >= 0)) throw new RangeError(`capMs must be 0 or more, not ${capMs}`);
  if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`jitter must be within [0, 1], not ${jitter}`);
  const w = Math.round(Math.min(capMs, baseMs * factor ** attempt));
  if (jitter === 0) return w;
  const r = random();
  const wait =
    jitterMode === 'down'
      ? Math.floor(r * w * jitter + w * (1 - jitter))
      : Math.round(w * (1 - jitter + 2 * jitter * r));
  return Math.min(capMs, wait);
}

/**
 * A seeded random in [0, 1) (mulberry32) to pass as `random`: the same seed gives the same
 * waits, for tests and reproducible simulations.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

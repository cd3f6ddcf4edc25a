/**
 * A sliding 60-second window per key: the strictest reading of "100 requests per minute", so a
 * client that passes here passes a fixed-window upstream too. Only admitted requests count.
 */
export class SlidingWindowLimiter {
  readonly windowMs: number;
  private readonly admitted = new Map<string, number[]>();

  constructor(windowMs = 60_000) {
    this.windowMs = windowMs;
  }

  /**
   * Admits a request at `nowMs` when fewer than `limit` were admitted in the window before it.
   * Returns 0 when admitted, else the ms until a slot frees.
   */
  tryAcquire(key: string, limit: number, nowMs: number): number {
    let times = this.admitted.get(key);
    if (!times) {
      times = [];
      this.admitted.set(key, times);
    }
    const from = nowMs - this.windowMs;
    let drop = 0;
    while (drop < times.length && (times[drop] as number) <= from) drop++;
    if (drop > 0) times.splice(0, drop);
    if (times.length >= limit)
      return Math.max(1, (times[times.length - limit] as number) + this.windowMs - nowMs);
    times.push(nowMs);
    return 0;
  }

  reset(): void {
    this.admitted.clear();
  }
}

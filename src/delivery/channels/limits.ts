/**
 * The chat vendors' documented rate limits: a DingTalk custom robot takes 20 messages a minute
 * (past that it is throttled for 10 minutes), a WeCom group bot 20 a minute. A subscription of
 * these formats never sends more: a burst is folded into as few messages as the vendor's size
 * allows (engine.ts). Pure.
 */
export const RATE_LIMITED = ['dingtalk', 'wecom'] as const;

/** Messages per window. */
export const PER_WINDOW = 20;
/** The window, as the vendors count it. */
export const WINDOW_MS = 60_000;

export const isRateLimited = (format: string): boolean =>
  (RATE_LIMITED as readonly string[]).includes(format);

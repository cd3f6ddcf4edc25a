/**
 * The chat vendors' documented rate limits, per bot:
 * - a DingTalk custom robot takes 20 messages a minute, and past that is throttled for 10 minutes;
 * - a WeCom group bot takes 20 a minute;
 * - a Feishu (Lark) custom bot takes 100 a minute and 5 a second. One window of 5 messages in
 *   3 seconds keeps both: never more than 5 in any second, never more than 100 in any minute.
 * A subscription of these formats never sends more. Events due together go one message each, as
 * the window has room, as long as the vendor's minute can take them all; a burst beyond that is
 * folded by company into as few messages as the vendor's size allows (engine.ts). Slack, Teams
 * and mail keep a count too, so that every format read by people goes through the same path:
 * one message per company and cycle, sent one after another in a stable order; a "too many
 * requests" (429) answer is waited out as well. Pure.
 */
/** The chat vendors daybook renders messages for (mail aside). */
export const CHAT_FORMATS = ['feishu', 'dingtalk', 'wecom', 'teams', 'slack'] as const;
export type ChatFormat = (typeof CHAT_FORMATS)[number];

export interface RateLimit {
  /** Messages per window. */
  perWindow: number;
  /** The window, as the vendor counts it. */
  windowMs: number;
  /** Messages a minute: due events beyond this many are folded rather than sent one by one. */
  perMinute: number;
}

export const RATE_LIMITS = {
  dingtalk: { perWindow: 20, windowMs: 60_000, perMinute: 20 },
  wecom: { perWindow: 20, windowMs: 60_000, perMinute: 20 },
  feishu: { perWindow: 5, windowMs: 3_000, perMinute: 100 },
  // Slack: one message a second per incoming webhook (short bursts tolerated).
  slack: { perWindow: 1, windowMs: 1_000, perMinute: 60 },
  // Teams (Workflows webhooks): a few requests a second; 429s past it are waited out as well.
  teams: { perWindow: 4, windowMs: 1_000, perMinute: 60 },
  // Mail: no vendor count, but a burst of mails to one address is folded all the same.
  email: { perWindow: 30, windowMs: 60_000, perMinute: 30 },
} as const satisfies Record<string, RateLimit>;

export const RATE_LIMITED = Object.keys(RATE_LIMITS) as (keyof typeof RATE_LIMITS)[];

/** The limit of `format`, or null when daybook keeps none for it. */
export const rateLimitOf = (format: string): RateLimit | null =>
  Object.hasOwn(RATE_LIMITS, format) ? RATE_LIMITS[format as keyof typeof RATE_LIMITS] : null;

/** The most messages any limited vendor takes in one window: a batch's sends, one after another. */
export const MOST_PER_WINDOW = Math.max(...Object.values(RATE_LIMITS).map((l) => l.perWindow));

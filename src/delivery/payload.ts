/**
 * What a delivery sends: the body in the subscription's format, and the Standard Webhooks
 * headers. `webhook-id` is the event id, the same on every attempt, so a receiver deduplicates on
 * it. During a secret rotation both secrets sign (two `v1,` signatures, space-separated).
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Envelope } from '../events/feed.ts';
import { stringifyExact } from '../upstream/json.ts';

/** A new endpoint secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks has them. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Every format a subscription may take: a webhook's, a chat vendor's, or a mail. */
export const FORMATS = ['standard', 'slack', 'feishu', 'dingtalk', 'wecom', 'teams', 'email'] as const;
export type Format = (typeof FORMATS)[number];

/** The JSON body of a webhook: Standard Webhooks' `type`, `timestamp` and `data` (the event). */
export function bodyOf(_format: 'standard', e: Envelope): string {
  // A number the upstream sent with more digits than a double holds goes out with every digit.
  return stringifyExact({ type: e.type, timestamp: e.detected_at, data: e });
}

/** The Standard Webhooks headers for `body`, signed by every secret given. */
export function signedHeaders(
  eventId: string,
  body: string,
  secrets: readonly string[],
  at: Date,
): Record<string, string> {
  const signatures = secrets.map((s) => new Webhook(s).sign(eventId, at, body));
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

/**
 * The signatures of the chat vendors' custom bots, as their documentation gives them. Pure.
 *
 * - Feishu (Lark): HMAC-SHA256 keyed by `timestamp + "\n" + secret` over an empty message, in
 *   base64; the body carries `timestamp` (seconds, a string) and `sign`.
 * - DingTalk: HMAC-SHA256 of `timestamp + "\n" + secret` keyed by the secret, in base64, then
 *   URL-encoded; the URL carries `timestamp` (milliseconds) and `sign`.
 */
import { createHmac } from 'node:crypto';

export function feishuSign(secret: string, timestampSeconds: number): string {
  return createHmac('sha256', `${timestampSeconds}\n${secret}`).update('').digest('base64');
}

export function dingtalkSign(secret: string, timestampMs: number): string {
  return encodeURIComponent(
    createHmac('sha256', secret).update(`${timestampMs}\n${secret}`).digest('base64'),
  );
}

/** A Feishu body with its `timestamp` and `sign` added (unchanged without a secret). */
export function signedFeishuBody(body: string, secret: string | null, at: Date): string {
  if (!secret) return body;
  const timestamp = Math.floor(at.getTime() / 1000);
  const parsed = JSON.parse(body) as Record<string, unknown>;
  return JSON.stringify({ timestamp: String(timestamp), sign: feishuSign(secret, timestamp), ...parsed });
}

/** A DingTalk robot URL with its `timestamp` and `sign` (unchanged without a secret). */
export function signedDingtalkUrl(url: string, secret: string | null, at: Date): URL {
  const u = new URL(url);
  if (!secret) return u;
  const timestamp = at.getTime();
  u.searchParams.delete('timestamp');
  u.searchParams.delete('sign');
  // `sign` is URL-encoded already, as DingTalk documents: appended as is, not encoded twice.
  u.search = `${u.search ? `${u.search}&` : '?'}timestamp=${timestamp}&sign=${dingtalkSign(secret, timestamp)}`;
  return u;
}

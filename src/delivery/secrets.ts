/**
 * The secrets inside a receiver's URL, so they never reach a log line, an event, an error or a
 * listing: a DingTalk robot's `access_token`, a WeCom bot's `key`, a Teams Workflows `sig`, and
 * the token a Feishu or Slack hook holds in its path. Pure.
 */
import { redactSecrets } from '../log/redact.ts';

const QUERY_SECRETS = ['access_token', 'key', 'sig', 'token', 'sign'];

export function urlSecrets(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of QUERY_SECRETS) for (const v of u.searchParams.getAll(name)) out.push(v);
  // A hook URL's path past its first segment can be its token (Feishu /open-apis/bot/v2/hook/<token>).
  const segments = u.pathname.split('/').filter(Boolean);
  const at = segments.findIndex((s) => /^(hook|hooks|services)$/i.test(s));
  out.push(...(at >= 0 ? segments.slice(at + 1) : []), ...segments.slice(1).filter((s) => s.length >= 16));
  return out.filter((s) => s.length >= 4);
}

/** `text` with the secrets of `url` and the signing secret cut out. */
export function withoutSecrets(
  text: string | null,
  url: string,
  signingSecret: string | null,
): string | null {
  if (text === null) return null;
  return redactSecrets(text, [...urlSecrets(url), ...(signingSecret ? [signingSecret] : [])]);
}

/**
 * What a chat vendor's answer means. Feishu, DingTalk and WeCom answer HTTP 200 whatever happened
 * and say in the body whether they took the message: Feishu `{"code": 0}` (or, from older bots,
 * `{"StatusCode": 0}`), DingTalk and WeCom `{"errcode": 0}`. Anything else in the body is a
 * refusal with the vendor's reason (Feishu 19021: the signature did not match; DingTalk 310000:
 * a keyword, signature or IP rule refused it), except the vendors' "sending too fast" answers
 * (Feishu 11232, DingTalk 130101, WeCom 45009): those say wait, not that the endpoint is wrong.
 * Pure.
 */

export type Verdict =
  | { ok: true }
  | { ok: false; reason: string; rateLimited: false }
  | { ok: false; reason: string; rateLimited: true; waitMs: number };

/** DingTalk throttles a robot for 10 minutes past its 20 messages a minute. */
export const DINGTALK_THROTTLE_MS = 10 * 60_000;
export const WECOM_THROTTLE_MS = 60_000;
/** Feishu counts a bot's messages by the minute. */
export const FEISHU_THROTTLE_MS = 60_000;
/** An HTTP 429 without a Retry-After. */
export const TOO_MANY_WAIT_MS = 60_000;

function parsed(text: string | null): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text ?? '') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const message = (v: unknown) => (typeof v === 'string' && v !== '' ? `: ${v}` : '');

/**
 * The verdict on a 2xx answer of `format` whose body (as kept) is `text`; formats that answer
 * with the status alone are always ok.
 */
export function readAnswer(format: string, text: string | null): Verdict {
  if (format !== 'feishu' && format !== 'dingtalk' && format !== 'wecom') return { ok: true };
  const body = parsed(text);
  if (!body) return { ok: false, reason: `${format} answered without its JSON result`, rateLimited: false };
  if (format === 'feishu') {
    const code = body.code ?? body.StatusCode;
    if (code === 0) return { ok: true };
    const reason = `feishu refused the message: code ${String(code)}${message(body.msg ?? body.StatusMessage)}`;
    if (code === 11232) return { ok: false, reason, rateLimited: true, waitMs: FEISHU_THROTTLE_MS };
    return { ok: false, reason, rateLimited: false };
  }
  const code = body.errcode;
  if (code === 0) return { ok: true };
  const reason = `${format} refused the message: errcode ${String(code)}${message(body.errmsg)}`;
  if (format === 'dingtalk' && code === 130101)
    return { ok: false, reason, rateLimited: true, waitMs: DINGTALK_THROTTLE_MS };
  if (format === 'wecom' && code === 45009)
    return { ok: false, reason, rateLimited: true, waitMs: WECOM_THROTTLE_MS };
  return { ok: false, reason, rateLimited: false };
}

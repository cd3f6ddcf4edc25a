/**
 * What a chat vendor's answer means. Feishu, DingTalk and WeCom answer HTTP 200 whatever happened
 * and say in the body whether they took the message: Feishu `{"code": 0}` (or, from older bots,
 * `{"StatusCode": 0}`), DingTalk and WeCom `{"errcode": 0}`. Anything else in the body is a
 * refusal with the vendor's reason (Feishu 19021: the signature did not match; DingTalk 310000:
 * a keyword, signature or IP rule refused it), except the vendors' "sending too fast" answers
 * (Feishu 11232, DingTalk 130101, WeCom 45009): those say wait, not that the endpoint is wrong.
 *
 * A Slack incoming webhook says it with the HTTP status instead: 200 and the body `ok` when it took
 * the message, else an error status and one word in the body: 400 `invalid_payload` or `no_text`
 * (the message), 403 `action_prohibited` (a workspace rule), 404 `channel_not_found` or
 * `no_service` (the channel or the webhook is gone), 410 `channel_is_archived`, 429 with a
 * Retry-After (too fast: waited out by the sender, dispatch.ts). Pure.
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
  if (format === 'slack') {
    // Slack answers 200 `ok`; one of its error words in a 2xx body is a refusal all the same.
    const word = slackWord(text);
    return word && word !== 'ok'
      ? { ok: false, reason: `slack refused the message: ${word}${slackMeaning(word)}`, rateLimited: false }
      : { ok: true };
  }
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

/** What Slack's error words say, for the attempt log. */
const SLACK_ERRORS: Record<string, string> = {
  invalid_payload: 'the message is not valid JSON or not a message Slack takes',
  no_text: 'the message has no text',
  action_prohibited: "a rule of the workspace's administrators keeps the webhook from posting",
  posting_to_general_channel_denied: 'only some members may post in that channel',
  channel_not_found: 'the channel is gone, or the webhook may no longer post in it',
  channel_is_archived: 'the channel is archived',
  no_service: 'the webhook is disabled, removed or not valid',
  no_service_id: 'the webhook URL is not valid',
  no_team: 'the workspace is gone or the webhook URL is not valid',
  team_disabled: 'the workspace is disabled',
  invalid_token: 'the webhook URL is not valid',
  too_many_attachments: 'the message has too many attachments',
  user_not_found: 'the user is gone',
};

/** The one word a Slack answer holds (`ok`, `no_service` …), or null. */
function slackWord(text: string | null): string | null {
  const t = (text ?? '').trim();
  return /^[a-z_]{1,64}$/.test(t) ? t : null;
}

const slackMeaning = (word: string) => (SLACK_ERRORS[word] ? ` (${SLACK_ERRORS[word]})` : '');

/**
 * The vendor's reason for an answer that is not a 2xx (the status alone says it was refused), or
 * null when the vendor says nothing more than the status: Slack's error word and what it means.
 */
export function readRefusal(format: string, status: number, text: string | null): string | null {
  if (format !== 'slack') return null;
  const word = slackWord(text);
  return `slack refused the message: HTTP ${status}${word ? `: ${word}${slackMeaning(word)}` : ''}`;
}

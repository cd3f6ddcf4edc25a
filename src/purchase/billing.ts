/**
 * What an upstream answer cost, read one way for every path (a success, a success that failed
 * validation, a success that broke off in transit). The upstream bills an enterprise query once
 * its content is processed, and says how much in `metadata.usage.credits`; an error answer is not
 * billed. When a billed answer states no readable amount (absent, null, not a number, negative,
 * fractional, or beyond what a ledger row holds), the configured cost per query is booked instead
 * and the remark says so: the one documented fallback.
 */

import { presumedBillingOf } from '../upstream/client.ts';
import {
  BodyTooDeepError,
  BodyTooLargeError,
  NetworkError,
  TimeoutError,
  UnexpectedResponseError,
  type UpstreamError,
} from '../upstream/errors.ts';
import type { Billing } from './fetches.ts';

/** The credits of one billed answer and how they were known. */
export interface AnswerCost {
  credits: number;
  /** stated: the answer said; assumed: it did not, and the configured cost was booked. */
  basis: 'stated' | 'assumed';
  remark: string | null;
}

const MAX_CREDITS = 2_147_483_647;

/** Reads a stated amount: a non-negative integer, as a number or a numeric string; else null. */
export function statedCredits(value: unknown): number | null {
  let n: number | null = null;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\s*\d+(\.0+)?\s*$/.test(value)) n = Number(value);
  if (n === null || !Number.isInteger(n) || n < 0 || n > MAX_CREDITS) return null;
  return n;
}

/** The cost of a billed answer whose `metadata.usage` is `usage` (whatever its shape). */
export function costOfAnswer(usage: unknown, configuredCost: number): AnswerCost {
  const u = usage !== null && typeof usage === 'object' ? (usage as Record<string, unknown>) : {};
  const remark = typeof u.remark === 'string' ? u.remark : null;
  const stated = statedCredits(u.credits);
  if (stated !== null) return { credits: stated, basis: 'stated', remark };
  const seen = u.credits === undefined ? 'no amount' : `an unreadable amount (${describe(u.credits)})`;
  return {
    credits: configuredCost,
    basis: 'assumed',
    remark: `${remark ? `${remark}; ` : ''}the answer stated ${seen}: the configured ${configuredCost} credits were booked`,
  };
}

/** `metadata.usage` of a parsed JSON body, whatever the body's shape. */
export function usageOf(body: unknown): unknown {
  if (body === null || typeof body !== 'object') return undefined;
  const metadata = (body as Record<string, unknown>).metadata;
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return undefined;
  return (metadata as Record<string, unknown>).usage;
}

/** Whether a parsed JSON body is an enterprise success, which the upstream bills (validated or not). */
export function isBilledSuccess(body: unknown): boolean {
  return (
    body !== null &&
    typeof body === 'object' &&
    !Array.isArray(body) &&
    (body as Record<string, unknown>).status === 'success'
  );
}

function describe(v: unknown): string {
  const text = typeof v === 'string' ? JSON.stringify(v) : String(JSON.stringify(v) ?? v);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/**
 * What a failed call cost. Error answers are not billed (the upstream bills once content is
 * processed); a success is, whether it broke off in transit or failed validation, at the amount
 * it stated or the configured cost (src/purchase/billing.ts). An HTTP 200 answer that began to
 * arrive and could not complete is presumed billed unless its bytes prove it an error
 * (src/upstream/client.ts `presumedBillingOf`), and booked at once.
 */
export function billingOfFailure(
  err: UpstreamError,
  configuredCost: number,
  rawResponseId: number,
  landedAt: Date,
  runId: number | null,
): Billing | null {
  let usage: unknown;
  let pid: string | null = null;
  let note: string;
  // A 200 that arrived in part (cut off in transit, by the timeout, or at the size limit) or
  // could not be read (too deep, not parseable).
  const broken = presumedBillingOf(err);
  if (broken) {
    usage = broken.credits === null ? {} : { credits: broken.credits };
    pid = broken.pid;
    const bytes = err.response?.bodyBytes?.length ?? Buffer.byteLength(err.response?.bodyText ?? '');
    const presumed = 'presumed billed, not bought again this cycle';
    note =
      err instanceof BodyTooDeepError
        ? `a success nested deeper than daybook reads; ${presumed}`
        : err instanceof BodyTooLargeError
          ? `a success larger than daybook reads, cut off after its first ${bytes} bytes; ${presumed}`
          : err instanceof TimeoutError
            ? `a success cut off by the timeout after its first ${bytes} bytes; ${presumed}`
            : err instanceof NetworkError
              ? `the answer broke off in transit after its first ${bytes} bytes; ${presumed}`
              : `the answer broke off or came malformed after its first ${bytes} bytes; ${presumed}`;
  } else if (err instanceof UnexpectedResponseError && err.response?.bodyText) {
    let body: unknown;
    try {
      body = JSON.parse(err.response.bodyText);
    } catch {
      return null;
    }
    if (!isBilledSuccess(body)) return null;
    usage = usageOf(body);
    const content = (body as { metadata?: { content?: { PID?: unknown } } }).metadata?.content;
    pid = typeof content?.PID === 'string' && content.PID.trim() !== '' ? content.PID.trim() : null;
    note = 'a success in an undocumented shape (not applied)';
  } else {
    return null;
  }
  const paid = costOfAnswer(usage, configuredCost);
  return {
    credits: paid.credits,
    remark: paid.remark ? `${note}; ${paid.remark}` : note,
    pid,
    rawResponseId,
    billedAt: landedAt,
    runId,
  };
}

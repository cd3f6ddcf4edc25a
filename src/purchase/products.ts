/**
 * The bookkeeping of product calls. The upstream bills every call and documents no amount for the
 * product operation, so each call the upstream may have billed gets one `credit_ledger` row
 * (operation `product-listing`): at `DAYBOOK_PRODUCT_CREDITS` when it is set (a priced call), or
 * with credits null (an unpriced call); an amount the answer states (`metadata.usage.credits`)
 * beats both. A priced call reserves its credits in the cycle's budget before it is sent and
 * settles with what it was booked at; an unpriced call reserves nothing.
 *
 * A call is opened on its run (`openProductCall`: the reservation, and a mark on the run that the
 * call is under way), then settled once (`settleProductCall`: the ledger row, the budget, the mark
 * cleared) in one transaction. A run cut short with its mark still set (the process died, or lost
 * its database, with the call in flight) is settled by the next run of the same job
 * (`recoverProductCalls`): from the answer it landed, or as `presumed` when none landed. A run
 * makes one call, so the run is the call's key: never booked twice, whoever settles it.
 */
import type { Config } from '../config/config.ts';
import { inTransaction, type Sql } from '../db/connect.ts';
import type { DriverRow, LeftJoined } from '../db/rows.ts';
import type { ledgerSubjects, rawBodies, rawResponses } from '../db/schema.ts';
import {
  abandonStaleRuns,
  clearRunCall,
  finishRun,
  lockRunCall,
  markRunCall,
  runsWithCall,
} from '../landing/runs.ts';
import { FinalForCycleError } from '../terms/job-errors.ts';
import { brokenSuccessOf, presumedBillingOf, unansweredCallOf } from '../upstream/client.ts';
import { InvalidRequestError, UnexpectedResponseError, type UpstreamError } from '../upstream/errors.ts';
import { statedCredits, usageOf } from './billing.ts';
import { ensureCycleBudget, reserveCredits, settleCredits } from './credits.ts';
import { bookProductCall } from './fetches.ts';
import { acquire, type RateLimiter } from './limiter.ts';

export const PRODUCT_OPERATION = 'product-listing';

/** The kind of the run of one product's detail (`daybook products get --name`): no job, no retry. */
export const PRODUCT_DETAIL_RUN = 'product-detail';

/**
 * How long a detail run may say "running" before it counts as cut short: far beyond the rate
 * limiter's wait, the call's timeout and the landing together.
 */
export const DETAIL_RUN_STALE_MS = 60 * 60_000;

/** The configured price of a product call: `DAYBOOK_PRODUCT_CREDITS`, or null (unpriced). */
export type ProductPrice = number | null;

/** What a product call is booked as. */
export interface ProductCharge {
  /** Null: an unpriced call (no amount stated, `DAYBOOK_PRODUCT_CREDITS` unset). */
  credits: number | null;
  /**
   * booked: the upstream answered; unconfirmed: sent, and no complete answer came; presumed: the
   * run was cut short with the call under way and nothing landed.
   */
  status: 'booked' | 'unconfirmed' | 'presumed';
  remark: string;
}

const UNPRICED =
  'unpriced: the upstream documents no cost for product calls and DAYBOOK_PRODUCT_CREDITS is unset';

/** The amount of a call that states none: the configured price, or null, and the remark saying so. */
function configured(price: ProductPrice, note: string): { credits: number | null; remark: string } {
  return price === null
    ? { credits: null, remark: `${note}; ${UNPRICED}` }
    : { credits: price, remark: `${note}; the configured DAYBOOK_PRODUCT_CREDITS ${price} were booked` };
}

/** The charge of an answered, billed product call whose parsed body is `body`. Pure. */
export function chargeOfAnswer(body: unknown, price: ProductPrice, note = 'product call'): ProductCharge {
  const usage = usageOf(body);
  const u = usage !== null && typeof usage === 'object' ? (usage as Record<string, unknown>) : {};
  const stated = statedCredits(u.credits);
  if (stated !== null) {
    const remark = typeof u.remark === 'string' && u.remark.trim() !== '' ? `${note}; ${u.remark}` : note;
    return { credits: stated, status: 'booked', remark };
  }
  return { status: 'booked', ...configured(price, `${note}; the answer stated no amount`) };
}

/**
 * The charge of a product call that failed, or null when it was not billed. As for enterprise
 * calls: an error answer is not billed; a success is, whether it broke off in transit (an HTTP
 * 200 whose bytes do not prove an error, src/upstream/client.ts `presumedBillingOf`) or came in
 * an undocumented shape. A call sent that got no answer at all (src/upstream/client.ts
 * `unansweredCallOf`: a timeout or a connection cut after sending, before any byte of a body) may
 * have been billed: `unconfirmed`, at the configured price; a request never sent books nothing.
 */
export function chargeOfFailure(err: UpstreamError, price: ProductPrice): ProductCharge | null {
  const broken = presumedBillingOf(err);
  if (broken) {
    const bytes = err.response?.bodyBytes?.length ?? Buffer.byteLength(err.response?.bodyText ?? '');
    const note = `an answer that broke off or came unreadable after its first ${bytes} bytes (${err.code}): presumed billed`;
    if (broken.credits !== null)
      return {
        credits: broken.credits,
        status: 'booked',
        remark: `${note}; the amount its first bytes state`,
      };
    return { status: 'booked', ...configured(price, note) };
  }
  if (err instanceof UnexpectedResponseError && err.response?.bodyText) {
    let body: unknown;
    try {
      body = JSON.parse(err.response.bodyText);
    } catch {
      return null;
    }
    const verdict = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    if (verdict.result !== 'success' && verdict.status !== 'success') return null;
    return chargeOfAnswer(body, price, 'a success in an undocumented shape (not applied)');
  }
  const unanswered = unansweredCallOf(err);
  if (unanswered)
    return {
      status: 'unconfirmed',
      ...configured(price, `${unanswered.what} (${err.code}): the upstream may have billed it`),
    };
  return null;
}

/**
 * The ledger rows of the product calls of `cycle`. A product call has no watch entry: with
 * `watch_id is null` they are a short range of the ledger's (cycle, watch_id, call_fence) index,
 * not a scan of every enterprise row of the cycle.
 */
function productRows(sql: Sql, cycle: string) {
  return sql`cycle = ${cycle} and watch_id is null and operation = ${PRODUCT_OPERATION}`;
}

/** The key of the mark on a run's counts while its product call is under way. */
const CALL_MARK = 'productCall';

/** What `openProductCall` marks on the run: the call under way, what it reserved, and for what. */
interface CallMark {
  cycle: string;
  reserved: number;
  price: ProductPrice;
  keyword: string;
  /** The list date, to find what the call landed (the landing's index on it). */
  date: string | null;
}

/** A computed shape: how many keywords of a cycle had their call booked (`count(distinct keyword)`). */
interface BookedPulls {
  n: number;
}

/** What a run's call landed, as the `raw_answers` view reads it: the call and its body, if any. */
type LandedCall = Pick<DriverRow<typeof rawResponses>, 'id' | 'outcome' | 'http_status' | 'landed_at'> &
  LeftJoined<Pick<DriverRow<typeof rawBodies>, 'body_json' | 'body_text'>>;

export type OpenedCall =
  | { ok: true; runId: number; cycle: string; reserved: number }
  | { ok: false; reason: 'budget_exhausted' | 'paused'; detail: string };

/**
 * Waits for the product rate, then opens the call of run `call.runId`, priced by
 * DAYBOOK_PRODUCT_CREDITS (unpriced when unset). A priced call the cycle cannot take (paused, or
 * over its budget) is not made: the run fails saying why (`not pulled: …`, `not asked: …`), and
 * FinalForCycleError ends the job for the cycle. Returns the call's price.
 */
export async function openPricedCall(
  sql: Sql,
  limiter: RateLimiter,
  config: Pick<Config, 'DAYBOOK_PRODUCT_CREDITS' | 'DAYBOOK_CREDIT_BUDGET'>,
  call: { runId: number; cycle: string; keyword: string; date: string | null },
  verb: 'pulled' | 'asked',
): Promise<ProductPrice> {
  await acquire(limiter, 'product-listing');
  const price = config.DAYBOOK_PRODUCT_CREDITS ?? null;
  const opened = await openProductCall(sql, { ...call, price, budget: config.DAYBOOK_CREDIT_BUDGET });
  if (!opened.ok) {
    const reason = `not ${verb}: the product call costs ${price} credits (DAYBOOK_PRODUCT_CREDITS) and ${opened.reason === 'paused' ? `the cycle is paused: ${opened.detail}` : `the credit budget cannot take it: ${opened.detail}`}`;
    await finishRun(sql, call.runId, { outcome: 'failed', errorCode: opened.reason, errorMessage: reason });
    throw new FinalForCycleError(reason);
  }
  return price;
}

/**
 * Opens the product call of run `runId`, right before it is sent: a priced call reserves its
 * price in the cycle's budget (creating the cycle's budget row, at `budget`, when the plan has not
 * yet), and the run is marked as having a call under way. Refused when the budget cannot take it.
 */
export async function openProductCall(
  sql: Sql,
  call: {
    runId: number;
    cycle: string;
    price: ProductPrice;
    budget: number;
    keyword: string;
    date: string | null;
  },
): Promise<OpenedCall> {
  const reserved = call.price ?? 0;
  if (reserved > 0) await ensureCycleBudget(sql, call.cycle, call.budget);
  return inTransaction(sql, async (tx) => {
    if (reserved > 0) {
      const taken = await reserveCredits(tx, call.cycle, reserved);
      if (!taken.ok) return taken;
    }
    const mark: CallMark = {
      cycle: call.cycle,
      reserved,
      price: call.price,
      keyword: call.keyword,
      date: call.date,
    };
    await markRunCall(tx, call.runId, CALL_MARK, mark);
    return { ok: true as const, runId: call.runId, cycle: call.cycle, reserved };
  });
}

/**
 * Settles the product call of run `runId` (opened in `cycle`), in one transaction: books `charge`
 * (null: not billed) linked to the call's landing, releases the run's reservation, and counts
 * what was booked as spent. A call a recovery presumed billed meanwhile (its run was closed as cut
 * short while the call was still under way) becomes what its answer proved. Settling again
 * changes nothing.
 */
export async function settleProductCall(
  sql: Sql,
  call: { runId: number; cycle: string },
  charge: ProductCharge | null,
  landed: { id: number; landedAt: Date } | null,
): Promise<void> {
  const { runId, cycle } = call;
  await inTransaction(sql, async (tx) => {
    const mark = await lockRunCall<CallMark>(tx, runId, CALL_MARK);
    if (mark) {
      await clearRunCall(tx, runId, CALL_MARK);
      await book(tx, runId, mark, charge, landed);
      return;
    }
    // Settled already, or presumed by a recovery (whose row this answer corrects; the recovery
    // settled the reservation).
    const [prior] = await tx<Pick<DriverRow<typeof ledgerSubjects>, 'keyword'>[]>`
      select keyword from credit_ledger
      where ${productRows(tx, cycle)} and run_id = ${runId} and status = 'presumed'`;
    if (prior)
      await book(
        tx,
        runId,
        { cycle, reserved: 0, price: null, keyword: prior.keyword ?? '', date: null },
        charge,
        landed,
      );
  });
}

/** Books the call of a marked run and settles its reservation (in the caller's transaction). */
async function book(
  tx: Sql,
  runId: number,
  mark: CallMark,
  charge: ProductCharge | null,
  landed: { id: number; landedAt: Date } | null,
): Promise<void> {
  const spent = await bookProductCall(
    tx,
    { cycle: mark.cycle, operation: PRODUCT_OPERATION, runId },
    charge && {
      ...charge,
      cycle: mark.cycle,
      operation: PRODUCT_OPERATION,
      keyword: mark.keyword,
      runId,
      landed,
    },
  );
  if (spent !== 0 || mark.reserved !== 0) await settleCredits(tx, mark.cycle, mark.reserved, spent);
}

/**
 * Settles the calls of the last month's runs of `kind` that were cut short with a call under way
 * (their process died, or lost its database, and a later start of their job closed them as
 * `abandoned`, or the runtime failed their job for stalling): a success they landed is booked
 * from its body (it is the same call, not a new one); any other answer they landed by the same
 * rules as a failed call; a call with nothing landed is `presumed` billed at the price it was
 * opened with (null unpriced). A finished run keeps no mark otherwise (finishing it replaces its
 * counts), so only those are read. Returns how many were settled.
 */
export async function recoverProductCalls(sql: Sql, kind: string): Promise<number> {
  let settled = 0;
  for (const runId of await runsWithCall(sql, kind, CALL_MARK)) {
    const done = await inTransaction(sql, async (tx) => {
      const mark = await lockRunCall<CallMark>(tx, runId, CALL_MARK);
      if (!mark) return false;
      await clearRunCall(tx, runId, CALL_MARK);
      const [answer] = await tx<LandedCall[]>`
        select id, outcome, http_status, body_json, body_text, landed_at from raw_answers
        where operation = ${PRODUCT_OPERATION} and run_id = ${runId}
          and params->>'date' ${mark.date === null ? tx`is null` : tx`= ${mark.date}`}
        order by id desc limit 1`;
      const charge = answer ? chargeOfLanded(answer, mark.price) : presumed(mark.price);
      await book(
        tx,
        runId,
        mark,
        charge,
        answer ? { id: Number(answer.id), landedAt: answer.landed_at } : null,
      );
      return true;
    });
    if (done) settled++;
  }
  return settled;
}

/** A call cut short with nothing landed: presumed billed. */
function presumed(price: ProductPrice): ProductCharge {
  return {
    status: 'presumed',
    ...configured(price, 'presumed billed: the run was cut short with its call under way and nothing landed'),
  };
}

/** The charge of an answer a run cut short had landed (read back from the landing). */
function chargeOfLanded(
  a: { outcome: string; http_status: number | null; body_json: unknown; body_text: string | null },
  price: ProductPrice,
): ProductCharge | null {
  const note = 'landed by a run cut short before it booked it';
  if (a.outcome === 'success') return chargeOfAnswer(a.body_json, price, note);
  const text = a.body_text ?? (a.body_json === null ? null : JSON.stringify(a.body_json));
  if (a.http_status === 200 && text !== null && brokenSuccessOf(text, PRODUCT_OPERATION)) {
    return {
      status: 'booked',
      ...configured(price, `${note}: an answer that did not complete, presumed billed`),
    };
  }
  if (a.http_status === null && (a.outcome === 'timeout' || a.outcome === 'network_error')) {
    return { status: 'unconfirmed', ...configured(price, `${note}: sent, and no answer came`) };
  }
  return null;
}

/** What was checked before the request was sent (a bad parameter): nothing was sent. */
export function neverSent(err: unknown): boolean {
  return err instanceof InvalidRequestError;
}

/** The product calls booked in a cycle, for `status` and `report`. */
export interface ProductCalls {
  /** Ledger rows of product calls (one per call the upstream may have billed). */
  calls: number;
  /** Of them, with an amount. */
  priced: number;
  /** Of them, with credits null: no amount stated, `DAYBOOK_PRODUCT_CREDITS` unset. */
  unpricedCalls: number;
  /** Of them, sent with no answer (`unconfirmed`) or cut short (`presumed`): may have been billed. */
  unconfirmed: number;
  /** The credits of the priced ones. */
  credits: number;
}

/** The product calls booked in `cycle`: one indexed read of the cycle's ledger rows. */
export async function productCallsOf(sql: Sql, cycle: string): Promise<ProductCalls> {
  const [r] = await sql<ProductCalls[]>`
    select count(*)::int as calls, count(credits)::int as priced,
           count(*) filter (where credits is null)::int as "unpricedCalls",
           count(*) filter (where status <> 'booked')::int as unconfirmed,
           coalesce(sum(credits), 0)::int as credits
    from credit_ledger where ${productRows(sql, cycle)}`;
  return r ?? { calls: 0, priced: 0, unpricedCalls: 0, unconfirmed: 0, credits: 0 };
}

/**
 * The credits the cycle's scheduled product pulls still need: `pulls` a cycle (one per list date
 * of the lookback) at `price`, less those already booked in it (by list date). The plan keeps
 * them out of what it spends on enterprises. 0 when product calls are unpriced.
 */
export async function productCreditsOwed(
  sql: Sql,
  cycle: string,
  price: ProductPrice,
  pulls: number,
): Promise<number> {
  if (price === null || price === 0) return 0;
  const [r] = await sql<BookedPulls[]>`
    select count(distinct keyword)::int as n from credit_ledger
    where ${productRows(sql, cycle)} and status = 'booked'`;
  return Math.max(0, pulls - (r?.n ?? 0)) * price;
}

/**
 * Books the calls of detail runs (`products get --name`) whose process was killed with the call
 * under way: such a run has no job to close it, so one still running an hour after it started is
 * closed as cut short, and its call booked (`recoverProductCalls`) and its reservation released.
 * Returns how many calls were settled.
 */
export async function recoverDetailCalls(sql: Sql): Promise<number> {
  await abandonStaleRuns(sql, PRODUCT_DETAIL_RUN, DETAIL_RUN_STALE_MS);
  return recoverProductCalls(sql, PRODUCT_DETAIL_RUN);
}

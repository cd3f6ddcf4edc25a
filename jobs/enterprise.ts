/**
 * Refresh one watched enterprise in one cycle: exactly one upstream call at most.
 * Skip if already fetched successfully in this cycle; reserve credits; fetch; land; persist;
 * settle credits; update the watch entry. A re-run after a crash first looks for an answer
 * that was already landed for this cycle and keyword, so a completed fetch is never bought twice.
 */
import { z } from 'zod';
import { pauseCycle, recordBilling, reserveCredits, settleCredits } from '../src/budget/credits.ts';
import { acquire } from '../src/budget/limiter.ts';
import { whileUnreachable } from '../src/db/outage.ts';
import { finishRun, startRun } from '../src/db/runs.ts';
import { recordDrift } from '../src/history/drift-store.ts';
import { applyEnterprises } from '../src/history/enterprise-store.ts';
import { ingestEnterpriseSuccess, ingestFailure } from '../src/history/ingest.ts';
import { normalizeEnterprise } from '../src/normalize/enterprise.ts';
import type { JobDeps, JobReport } from '../src/runtime/deps.ts';
import { MalformedBodyError, RateLimitedError, UpstreamError } from '../src/upstream/errors.ts';
import { EnterpriseSuccess } from '../src/upstream/schemas.ts';

export const ENTERPRISE_JOB = 'enterprise';

/** How long a bought answer waits for an unreachable database before the job gives up on it. */
export const LANDING_PATIENCE_MS = 120_000;

export const EnterpriseJobData = z.object({
  cycle: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  watchId: z.number().int().positive(),
});
export type EnterpriseJobData = z.infer<typeof EnterpriseJobData>;

/** Deterministic job id (BullMQ ids may not contain ':'). `round` > 0 after a resume. */
export function enterpriseJobId(cycle: string, watchId: number, round = 0): string {
  return `enterprise-${cycle}-${watchId}${round > 0 ? `-r${round}` : ''}`;
}

interface FetchRow {
  status: string;
  credits_reserved: number;
  keyword: string;
  pid: string | null;
  active: boolean;
}

/**
 * Runs one refresh. `lastAttempt`: no retry follows, so a transient failure is final for the
 * cycle and is recorded as `failed` with its reason (a rate limit never is: it uses no attempt).
 */
export async function processEnterprise(
  deps: JobDeps,
  data: EnterpriseJobData,
  jobId: string,
  lastAttempt = false,
): Promise<JobReport> {
  const { sql, config } = deps;
  const { cycle, watchId } = data;
  const cost = config.DAYBOOK_CREDITS_PER_QUERY;

  await sql`insert into cycle_fetches (cycle, watch_id, status) values (${cycle}, ${watchId}, 'planned')
            on conflict (cycle, watch_id) do nothing`;
  const [row] = await sql<FetchRow[]>`
    select f.status, f.credits_reserved, w.keyword, w.pid, w.active
    from cycle_fetches f join watchlist w on w.id = f.watch_id
    where f.cycle = ${cycle} and f.watch_id = ${watchId}`;
  if (!row) return { outcome: 'skipped', detail: `watch entry ${watchId} does not exist` };
  const entity = row.keyword;
  if (['succeeded', 'duplicate', 'failed'].includes(row.status)) {
    return { outcome: 'skipped', entity, detail: `already ${row.status} in cycle ${cycle}` };
  }
  if (!row.active) {
    await markFetch(deps, cycle, watchId, 'skipped', 'inactive', 'the watch entry was removed');
    return { outcome: 'skipped', entity, detail: 'watch entry removed' };
  }

  const runId = await startRun(sql, { kind: ENTERPRISE_JOB, cycle, entity, jobId });
  // A crash after landing but before bookkeeping: finish from the landed answer, buy nothing.
  const recovered = await recoverLanded(deps, cycle, row.keyword);
  if (recovered) {
    await complete(deps, {
      cycle,
      watchId,
      keyword: row.keyword,
      previousPid: row.pid,
      runId,
      reserved: row.credits_reserved,
      ...recovered,
    });
    return { outcome: 'succeeded', entity, credits: 0, detail: 'recovered from a landed answer' };
  }

  let reserved = row.credits_reserved;
  // The reservation and its note on the entry commit together: a connection lost between the
  // two would leave the credits reserved for good, and the retry would reserve them again.
  const refused = await sql.begin(async (tx) => {
    if (reserved === 0) {
      const r = await reserveCredits(tx, cycle, cost);
      if (!r.ok) return r;
      reserved = cost;
    }
    await tx`update cycle_fetches set status = 'fetching', attempts = attempts + 1, credits_reserved = ${reserved},
             updated_at = now() where cycle = ${cycle} and watch_id = ${watchId}`;
    return null;
  });
  if (refused) {
    await markFetch(deps, cycle, watchId, 'deferred', refused.reason, refused.detail);
    await finishRun(sql, runId, {
      outcome: refused.reason === 'paused' ? 'paused' : 'deferred',
      errorCode: refused.reason,
      errorMessage: refused.detail,
    });
    return { outcome: refused.reason === 'paused' ? 'paused' : 'deferred', entity, detail: refused.detail };
  }

  await acquire(deps.limiter, 'enterprise-search');
  let result: Awaited<ReturnType<typeof deps.client.searchEnterprise>>;
  try {
    result = await deps.client.searchEnterprise(row.keyword);
    deps.onUpstreamCall?.('enterprise-search', 'success', result.exchange.durationMs);
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    deps.onUpstreamCall?.('enterprise-search', err.code, err.response?.durationMs ?? 0);
    const rawResponseId = await ingestFailure(sql, err, { runId, cycle }, row.pid);
    // Errors are not billed (upstream-api.md, Billing rules), but a success answer that broke off
    // in transit was: it goes in the ledger (with the credits it showed, else the reserved cost),
    // and the retry buys the record again.
    const broken = err instanceof MalformedBodyError ? err.brokenSuccess : null;
    const billed = broken ? (broken.credits ?? reserved) : 0;
    await sql.begin(async (tx) => {
      if (billed > 0) {
        await recordBilling(tx, {
          cycle,
          operation: 'enterprise-search',
          pid: broken?.pid ?? null,
          keyword: row.keyword,
          credits: billed,
          remark: 'the answer broke off in transit after billing; bought again',
          runId,
          rawResponseId,
          billedAt: err.response?.fetchedAt ?? deps.now(),
        });
      }
      await settleCredits(tx, cycle, reserved, billed);
      await tx`update cycle_fetches set credits_reserved = 0, credits_billed = credits_billed + ${billed}
               where cycle = ${cycle} and watch_id = ${watchId}`;
    });
    const final = err.errorClass === 'permanent' || (lastAttempt && !(err instanceof RateLimitedError));
    const outcome = err.errorClass === 'budget' ? 'deferred' : final ? 'failed' : 'retrying';
    const reason =
      err.errorClass === 'transient' && final
        ? `gave up after the last attempt: ${err.message}`
        : err.message;
    await markFetch(deps, cycle, watchId, outcome, err.code, reason);
    await sql`update watchlist set last_outcome = ${err.code}, last_error = ${err.message}, last_cycle = ${cycle}
              where id = ${watchId}`;
    if (err.errorClass === 'budget') {
      await pauseCycle(sql, cycle, `insufficient_credits at ${deps.now().toISOString()}: ${err.message}`);
      await finishRun(sql, runId, { outcome: 'paused', errorCode: err.code, errorMessage: err.message });
      return { outcome: 'paused', entity, detail: err.message };
    }
    await finishRun(sql, runId, {
      outcome: final ? 'failed' : 'retrying',
      errorCode: err.code,
      errorMessage: reason,
      credits: billed,
    });
    throw err;
  }

  // The answer is bought. A database that drops or refuses connections now must not waste it
  // (the job's retry would buy it again): landing is tried again here until the database answers,
  // finishing from what landed when a lost connection had committed it after all.
  const bought = result;
  const landed = await whileUnreachable(
    async (retry) => {
      const before = retry > 0 ? await recoverLanded(deps, cycle, row.keyword) : null;
      if (before) return before;
      const ingest = await ingestEnterpriseSuccess(sql, bought, row.keyword, { runId, cycle });
      return {
        pid: ingest.pid ?? '',
        rawResponseId: ingest.rawResponseId,
        billed: bought.data.metadata.usage?.credits ?? cost,
        remark: bought.data.metadata.usage?.remark ?? null,
        billedAt: bought.exchange.fetchedAt,
        counts: ingest.summary
          ? { versions: ingest.summary.initial + ingest.summary.changed, changes: ingest.summary.changes }
          : {},
      };
    },
    {
      maxMs: LANDING_PATIENCE_MS,
      onWait: (err, waitMs) =>
        deps.log.warn(
          { kind: ENTERPRISE_JOB, jobId, cycle, entity, waitMs, error: (err as Error).message },
          'database unreachable with a bought answer in hand: waiting for it',
        ),
    },
  );
  await complete(deps, {
    cycle,
    watchId,
    keyword: row.keyword,
    previousPid: row.pid,
    runId,
    reserved,
    ...landed,
  });
  return {
    outcome: 'succeeded',
    entity,
    credits: landed.billed,
    counts: { changes: landed.counts.changes ?? 0 },
  };
}

interface Completion {
  cycle: string;
  watchId: number;
  keyword: string;
  previousPid: string | null;
  runId: number;
  reserved: number;
  pid: string;
  rawResponseId: number;
  billed: number;
  remark: string | null;
  billedAt: Date;
  counts: Record<string, number>;
}

/** Books a successful fetch: ledger, budget, the cycle row, the watch entry, the run. */
async function complete(deps: JobDeps, c: Completion): Promise<void> {
  await deps.sql.begin(async (tx) => {
    if (c.billed > 0) {
      await recordBilling(tx, {
        cycle: c.cycle,
        operation: 'enterprise-search',
        pid: c.pid,
        keyword: c.keyword,
        credits: c.billed,
        remark: c.remark,
        runId: c.runId,
        rawResponseId: c.rawResponseId,
        billedAt: c.billedAt,
      });
    }
    await settleCredits(tx, c.cycle, c.reserved, c.billed);
    const [dup] = await tx`select 1 from cycle_fetches where cycle = ${c.cycle} and pid = ${c.pid}
                           and status = 'succeeded' and watch_id <> ${c.watchId}`;
    await tx`update cycle_fetches set status = ${dup ? 'duplicate' : 'succeeded'}, pid = ${c.pid},
               credits_reserved = 0, credits_billed = credits_billed + ${c.billed}, raw_response_id = ${c.rawResponseId},
               error_code = null, error_message = null, updated_at = now()
             where cycle = ${c.cycle} and watch_id = ${c.watchId}`;
    if (c.previousPid !== null && c.previousPid !== c.pid) {
      // The keyword now names another company: say so rather than mix two histories.
      await tx`insert into enterprise_observations (pid, kind, cycle, keyword, detail, raw_response_id, observed_at)
               values (${c.pid}, 'resolution_changed', ${c.cycle}, ${c.keyword},
                       ${`keyword resolved to ${c.previousPid} before`}, ${c.rawResponseId}, ${c.billedAt})`;
    }
    await tx`update watchlist set pid = ${c.pid}, last_refreshed_at = ${c.billedAt}, last_cycle = ${c.cycle},
               last_outcome = 'success', last_error = null where id = ${c.watchId}`;
    // In the same transaction: a worker dying after this commit must not leave the run "running"
    // (the next attempt sees the entry succeeded and skips it without a run of its own).
    await finishRun(tx, c.runId, { outcome: 'succeeded', credits: c.billed, counts: c.counts });
  });
}

async function markFetch(
  deps: JobDeps,
  cycle: string,
  watchId: number,
  status: string,
  code: string | null,
  message: string | null,
): Promise<void> {
  await deps.sql`update cycle_fetches set status = ${status}, error_code = ${code}, error_message = ${message},
                 updated_at = now() where cycle = ${cycle} and watch_id = ${watchId} and status <> 'succeeded'`;
}

/** A success already landed for this cycle and keyword (a previous attempt died after landing). */
async function recoverLanded(
  deps: JobDeps,
  cycle: string,
  keyword: string,
): Promise<Omit<Completion, 'cycle' | 'watchId' | 'keyword' | 'previousPid' | 'runId' | 'reserved'> | null> {
  const [raw] = await deps.sql<
    { id: string; params: Record<string, string>; body_json: unknown; fetched_at: Date }[]
  >`
    select id, params, body_json, fetched_at from raw_responses
    where operation = 'enterprise-search' and cycle = ${cycle} and outcome = 'success'
      and params->>'ent_name' = ${keyword}
    order by id desc limit 1`;
  if (!raw) return null;
  const parsed = EnterpriseSuccess.safeParse(raw.body_json);
  if (!parsed.success) return null;
  const normalized = normalizeEnterprise(parsed.data.metadata.content);
  const rawResponseId = Number(raw.id);
  // The first attempt may have died before recording the answer's drift; recording is idempotent.
  await recordDrift(deps.sql, [
    {
      rawResponseId,
      operation: 'enterprise-search',
      params: raw.params,
      body: raw.body_json,
      fetchedAt: raw.fetched_at,
    },
  ]);
  // Applying again is a no-op when the first attempt got that far (same content hash).
  const summary = await deps.sql.begin((tx) =>
    applyEnterprises(tx, [{ normalized, fetchedAt: raw.fetched_at, rawResponseId, cycle, keyword }]),
  );
  return {
    pid: normalized.pid,
    rawResponseId,
    billed: parsed.data.metadata.usage?.credits ?? 0,
    remark: parsed.data.metadata.usage?.remark ?? null,
    billedAt: raw.fetched_at,
    counts: { versions: summary.initial + summary.changed, changes: summary.changes },
  };
}

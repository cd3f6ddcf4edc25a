/**
 * Rebuilds every normalized table from the raw landing: empties them and replays raw_responses
 * in landing order (the database's clock to the millisecond, then the landing sequence) through the same
 * normalizers and stores as live ingestion, with the same rules, in batches, inside one
 * transaction (a failed rebuild leaves the previous state in place). Every event is derived again
 * the way live ingestion derived it: `initial`, `reappeared`, `resolution_changed` (through
 * keyword_resolutions) and `disappeared`. One decision cannot be derived from the landing alone:
 * which answers live ingestion rejected as stale, which depends on the order concurrent workers
 * applied them in. Those `stale_ignored` events are kept as they are, and their answers are not
 * applied, so the rebuilt history is the live one. The format drift report is re-derived too.
 * Answers live ingestion refused for naming an enterprise with another credit code than their
 * watch entry expected are refused again, by the same decision (src/history/resolution.ts) on
 * the code expected then (kept in `resolution_mismatches`), with their `resolution_mismatch`
 * events.
 */

import type postgres from 'postgres';
import { isConnectionLoss } from '../db/outage.ts';
import { insertMismatchEvent, refusedAnswerCodes } from './resolution-mismatches.ts';
import { suppressEvents } from '../events/outbox.ts';
import { normalizeEnterprise } from '../normalize/enterprise.ts';
import { normalizeProduct, normalizeProductList } from '../normalize/product.ts';
import { cycleOf } from '../time/cycles.ts';
import { EnterpriseSuccess, ProductDetailSuccess, ProductListSuccess } from '../upstream/schemas.ts';
import { type LandedAnswer, recordDrift } from './drift-store.ts';
import { applyEnterprises, disappearKeyword, type EnterpriseObservation } from './enterprise-store.ts';
import { applyProductPulls, type ProductPull } from './product-store.ts';
import { resolutionVerdict } from './resolution.ts';

/** The tables a rebuild empties: everything derived from raw_responses. */
export const DERIVED_TABLES = [
  'enterprise_changes',
  'enterprise_observations',
  'enterprise_persons',
  'enterprise_shareholders',
  'enterprise_clearing_members',
  'enterprise_versions',
  'enterprises',
  'trending_snapshots',
  'product_comments',
  'product_topics',
  'product_media',
  'product_links',
  'product_versions',
  'products',
  'keyword_resolutions',
  'raw_response_drift',
  'format_drift',
  'enterprise_sightings',
  'product_sightings',
] as const;

export interface RebuildSummary {
  rawRead: number;
  enterprises: number;
  productPulls: number;
  productDetails: number;
  disappeared: number;
  /** Answers live ingestion had rejected as stale: their events kept, the answers not applied. */
  staleKept: number;
  /** Answers refused for naming another enterprise than their entry's expected code: not applied. */
  mismatched: number;
  /** Answers that could not be applied (a value Postgres refuses): skipped, as live ingestion did. */
  unusable: number;
  /** Landed successes whose body no longer parses (kept in the landing, not applied). */
  unreadable: number;
  /** Answers that showed format drift. */
  drifted: number;
}

/** The landed outcomes a rebuild reads: answers with content, and not_found (disappearances). */
const REPLAYED = ['success', 'not_found', 'unexpected_response'];

interface RawRow {
  id: string;
  operation: string;
  params: Record<string, string>;
  body_json: unknown;
  outcome: string;
  fetched_at: Date;
  landed_at: Date;
  bytes_kept: boolean;
  cycle: string | null;
}

interface KeptEvent {
  pid: string;
  kind: string;
  cycle: string;
  keyword: string | null;
  detail: string | null;
  raw_response_id: string | null;
  observed_at: Date;
}

export async function rebuild(
  sql: postgres.Sql,
  options: { batchSize?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<RebuildSummary> {
  const batchSize = options.batchSize ?? 1000;
  const summary: RebuildSummary = {
    rawRead: 0,
    enterprises: 0,
    productPulls: 0,
    productDetails: 0,
    disappeared: 0,
    staleKept: 0,
    mismatched: 0,
    unusable: 0,
    unreadable: 0,
    drifted: 0,
  };
  await sql.begin(async (tx) => {
    // History is replayed, not found again: the events it made were emitted (and maybe delivered)
    // when it was found, and are kept as they are.
    await suppressEvents(tx);
    // The live decisions that cannot be derived again (see above), kept by the answer they rejected.
    const kept = new Map<string, KeptEvent[]>();
    for (const e of await tx<KeptEvent[]>`
      select pid, kind, cycle::text as cycle, keyword, detail, raw_response_id, observed_at
      from enterprise_observations where kind = 'stale_ignored' and raw_response_id is not null
      order by id`) {
      const list = kept.get(String(e.raw_response_id)) ?? [];
      list.push(e);
      kept.set(String(e.raw_response_id), list);
    }
    // The codes expected of the answers live ingestion refused: not derived, so read, not emptied.
    const refused = await refusedAnswerCodes(tx);
    await tx.unsafe(`truncate ${DERIVED_TABLES.join(', ')} restart identity`);
    // Every derived row is written again: the next warehouse export is a full one (src/export/).
    await tx`update rebuild_generation set generation = generation + 1`;
    const [count] = await tx<{ n: number }[]>`
      select count(*)::int as n from raw_responses where outcome in ${tx(REPLAYED)}`;
    const total = count?.n ?? 0;
    let enterpriseBatch: EnterpriseObservation[] = [];
    let productBatch: ProductPull[] = [];
    let driftBatch: LandedAnswer[] = [];
    // A batch is applied in a savepoint; when it fails, its answers one by one, and one that
    // cannot be applied (live ingestion could not either: the entry failed for its cycle) is skipped.
    const each = async <T>(
      batch: T[],
      apply: (q: postgres.TransactionSql, items: T[]) => Promise<unknown>,
    ) => {
      try {
        await tx.savepoint((sp) => apply(sp, batch));
      } catch (err) {
        if (isConnectionLoss(err)) throw err;
        for (const item of batch) {
          try {
            await tx.savepoint((sp) => apply(sp, [item]));
          } catch (e) {
            if (isConnectionLoss(e)) throw e;
            summary.unusable++;
          }
        }
      }
    };
    const flush = async () => {
      if (enterpriseBatch.length > 0) await each(enterpriseBatch, applyEnterprises);
      if (productBatch.length > 0) await each(productBatch, applyProductPulls);
      if (driftBatch.length > 0)
        await each(driftBatch, async (q, items) => {
          summary.drifted += await recordDrift(q, items);
        });
      enterpriseBatch = [];
      productBatch = [];
      driftBatch = [];
    };
    // A cursor of this transaction, fetched a batch at a time between the batch writes below: the
    // landing is sorted once (keyset pages on an order no index serves sorted it once per page).
    // The order live ingestion uses (landedBefore): the landing time to the millisecond, then the
    // landing sequence.
    await tx.unsafe(`
      declare daybook_rebuild no scroll cursor for
      select id, operation, params, body_json, outcome, fetched_at, landed_at,
             body_bytes is not null as bytes_kept, cycle::text as cycle
      from raw_answers
      where outcome in (${REPLAYED.map((o) => `'${o}'`).join(', ')})
      order by date_trunc('milliseconds', landed_at), id`);
    for (;;) {
      const rows = (await tx.unsafe(
        `fetch ${Math.trunc(batchSize)} from daybook_rebuild`,
      )) as unknown as RawRow[];
      if (rows.length === 0) break;
      for (const r of rows) {
        summary.rawRead++;
        const rawId = Number(r.id);
        const cycle = r.cycle ?? cycleOf(r.landed_at);
        if (r.outcome !== 'not_found' && r.body_json !== null) {
          const answer: LandedAnswer = {
            rawResponseId: rawId,
            operation: r.operation as LandedAnswer['operation'],
            params: r.params,
            body: r.body_json,
            fetchedAt: r.fetched_at,
            bytesKept: r.bytes_kept,
          };
          driftBatch.push(answer);
        }
        if (r.outcome === 'unexpected_response') continue;
        const stale = kept.get(r.id);
        if (stale) {
          await flush();
          await tx`insert into enterprise_observations ${tx(stale, 'pid', 'kind', 'cycle', 'keyword', 'detail', 'raw_response_id', 'observed_at')}`;
          summary.staleKept += stale.length;
          continue;
        }
        if (r.operation === 'enterprise-search') {
          const keyword = r.params.ent_name ?? null;
          if (r.outcome === 'not_found') {
            if (keyword === null) continue;
            await flush();
            summary.disappeared += await disappearKeyword(tx, {
              keyword,
              fetchedAt: r.landed_at,
              rawResponseId: rawId,
              cycle,
            });
            continue;
          }
          const parsed = EnterpriseSuccess.safeParse(r.body_json);
          if (!parsed.success) {
            summary.unreadable++;
            continue;
          }
          const normalized = normalizeEnterprise(parsed.data.metadata.content);
          const verdict = resolutionVerdict(refused.get(rawId) ?? null, normalized);
          if (verdict.kind === 'mismatch') {
            await flush();
            await insertMismatchEvent(tx, {
              rawResponseId: rawId,
              landedAt: r.landed_at,
              cycle,
              keyword: keyword ?? '',
              verdict,
            });
            summary.mismatched++;
            continue;
          }
          enterpriseBatch.push({ normalized, fetchedAt: r.landed_at, rawResponseId: rawId, cycle, keyword });
          summary.enterprises++;
        } else if (r.operation === 'product-listing' && r.outcome === 'success') {
          if (r.params.date !== undefined) {
            const parsed = ProductListSuccess.safeParse(r.body_json);
            if (!parsed.success) {
              summary.unreadable++;
              continue;
            }
            const list = normalizeProductList(parsed.data.metadata, r.params.date, r.landed_at);
            productBatch.push({ ...list, fetchedAt: r.landed_at, rawResponseId: rawId });
            summary.productPulls++;
          } else {
            const parsed = ProductDetailSuccess.safeParse(r.body_json);
            if (!parsed.success) {
              summary.unreadable++;
              continue;
            }
            const product = normalizeProduct(parsed.data.metadata);
            productBatch.push({
              products: [product],
              snapshots: [],
              fetchedAt: r.landed_at,
              rawResponseId: rawId,
            });
            summary.productDetails++;
          }
        }
      }
      await flush();
      options.onProgress?.(summary.rawRead, total);
    }
    await tx.unsafe('close daybook_rebuild');
    await flush();
  });
  return summary;
}

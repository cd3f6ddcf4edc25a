/**
 * Rebuilds every normalized table from the raw landing: empties them and replays
 * raw_responses in fetch order through the same normalizers and stores as live ingestion, in
 * batches, inside one transaction (a failed rebuild leaves the previous state in place).
 * Replay applies answers in fetch order, so it records no `stale_ignored` events. The format drift
 * report is derived from the landing too, and is re-derived the same way.
 */
import type postgres from 'postgres';
import { normalizeEnterprise } from '../normalize/enterprise.ts';
import { normalizeProduct, normalizeProductList } from '../normalize/product.ts';
import { cycleOf } from '../time/cycles.ts';
import { EnterpriseSuccess, ProductDetailSuccess, ProductListSuccess } from '../upstream/schemas.ts';
import { type LandedAnswer, recordDrift } from './drift-store.ts';
import { applyEnterprises, type EnterpriseObservation, markDisappeared } from './enterprise-store.ts';
import { applyProductPulls, type ProductPull } from './product-store.ts';

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
  'raw_response_drift',
  'format_drift',
] as const;

export interface RebuildSummary {
  rawRead: number;
  enterprises: number;
  productPulls: number;
  productDetails: number;
  disappeared: number;
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
  cycle: string | null;
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
    unreadable: 0,
    drifted: 0,
  };
  await sql.begin(async (tx) => {
    await tx.unsafe(`truncate ${DERIVED_TABLES.join(', ')} restart identity`);
    const [count] = await tx<{ n: number }[]>`
      select count(*)::int as n from raw_responses where outcome in ${tx(REPLAYED)}`;
    const total = count?.n ?? 0;
    const pidOfKeyword = new Map<string, string>();
    let enterpriseBatch: EnterpriseObservation[] = [];
    let productBatch: ProductPull[] = [];
    let driftBatch: LandedAnswer[] = [];
    const flush = async () => {
      if (enterpriseBatch.length > 0) await applyEnterprises(tx, enterpriseBatch);
      if (productBatch.length > 0) await applyProductPulls(tx, productBatch);
      if (driftBatch.length > 0) summary.drifted += await recordDrift(tx, driftBatch);
      enterpriseBatch = [];
      productBatch = [];
      driftBatch = [];
    };
    // Keyset pages rather than a cursor: the batch writes below run on this same transaction.
    let after: { fetchedAt: Date; id: string } | null = null;
    for (;;) {
      const rows: RawRow[] = await tx<RawRow[]>`
        select id, operation, params, body_json, outcome, fetched_at, cycle::text as cycle
        from raw_responses
        where outcome in ${tx(REPLAYED)}
          ${after ? tx`and (fetched_at, id) > (${after.fetchedAt}, ${after.id})` : tx``}
        order by fetched_at, id limit ${batchSize}`;
      if (rows.length === 0) break;
      const last = rows[rows.length - 1] as RawRow;
      after = { fetchedAt: last.fetched_at, id: last.id };
      for (const r of rows) {
        summary.rawRead++;
        const rawId = Number(r.id);
        const cycle = r.cycle ?? cycleOf(r.fetched_at);
        if (r.outcome !== 'not_found' && r.body_json !== null) {
          const answer: LandedAnswer = {
            rawResponseId: rawId,
            operation: r.operation as LandedAnswer['operation'],
            params: r.params,
            body: r.body_json,
            fetchedAt: r.fetched_at,
          };
          driftBatch.push(answer);
        }
        if (r.outcome === 'unexpected_response') continue;
        if (r.operation === 'enterprise-search') {
          const keyword = r.params.ent_name ?? null;
          if (r.outcome === 'not_found') {
            const pid = keyword === null ? undefined : pidOfKeyword.get(keyword);
            if (pid === undefined) continue;
            await flush();
            summary.disappeared += await markDisappeared(tx, [
              { pid, keyword, fetchedAt: r.fetched_at, rawResponseId: rawId, cycle },
            ]);
            continue;
          }
          const parsed = EnterpriseSuccess.safeParse(r.body_json);
          if (!parsed.success) {
            summary.unreadable++;
            continue;
          }
          const normalized = normalizeEnterprise(parsed.data.metadata.content);
          if (keyword !== null) pidOfKeyword.set(keyword, normalized.pid);
          enterpriseBatch.push({ normalized, fetchedAt: r.fetched_at, rawResponseId: rawId, cycle, keyword });
          summary.enterprises++;
        } else if (r.operation === 'product-listing' && r.outcome === 'success') {
          if (r.params.date !== undefined) {
            const parsed = ProductListSuccess.safeParse(r.body_json);
            if (!parsed.success) {
              summary.unreadable++;
              continue;
            }
            const list = normalizeProductList(parsed.data.metadata, r.params.date, r.fetched_at);
            productBatch.push({ ...list, fetchedAt: r.fetched_at, rawResponseId: rawId });
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
              fetchedAt: r.fetched_at,
              rawResponseId: rawId,
            });
            summary.productDetails++;
          }
        }
      }
      await flush();
      options.onProgress?.(summary.rawRead, total);
    }
    await flush();
  });
  return summary;
}

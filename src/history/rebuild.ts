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
import type { Sql } from '../db/connect.ts';
import { isConnectionLoss } from '../db/outage.ts';
import type { DriverRow, Recast } from '../db/rows.ts';
import type { rawBodies, rawResponses } from '../db/schema.ts';
import { suppressEvents } from '../events/outbox.ts';
import { countLanded } from '../landing/landing.ts';
import { normalizeEnterprise } from '../normalize/enterprise.ts';
import { normalizeProduct, normalizeProductList } from '../normalize/product.ts';
import { cycleOf } from '../time/cycles.ts';
import { parseJsonExact } from '../upstream/json.ts';
import {
  EnterpriseSuccess,
  ProductDetailSuccess,
  ProductListSuccess,
  readStored,
} from '../upstream/schemas.ts';
import { emptyDrift, type LandedAnswer, recordDrift } from './drift-store.ts';
import {
  applyEnterprises,
  disappearKeyword,
  type EnterpriseObservation,
  emptyEnterpriseHistory,
  insertObservations,
} from './enterprise-store.ts';
import { applyProductPulls, emptyProductHistory, type ProductPull } from './product-store.ts';
import { type Expected, resolutionVerdict } from './resolution.ts';
import { insertMismatchEvent, refusedAnswerCodes } from './resolution-mismatches.ts';

/** The one row of `rebuild_generation`: a computed shape (its one column). */
interface Generation {
  generation: number;
}

/**
 * How many times a rebuild wrote the history again (0 before the first): a package written under
 * another generation cannot follow one written under this one.
 */
export async function rebuildGeneration(sql: Sql): Promise<number> {
  const [gen] = await sql<Generation[]>`select generation from rebuild_generation`;
  return gen?.generation ?? 0;
}

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

/** A landed answer as the replay reads it from `raw_answers` (the landing row, its parameters and body). */
type RawRow = Recast<
  Pick<DriverRow<typeof rawResponses>, 'id' | 'operation' | 'outcome' | 'fetched_at' | 'landed_at' | 'cycle'>,
  'cycle',
  string
> & { params: Record<string, string> } & Pick<DriverRow<typeof rawBodies>, 'body_json' | 'body_text'> & {
    bytes_kept: boolean;
  };

interface KeptEvent {
  pid: string;
  kind: string;
  cycle: string;
  keyword: string | null;
  detail: string | null;
  raw_response_id: string | null;
  observed_at: Date;
}

/** A rebuild replaying the landing: what it counts, what it keeps, and the batches not applied yet. */
interface Replay {
  tx: postgres.TransactionSql;
  summary: RebuildSummary;
  /** The stale_ignored events of live ingestion, by the raw answer they rejected. */
  kept: Map<string, KeptEvent[]>;
  /** The codes expected of the answers live ingestion refused, by raw answer id. */
  refused: Map<number, Expected>;
  enterprises: EnterpriseObservation[];
  products: ProductPull[];
  drift: LandedAnswer[];
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
    const kept = await keptStaleEvents(tx);
    // The codes expected of the answers live ingestion refused: not derived, so read, not emptied.
    const refused = await refusedAnswerCodes(tx);
    // Everything derived from raw_responses is emptied, each by its owner (no key crosses them).
    await emptyEnterpriseHistory(tx);
    await emptyProductHistory(tx);
    await emptyDrift(tx);
    // Every derived row is written again: the next warehouse export is a full one (src/export/).
    await tx`update rebuild_generation set generation = generation + 1`;
    const total = await countLanded(tx, REPLAYED);
    const replay: Replay = { tx, summary, kept, refused, enterprises: [], products: [], drift: [] };
    await replayLanding(replay, batchSize, (done) => options.onProgress?.(done, total));
  });
  return summary;
}

/** The live decisions that cannot be derived again (see above), kept by the answer they rejected. */
async function keptStaleEvents(tx: postgres.TransactionSql): Promise<Map<string, KeptEvent[]>> {
  const kept = new Map<string, KeptEvent[]>();
  for (const e of await tx<KeptEvent[]>`
    select pid, kind, cycle::text as cycle, keyword, detail, raw_response_id, observed_at
    from enterprise_observations where kind = 'stale_ignored' and raw_response_id is not null
    order by id`) {
    const list = kept.get(String(e.raw_response_id)) ?? [];
    list.push(e);
    kept.set(String(e.raw_response_id), list);
  }
  return kept;
}

/**
 * Reads the landing through a cursor of the transaction, a batch at a time between the batch
 * writes: the landing is sorted once (keyset pages on an order no index serves sorted it once per
 * page). The order is the one live ingestion uses (landedBefore): the landing time to the
 * millisecond, then the landing sequence.
 */
async function replayLanding(replay: Replay, batchSize: number, onProgress: (done: number) => void) {
  const { tx } = replay;
  await tx.unsafe(`
    declare daybook_rebuild no scroll cursor for
    select id, operation, params, body_json, case when body_json is null then body_text end as body_text,
           outcome, fetched_at, landed_at,
           body_bytes is not null as bytes_kept, cycle::text as cycle
    from raw_answers
    where outcome in (${REPLAYED.map((o) => `'${o}'`).join(', ')})
    order by date_trunc('milliseconds', landed_at), id`);
  for (;;) {
    const rows = (await tx.unsafe(
      `fetch ${Math.trunc(batchSize)} from daybook_rebuild`,
    )) as unknown as RawRow[];
    if (rows.length === 0) break;
    for (const r of rows) await replayRow(replay, r);
    await flush(replay);
    onProgress(replay.summary.rawRead);
  }
  await tx.unsafe('close daybook_rebuild');
  await flush(replay);
}

/** Applies the pending batches, in the order live ingestion would have. */
async function flush(replay: Replay): Promise<void> {
  if (replay.enterprises.length > 0) await applyBatch(replay, replay.enterprises, applyEnterprises);
  if (replay.products.length > 0) await applyBatch(replay, replay.products, applyProductPulls);
  if (replay.drift.length > 0)
    await applyBatch(replay, replay.drift, async (q, items) => {
      replay.summary.drifted += await recordDrift(q, items);
    });
  replay.enterprises = [];
  replay.products = [];
  replay.drift = [];
}

/**
 * Applies a batch in a savepoint; when it fails, its answers one by one, and one that cannot be
 * applied (live ingestion could not either: the entry failed for its cycle) is skipped.
 */
async function applyBatch<T>(
  replay: Replay,
  batch: T[],
  apply: (q: postgres.TransactionSql, items: T[]) => Promise<unknown>,
): Promise<void> {
  const { tx } = replay;
  try {
    await tx.savepoint((sp) => apply(sp, batch));
  } catch (err) {
    if (isConnectionLoss(err)) throw err;
    for (const item of batch) {
      try {
        await tx.savepoint((sp) => apply(sp, [item]));
      } catch (e) {
        if (isConnectionLoss(e)) throw e;
        replay.summary.unusable++;
      }
    }
  }
}

/** Replays one landed answer: queues what it applies, or applies at once what must keep its place. */
async function replayRow(replay: Replay, r: RawRow): Promise<void> {
  const { summary } = replay;
  summary.rawRead++;
  const rawId = Number(r.id);
  const cycle = r.cycle ?? cycleOf(r.landed_at);
  // JSON jsonb refused (a \u0000 escape) landed as text: read from there, as live ingestion did.
  if (r.body_json === null && r.body_text !== null) r.body_json = jsonOrNull(r.body_text);
  if (r.outcome !== 'not_found' && r.body_json !== null) {
    const answer: LandedAnswer = {
      rawResponseId: rawId,
      operation: r.operation as LandedAnswer['operation'],
      params: r.params,
      body: r.body_json,
      fetchedAt: r.fetched_at,
      bytesKept: r.bytes_kept,
    };
    replay.drift.push(answer);
  }
  if (r.outcome === 'unexpected_response') return;
  const stale = replay.kept.get(r.id);
  if (stale) {
    await flush(replay);
    const { tx } = replay;
    await insertObservations(tx, stale);
    summary.staleKept += stale.length;
    return;
  }
  if (r.operation === 'enterprise-search') await replayEnterpriseSearch(replay, r, rawId, cycle);
  else if (r.operation === 'product-listing' && r.outcome === 'success')
    replayProductListing(replay, r, rawId);
}

async function replayEnterpriseSearch(
  replay: Replay,
  r: RawRow,
  rawId: number,
  cycle: string,
): Promise<void> {
  const { tx, summary } = replay;
  const keyword = r.params.ent_name ?? null;
  if (r.outcome === 'not_found') {
    if (keyword === null) return;
    await flush(replay);
    summary.disappeared += await disappearKeyword(tx, {
      keyword,
      fetchedAt: r.landed_at,
      rawResponseId: rawId,
      cycle,
    });
    return;
  }
  const parsed = readStored(EnterpriseSuccess, r.body_json);
  if (!parsed.success) {
    summary.unreadable++;
    return;
  }
  const normalized = normalizeEnterprise(parsed.data.metadata.content);
  const verdict = resolutionVerdict(replay.refused.get(rawId) ?? null, normalized);
  if (verdict.kind === 'mismatch') {
    await flush(replay);
    await insertMismatchEvent(tx, {
      rawResponseId: rawId,
      landedAt: r.landed_at,
      cycle,
      keyword: keyword ?? '',
      verdict,
    });
    summary.mismatched++;
    return;
  }
  replay.enterprises.push({ normalized, fetchedAt: r.landed_at, rawResponseId: rawId, cycle, keyword });
  summary.enterprises++;
}

/** A product list (with a date) or one product's detail (without). */
function replayProductListing(replay: Replay, r: RawRow, rawId: number): void {
  const { summary } = replay;
  if (r.params.date !== undefined) {
    const parsed = readStored(ProductListSuccess, r.body_json);
    if (!parsed.success) {
      summary.unreadable++;
      return;
    }
    const list = normalizeProductList(parsed.data.metadata, r.params.date, r.landed_at);
    replay.products.push({ ...list, fetchedAt: r.landed_at, rawResponseId: rawId });
    summary.productPulls++;
  } else {
    const parsed = readStored(ProductDetailSuccess, r.body_json);
    if (!parsed.success) {
      summary.unreadable++;
      return;
    }
    const product = normalizeProduct(parsed.data.metadata);
    replay.products.push({
      products: [product],
      snapshots: [],
      fetchedAt: r.landed_at,
      rawResponseId: rawId,
    });
    summary.productDetails++;
  }
}

/** Landed text as JSON (numbers exact), or null when it is not JSON. */
function jsonOrNull(text: string): unknown {
  try {
    return parseJsonExact(text);
  } catch {
    return null;
  }
}

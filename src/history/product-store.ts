/**
 * Applies pulls of product lists to the product tables. Products are versioned like enterprises
 * (SCD type 2 on a content hash that leaves out votes, comment counts and comments); every pull
 * adds one trending snapshot per listed product (so vote trajectories exist); comments are
 * deduplicated across pulls by (product, created_at, body). Replaying the same pull adds
 * nothing: snapshots are unique per (raw response, position).
 */
import { deleteSuperseded, truncateTables } from '../db/bulk.ts';
import type { Sql } from '../db/connect.ts';
import type { DriverRow, LeftJoined } from '../db/rows.ts';
import type { products, productVersions } from '../db/schema.ts';
import type { NormalizedProduct, NormalizedTrendingSnapshot } from '../normalize/types.ts';
import { productContentHash } from './hash.ts';
import { insertChildRows, pointerRows, type VersionTable, type VersionWrite, writeVersions } from './scd2.ts';

export interface ProductPull {
  products: NormalizedProduct[];
  snapshots: NormalizedTrendingSnapshot[];
  fetchedAt: Date;
  rawResponseId: number;
}

export interface ProductApplySummary {
  products: number;
  initial: number;
  changed: number;
  unchanged: number;
  stale: number;
  snapshots: number;
  newComments: number;
}

function unreadText(p: NormalizedProduct): Record<string, string> {
  const out: Record<string, string> = {};
  if (p.createdAtText !== null) out.created_at = p.createdAtText;
  if (p.featuredAtText !== null) out.featured_at = p.featuredAtText;
  if (p.updatedAtText !== null) out.updated_at = p.updatedAtText;
  return out;
}

const PRODUCT_VERSIONS: VersionTable = { table: 'product_versions', keyColumn: 'product_id' };

/** A new version the batch writes, and the pull it comes from. */
interface ProductWrite extends VersionWrite {
  p: NormalizedProduct;
  pull: ProductPull;
}

/** A product's stored current version, and how far the batch has moved it. */
interface ProductState {
  currentId: number | null;
  version: number;
  hash: string | null;
  lastSeenAt: Date;
  /** Set when this batch wrote a new current version. */
  written: boolean;
}

type PulledProduct = { p: NormalizedProduct; pull: ProductPull };

/** Applies pulls (sorted by fetch time) in a few statements. */
export async function applyProductPulls(
  sql: Sql,
  pulls: readonly ProductPull[],
): Promise<ProductApplySummary> {
  const summary: ProductApplySummary = {
    products: 0,
    initial: 0,
    changed: 0,
    unchanged: 0,
    stale: 0,
    snapshots: 0,
    newComments: 0,
  };
  const ordered = [...pulls].sort((a, b) => a.fetchedAt.getTime() - b.fetchedAt.getTime());
  const items = ordered.flatMap((pull) => pull.products.map((p) => ({ p, pull })));
  if (items.length === 0) return summary;

  const state = await lockProducts(sql, items);
  const stored = new Map([...state].map(([id, cur]) => [id, cur.currentId]));
  const writes = planWrites(items, state, summary);
  const written = await writeVersions(sql, PRODUCT_VERSIONS, stored, writes, (w) =>
    versionColumns(sql, w.p, w.pull),
  );
  await insertChildren(sql, writes, written.ids);
  summary.newComments += await insertComments(sql, items);
  summary.snapshots += await insertSnapshots(sql, ordered);
  await updatePointers(sql, pointerRows(state, written.currentIds));
  return summary;
}

/** A product's row, locked, with its current version (none yet: the version's columns null). */
type LockedProduct = Pick<DriverRow<typeof products>, 'product_id' | 'last_seen_at'> &
  LeftJoined<Pick<DriverRow<typeof productVersions>, 'id' | 'version' | 'content_hash'>>;

/** Makes sure every product of the batch has a row, locks them in id order, reads their current state. */
async function lockProducts(sql: Sql, items: readonly PulledProduct[]): Promise<Map<string, ProductState>> {
  const firstSeen = new Map<string, Date>();
  for (const { p, pull } of items)
    if (!firstSeen.has(p.productId)) firstSeen.set(p.productId, pull.fetchedAt);
  const ids = [...firstSeen.keys()].sort();
  const seedRows = ids.map((product_id) => ({
    product_id,
    first_seen_at: firstSeen.get(product_id),
    last_seen_at: firstSeen.get(product_id),
  }));
  for (let i = 0; i < seedRows.length; i += 10_000) {
    const part = seedRows.slice(i, i + 10_000);
    await sql`insert into products ${sql(part, 'product_id', 'first_seen_at', 'last_seen_at')} on conflict (product_id) do nothing`;
  }
  const rows = await sql<LockedProduct[]>`
    select p.product_id, p.last_seen_at, v.id, v.version, v.content_hash
    from products p left join product_versions v on v.id = p.current_version_id
    where p.product_id = any(${ids}::text[])
    order by p.product_id
    for update of p`;
  return new Map(
    rows.map((r) => [
      r.product_id,
      {
        currentId: r.id === null ? null : Number(r.id),
        version: r.version ?? 0,
        hash: r.content_hash,
        lastSeenAt: r.last_seen_at,
        written: false,
      },
    ]),
  );
}

/** Decides, in pull order, which listed products are stale, unchanged, or make a new version. */
function planWrites(
  items: readonly PulledProduct[],
  state: Map<string, ProductState>,
  summary: ProductApplySummary,
): ProductWrite[] {
  const writes: ProductWrite[] = [];
  for (const { p, pull } of items) {
    summary.products++;
    const cur = state.get(p.productId);
    if (!cur) continue;
    if ((cur.currentId !== null || cur.written) && pull.fetchedAt.getTime() < cur.lastSeenAt.getTime()) {
      summary.stale++;
      continue;
    }
    cur.lastSeenAt = pull.fetchedAt;
    const hash = productContentHash(p);
    if (hash === cur.hash) {
      summary.unchanged++;
      continue;
    }
    if (cur.hash === null) summary.initial++;
    else summary.changed++;
    writes.push({ key: p.productId, version: cur.version + 1, hash, validFrom: pull.fetchedAt, p, pull });
    cur.version++;
    cur.hash = hash;
    cur.written = true;
  }
  return writes;
}

/** The history columns of a version, besides the SCD2 ones `writeVersions` fills in. */
function versionColumns(sql: Sql, p: NormalizedProduct, pull: ProductPull): Record<string, unknown> {
  return {
    raw_response_id: pull.rawResponseId,
    record_id: p.id,
    name: p.name,
    tagline: p.tagline,
    description: p.description,
    url: p.url,
    created_at: p.createdAt,
    featured_at: p.featuredAt,
    thumbnail_url: p.thumbnail?.url ?? null,
    thumbnail_type: p.thumbnail?.type ?? null,
    unread_text: sql.json(unreadText(p)),
    extra: sql.json(p.extra),
    normalized: sql.json(p as unknown as Parameters<Sql['json']>[0]),
  };
}

/** The topics, media and links of each new version. */
async function insertChildren(sql: Sql, writes: readonly ProductWrite[], ids: readonly number[]) {
  await insertChildRows(sql, 'product_topics', writes, ids, ({ p }) => p.topics.map((topic) => ({ topic })));
  await insertChildRows(sql, 'product_media', writes, ids, ({ p }) =>
    p.media.map((m) => ({
      position: m.position,
      url: m.url,
      type: m.type,
      video_url: m.videoUrl,
      extra: sql.json(m.extra),
    })),
  );
  await insertChildRows(sql, 'product_links', writes, ids, ({ p }) =>
    p.links.map((l) => ({ position: l.position, url: l.url, type: l.type, extra: sql.json(l.extra) })),
  );
}

/** Keeps each comment once, across pulls; returns how many were new. */
async function insertComments(sql: Sql, items: readonly PulledProduct[]): Promise<number> {
  const comments = new Map<string, Record<string, unknown>>();
  for (const { p, pull } of items) {
    for (const c of p.comments) {
      if (comments.has(c.dedupKey)) continue;
      comments.set(c.dedupKey, {
        product_id: p.productId,
        dedup_key: c.dedupKey,
        body: c.body,
        created_at: c.createdAt,
        created_at_text: c.createdAtText,
        first_seen_at: pull.fetchedAt,
        raw_response_id: pull.rawResponseId,
      });
    }
  }
  const commentRows = [...comments.values()];
  let added = 0;
  for (let i = 0; i < commentRows.length; i += 5_000) {
    const part = commentRows.slice(i, i + 5_000);
    const inserted = await sql`
      insert into product_comments ${sql(part as unknown as Record<string, string>[])}
      on conflict (dedup_key) do nothing returning id`;
    added += inserted.length;
  }
  return added;
}

/** One trending snapshot per listed product per pull; a replayed pull adds none. Returns how many were new. */
async function insertSnapshots(sql: Sql, pulls: readonly ProductPull[]): Promise<number> {
  const snapshotRows = pulls.flatMap((pull) =>
    pull.snapshots.map((s) => ({
      list_date: s.listDate,
      position: s.position,
      product_id: s.productId,
      votes_count: s.votesCount,
      comments_count: s.commentsCount,
      fetched_at: pull.fetchedAt,
      raw_response_id: pull.rawResponseId,
    })),
  );
  let added = 0;
  for (let i = 0; i < snapshotRows.length; i += 5_000) {
    const part = snapshotRows.slice(i, i + 5_000);
    const inserted = await sql`
      insert into trending_snapshots ${sql(part as unknown as Record<string, string>[])}
      on conflict (raw_response_id, position) do nothing returning id`;
    added += inserted.length;
  }
  return added;
}

/** Points every product of the batch at its current version and moves its last-seen time. */
async function updatePointers(sql: Sql, rows: string[][]): Promise<void> {
  await sql`
    update products p set
      current_version_id = u.version_id::bigint,
      last_seen_at = greatest(p.last_seen_at, u.last_seen_at::timestamptz)
    from (values ${sql(rows)}) as u(product_id, version_id, last_seen_at)
    where p.product_id = u.product_id`;
}

/** Deletes product sightings up to `upToId` that a later sighting of the same product superseded. */
export async function dropSupersededProductSightings(tx: Sql, upToId: string): Promise<number> {
  return deleteSuperseded(tx, 'product_sightings', 'product_id', upToId);
}

/** The product tables, derived from the raw landing: what a rebuild empties before it replays. */
export const PRODUCT_DERIVED_TABLES = [
  'trending_snapshots',
  'product_comments',
  'product_topics',
  'product_media',
  'product_links',
  'product_versions',
  'products',
  'product_sightings',
] as const;

/** Empties the product tables for a rebuild (in its transaction; it writes them all again). */
export async function emptyProductHistory(tx: Sql): Promise<void> {
  await truncateTables(tx, PRODUCT_DERIVED_TABLES);
}

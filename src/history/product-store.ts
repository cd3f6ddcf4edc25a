/**
 * Applies pulls of product lists to the product tables. Products are versioned like enterprises
 * (SCD type 2 on a content hash that leaves out votes, comment counts and comments); every pull
 * adds one trending snapshot per listed product (so vote trajectories exist); comments are
 * deduplicated across pulls by (product, created_at, body). Replaying the same pull adds
 * nothing: snapshots are unique per (raw response, position).
 */
import { insertRows, reserveIds } from '../db/bulk.ts';
import type { Sql } from '../db/connect.ts';
import type { NormalizedProduct, NormalizedTrendingSnapshot } from '../normalize/types.ts';
import { productContentHash } from './hash.ts';

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
  const rows = await sql<
    {
      product_id: string;
      last_seen_at: Date;
      id: string | null;
      version: number | null;
      content_hash: string | null;
    }[]
  >`
    select p.product_id, p.last_seen_at, v.id, v.version, v.content_hash
    from products p left join product_versions v on v.id = p.current_version_id
    where p.product_id = any(${ids}::text[])
    order by p.product_id
    for update of p`;
  const state = new Map(
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

  const writes: {
    p: NormalizedProduct;
    pull: ProductPull;
    hash: string;
    version: number;
    previousId: number | null;
  }[] = [];
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
    writes.push({ p, pull, hash, version: cur.version + 1, previousId: null });
    cur.version++;
    cur.hash = hash;
    cur.written = true;
  }

  const versionIds = await reserveIds(sql, 'product_versions', writes.length);
  const lastId = new Map<string, number | null>();
  for (const [pid, cur] of state) lastId.set(pid, cur.currentId);
  for (const [i, w] of writes.entries()) {
    w.previousId = lastId.get(w.p.productId) ?? null;
    lastId.set(w.p.productId, versionIds[i] as number);
  }
  const closeRows = writes
    .filter((w) => w.previousId !== null)
    .map((w) => [w.previousId, w.pull.fetchedAt.toISOString()] as [number, string]);
  if (closeRows.length > 0) {
    await sql`
      update product_versions v set valid_to = u.valid_to::timestamptz, is_current = false
      from (values ${sql(closeRows)}) as u(id, valid_to)
      where v.id = u.id::bigint`;
  }
  const nextOf = new Map<number, Date>();
  for (const w of writes) if (w.previousId !== null) nextOf.set(w.previousId, w.pull.fetchedAt);

  const versionRows: Record<string, unknown>[] = [];
  const topics: Record<string, unknown>[] = [];
  const media: Record<string, unknown>[] = [];
  const links: Record<string, unknown>[] = [];
  for (const [i, w] of writes.entries()) {
    const id = versionIds[i] as number;
    const p = w.p;
    const closedAt = nextOf.get(id) ?? null;
    versionRows.push({
      id,
      product_id: p.productId,
      version: w.version,
      valid_from: w.pull.fetchedAt,
      valid_to: closedAt,
      is_current: closedAt === null,
      content_hash: w.hash,
      raw_response_id: w.pull.rawResponseId,
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
    });
    for (const topic of p.topics) topics.push({ version_id: id, topic });
    for (const m of p.media) {
      media.push({
        version_id: id,
        position: m.position,
        url: m.url,
        type: m.type,
        video_url: m.videoUrl,
        extra: sql.json(m.extra),
      });
    }
    for (const l of p.links) {
      links.push({
        version_id: id,
        position: l.position,
        url: l.url,
        type: l.type,
        extra: sql.json(l.extra),
      });
    }
  }
  await insertRows(sql, 'product_versions', versionRows);
  await insertRows(sql, 'product_topics', topics);
  await insertRows(sql, 'product_media', media);
  await insertRows(sql, 'product_links', links);

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
  for (let i = 0; i < commentRows.length; i += 5_000) {
    const part = commentRows.slice(i, i + 5_000);
    const inserted = await sql`
      insert into product_comments ${sql(part as unknown as Record<string, string>[])}
      on conflict (dedup_key) do nothing returning id`;
    summary.newComments += inserted.length;
  }

  const snapshotRows = ordered.flatMap((pull) =>
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
  for (let i = 0; i < snapshotRows.length; i += 5_000) {
    const part = snapshotRows.slice(i, i + 5_000);
    const inserted = await sql`
      insert into trending_snapshots ${sql(part as unknown as Record<string, string>[])}
      on conflict (raw_response_id, position) do nothing returning id`;
    summary.snapshots += inserted.length;
  }

  const pointerRows = [...state.entries()].map(([pid, cur]) => [
    pid,
    String(lastId.get(pid)),
    cur.lastSeenAt.toISOString(),
  ]);
  await sql`
    update products p set
      current_version_id = u.version_id::bigint,
      last_seen_at = greatest(p.last_seen_at, u.last_seen_at::timestamptz)
    from (values ${sql(pointerRows)}) as u(product_id, version_id, last_seen_at)
    where p.product_id = u.product_id`;
  return summary;
}

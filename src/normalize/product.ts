/**
 * Product object → product row with topics, media, links, thumbnail and comments; a list pull →
 * products plus one trending snapshot per product. Pure.
 *
 * Decisions a reader needs:
 * - Product times (created_at, featured_at, updated_at) are documented without a zone; daybook
 *   reads them as UTC. A time that does carry a zone (Z, ±HH:MM) is converted. All come out as
 *   toISOString() text; an unreadable time is null with the original in `<x>Text`.
 * - Comments with an empty body are dropped; a comment repeated within one payload is kept once
 *   (same dedupKey).
 * - Media and links keep their 1-based `position` in the order received; an item with an empty
 *   url is dropped. A thumbnail with an empty url is null.
 * - In a list pull a product that appears twice is kept once, at its first position; the later
 *   position is simply not used (positions stay those of the list as returned).
 */
import { createHash } from 'node:crypto';
import { isCalendarDate } from '../time/cycles.ts';
import { Product } from '../upstream/schemas.ts';
import { cleanText, extraOf, instantOf, parseTimestampParts } from './text.ts';
import type {
  NormalizedComment,
  NormalizedLink,
  NormalizedMedia,
  NormalizedProduct,
  NormalizedProductList,
  NormalizedThumbnail,
  NormalizedTrendingSnapshot,
} from './types.ts';

/** The documented fields of a product object; everything else goes to `extra`. */
export const DOCUMENTED_PRODUCT_FIELDS: ReadonlySet<string> = new Set(Object.keys(Product.shape));

const MEDIA_FIELDS: ReadonlySet<string> = new Set(['url', 'type', 'videoUrl']);
const LINK_FIELDS: ReadonlySet<string> = new Set(['url', 'type']);
const COMMENT_FIELDS: ReadonlySet<string> = new Set(['body', 'created_at']);

/** Normalizes one product object. */
export function normalizeProduct(p: Product): NormalizedProduct {
  const productId = p.product_id.trim();
  const created = readInstant(p.created_at);
  const featured = readInstant(p.featured_at);
  const updated = readInstant(p.updated_at);

  const topics: string[] = [];
  for (const t of p.topics ?? []) {
    const name = cleanText(t);
    if (name !== null && !topics.includes(name)) topics.push(name);
  }

  const media: NormalizedMedia[] = [];
  for (const [i, m] of (p.media ?? []).entries()) {
    const url = cleanText(m.url);
    if (url === null) continue;
    media.push({
      position: i + 1,
      url,
      type: cleanText(m.type),
      videoUrl: cleanText(m.videoUrl),
      extra: extraOf(m, MEDIA_FIELDS),
    });
  }

  const links: NormalizedLink[] = [];
  for (const [i, l] of (p.product_links ?? []).entries()) {
    const url = cleanText(l.url);
    if (url === null) continue;
    links.push({ position: i + 1, url, type: cleanText(l.type), extra: extraOf(l, LINK_FIELDS) });
  }

  let thumbnail: NormalizedThumbnail | null = null;
  const thumbUrl = p.thumbnail ? cleanText(p.thumbnail.url) : null;
  if (p.thumbnail && thumbUrl !== null) {
    thumbnail = {
      url: thumbUrl,
      type: cleanText(p.thumbnail.type),
      extra: extraOf(p.thumbnail, LINK_FIELDS),
    };
  }

  const comments: NormalizedComment[] = [];
  const seen = new Set<string>();
  for (const c of p.comments ?? []) {
    const body = cleanText(c.body);
    if (body === null) continue;
    const at = readInstant(c.created_at);
    const dedupKey = commentDedupKey(productId, at.iso ?? at.text ?? '', body);
    if (seen.has(dedupKey)) continue;
    seen.add(dedupKey);
    comments.push({
      body,
      createdAt: at.iso,
      createdAtText: at.text,
      dedupKey,
      extra: extraOf(c, COMMENT_FIELDS),
    });
  }

  return {
    productId,
    id: p.id.trim(),
    name: p.name.trim(),
    tagline: cleanText(p.tagline),
    description: cleanText(p.description),
    url: cleanText(p.url),
    createdAt: created.iso,
    createdAtText: created.text,
    featuredAt: featured.iso,
    featuredAtText: featured.text,
    updatedAt: updated.iso,
    updatedAtText: updated.text,
    votesCount: readCount(p.votes_count),
    commentsCount: readCount(p.comments_count),
    topics,
    media,
    links,
    thumbnail,
    comments,
    extra: extraOf(p, DOCUMENTED_PRODUCT_FIELDS),
  };
}

/**
 * Normalizes one pull of a day's list. `listDate` is the requested YYYY-MM-DD; `fetchedAt` is
 * when the response arrived (passed in: this module never reads the clock).
 */
export function normalizeProductList(
  items: Product[],
  listDate: string,
  fetchedAt: Date,
): NormalizedProductList {
  if (!isCalendarDate(listDate)) throw new RangeError(`list date is not a calendar date: ${listDate}`);
  if (Number.isNaN(fetchedAt.getTime())) throw new RangeError('fetchedAt is not a valid date');
  const fetched = fetchedAt.toISOString();
  const products: NormalizedProduct[] = [];
  const snapshots: NormalizedTrendingSnapshot[] = [];
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    const product = normalizeProduct(item);
    if (seen.has(product.productId)) continue;
    seen.add(product.productId);
    products.push(product);
    snapshots.push({
      listDate,
      position: i + 1,
      productId: product.productId,
      votesCount: product.votesCount,
      commentsCount: product.commentsCount,
      fetchedAt: fetched,
    });
  }
  return { products, snapshots };
}

/** sha256 hex that identifies a comment across pulls: product, normalized time and body. */
export function commentDedupKey(productId: string, createdAt: string, body: string): string {
  return createHash('sha256').update(`${productId}\n${createdAt}\n${body}`, 'utf8').digest('hex');
}

/** A product time as ISO UTC; zone-less text is read as UTC. */
export function productInstant(text: string): string | null {
  const parts = parseTimestampParts(text);
  return parts === null ? null : instantOf(parts).toISOString();
}

function readInstant(v: unknown): { iso: string | null; text: string | null } {
  const text = cleanText(v);
  if (text === null) return { iso: null, text: null };
  const iso = productInstant(text);
  return iso === null ? { iso: null, text } : { iso, text: null };
}

function readCount(v: number | null | undefined): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

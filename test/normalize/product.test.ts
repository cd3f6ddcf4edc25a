import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { normalizeProduct, normalizeProductList } from '../../src/normalize/product.ts';
import { Product } from '../../src/upstream/schemas.ts';
import { sampleProductRecord } from '../support/records.ts';

const raw = sampleProductRecord;

function norm(overrides: Record<string, unknown> = {}) {
  return normalizeProduct(Product.parse(raw(overrides)));
}

describe('a product object', () => {
  it('becomes a product row with its children', () => {
    const p = norm();
    expect(p).toMatchObject({
      productId: '912345',
      id: '0b7d3c1e-4f7a-4a4e-9d2b-1c2d3e4f5a6b',
      name: 'Daybook',
      tagline: 'History for your data',
      url: 'https://example.com/posts/daybook',
      votesCount: 412,
      commentsCount: 37,
      createdAt: '2026-11-20T08:01:00.000Z',
      featuredAt: '2026-11-20T08:01:00.000Z',
      updatedAt: '2026-11-21T10:00:00.000Z',
      topics: ['Developer Tools', 'Productivity'],
      thumbnail: { url: 'https://img.example.com/t.png', type: 'image', extra: {} },
      links: [{ position: 1, url: 'https://daybook.dev', type: 'Website', extra: {} }],
      extra: {},
    });
    expect(p.media).toEqual([
      { position: 1, url: 'https://img.example.com/1.png', type: 'image', videoUrl: null, extra: {} },
      {
        position: 2,
        url: 'https://img.example.com/2.png',
        type: 'video',
        videoUrl: 'https://youtube.com/watch?v=x',
        extra: {},
      },
    ]);
  });

  it('zone-less times are read as UTC; times with a zone are converted to UTC', () => {
    expect(norm({ created_at: '2026-11-20T08:01:00' }).createdAt).toBe('2026-11-20T08:01:00.000Z');
    expect(norm({ created_at: '2026-11-20T00:01:00-08:00' }).createdAt).toBe('2026-11-20T08:01:00.000Z');
    expect(norm({ created_at: '2026-11-20T08:01:00.123Z' }).createdAt).toBe('2026-11-20T08:01:00.123Z');
  });

  it('a missing featured time is null; an unreadable one keeps its text', () => {
    expect(norm({ featured_at: null })).toMatchObject({ featuredAt: null, featuredAtText: null });
    expect(norm({ featured_at: '' })).toMatchObject({ featuredAt: null, featuredAtText: null });
    expect(norm({ featured_at: 'yesterday' })).toMatchObject({
      featuredAt: null,
      featuredAtText: 'yesterday',
    });
  });

  it('topics are trimmed, deduplicated and empty ones dropped', () => {
    expect(norm({ topics: [' AI ', 'AI', '', 'SaaS', '  '] }).topics).toEqual(['AI', 'SaaS']);
  });

  it('counts sent as digit strings are numbers', () => {
    expect(norm({ votes_count: '516', comments_count: '0' })).toMatchObject({
      votesCount: 516,
      commentsCount: 0,
    });
  });

  it('missing optional parts give nulls and empty lists', () => {
    const p = normalizeProduct(Product.parse({ id: 'u-1', product_id: 7, name: 'Bare' }));
    expect(p).toMatchObject({
      productId: '7',
      tagline: null,
      createdAt: null,
      votesCount: null,
      topics: [],
      media: [],
      links: [],
      thumbnail: null,
      comments: [],
      extra: {},
    });
  });

  it('unknown fields go to extra, on the product and on its children', () => {
    const p = norm({
      slug: 'daybook',
      media: [{ url: 'https://img.example.com/d', type: 'interactive_demo', videoUrl: null, width: 800 }],
      product_links: [{ url: 'https://x', type: 'Chrome', store: true }],
      comments: [{ body: 'hi', created_at: '2026-11-20T09:00:00Z', author: 'ann' }],
    });
    expect(p.extra).toEqual({ slug: 'daybook' });
    expect(p.media[0]?.extra).toEqual({ width: 800 });
    expect(p.links[0]?.extra).toEqual({ store: true });
    expect(p.comments[0]?.extra).toEqual({ author: 'ann' });
  });

  it('empty strings in media become null and media without url are dropped', () => {
    const p = norm({
      media: [
        { url: '', type: 'image', videoUrl: null },
        { url: 'https://img.example.com/3.png', type: 'image', videoUrl: '' },
      ],
    });
    expect(p.media).toEqual([
      { position: 2, url: 'https://img.example.com/3.png', type: 'image', videoUrl: null, extra: {} },
    ]);
  });
});

describe('comments', () => {
  it('carry a dedup key: sha256 of product id, normalized time and body', () => {
    const [c] = norm().comments;
    const expected = createHash('sha256')
      .update('912345\n2026-11-20T09:00:00.000Z\nCongrats on the launch!')
      .digest('hex');
    expect(c).toEqual({
      body: 'Congrats on the launch!',
      createdAt: '2026-11-20T09:00:00.000Z',
      createdAtText: null,
      dedupKey: expected,
      extra: {},
    });
  });

  it('the same comment spelled with a different time format has the same key', () => {
    const a = norm({ comments: [{ body: 'x', created_at: '2026-11-20T09:00:00Z' }] }).comments[0];
    const b = norm({ comments: [{ body: ' x\n', created_at: '2026-11-20T09:00:00.000Z' }] }).comments[0];
    expect(a?.dedupKey).toBe(b?.dedupKey);
  });

  it('a comment repeated in one payload is kept once; empty bodies are dropped', () => {
    const p = norm({
      comments: [
        { body: 'Nice', created_at: '2026-11-20T09:00:00Z' },
        { body: 'Nice', created_at: '2026-11-20T09:00:00Z' },
        { body: 'Nice', created_at: '2026-11-20T09:05:00Z' },
        { body: '   ', created_at: '2026-11-20T09:06:00Z' },
      ],
    });
    expect(p.comments.map((c) => c.createdAt)).toEqual([
      '2026-11-20T09:00:00.000Z',
      '2026-11-20T09:05:00.000Z',
    ]);
  });

  it('line breaks and markup inside a body are kept', () => {
    expect(
      norm({ comments: [{ body: 'a\n<b>b</b>', created_at: '2026-11-20T09:00:00Z' }] }).comments[0]?.body,
    ).toBe('a\n<b>b</b>');
  });
});

describe('a list pull', () => {
  const fetchedAt = new Date('2026-11-21T09:00:00Z');

  it('gives one snapshot per product with its 1-based position, votes and fetch time', () => {
    const items = [
      Product.parse(raw({ product_id: '1', votes_count: 500 })),
      Product.parse(raw({ product_id: '2', votes_count: 300, comments_count: 4 })),
    ];
    const { products, snapshots } = normalizeProductList(items, '2026-11-20', fetchedAt);
    expect(products.map((p) => p.productId)).toEqual(['1', '2']);
    expect(snapshots).toEqual([
      {
        listDate: '2026-11-20',
        position: 1,
        productId: '1',
        votesCount: 500,
        commentsCount: 37,
        fetchedAt: '2026-11-21T09:00:00.000Z',
      },
      {
        listDate: '2026-11-20',
        position: 2,
        productId: '2',
        votesCount: 300,
        commentsCount: 4,
        fetchedAt: '2026-11-21T09:00:00.000Z',
      },
    ]);
  });

  it('a product listed twice is kept once, at its first position', () => {
    const items = ['1', '2', '1', '3'].map((id) => Product.parse(raw({ product_id: id })));
    const { products, snapshots } = normalizeProductList(items, '2026-11-20', fetchedAt);
    expect(products).toHaveLength(3);
    expect(snapshots.map((s) => [s.productId, s.position])).toEqual([
      ['1', 1],
      ['2', 2],
      ['3', 4],
    ]);
  });

  it('an empty list gives nothing', () => {
    expect(normalizeProductList([], '2026-11-20', fetchedAt)).toEqual({ products: [], snapshots: [] });
  });

  it('a list date that is not a calendar date is refused', () => {
    expect(() => normalizeProductList([], '2026-02-30', fetchedAt)).toThrow(RangeError);
  });
});

import { describe, expect, it, vi } from 'vitest';
import { PRODUCT_TOPICS, ProductWorld } from '../../src/sim/products.ts';
import type { SimProduct } from '../../src/sim/types.ts';
import { addDays, pacificDayStart } from '../../src/time/cycles.ts';

const LATER = new Date('2027-06-01T00:00:00Z');
const STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

function days(from: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => addDays(from, i));
}

function isWeekend(date: string): boolean {
  const d = new Date(`${date}T00:00:00Z`).getUTCDay();
  return d === 0 || d === 6;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** What must never change as `now` moves. */
function fixedPart(
  p: SimProduct,
): Omit<SimProduct, 'votes_count' | 'comments_count' | 'comments' | 'updated_at'> {
  const { votes_count: _v, comments_count: _c, comments: _cs, updated_at: _u, ...rest } = p;
  return rest;
}

// CPU-bound work of a fixed size (a year of lists): seconds on an idle machine, several times that
// on a busy one. The timeout is a hang guard, not a deadline.
describe('ProductWorld', { timeout: 5 * 60_000 }, () => {
  it('gives the same lists for the same seed and different lists for another seed', () => {
    const a = new ProductWorld({ seed: 1 }).list('2026-03-10', LATER);
    const b = new ProductWorld({ seed: 1 }).list('2026-03-10', LATER);
    const c = new ProductWorld({ seed: 2 }).list('2026-03-10', LATER);
    expect(a).toEqual(b);
    expect(c.map((p) => p.name)).not.toEqual(a.map((p) => p.name));
  });

  it('gives a product the same answer whatever was asked before', () => {
    const fresh = new ProductWorld({ seed: 5 });
    const warm = new ProductWorld({ seed: 5 });
    warm.find('nothing', LATER);
    warm.list('2026-04-02', LATER);
    expect(fresh.list('2026-04-01', LATER)).toEqual(warm.list('2026-04-01', LATER));
  });

  it('lists between 10 and 50 products a day, fewer on weekends', () => {
    const world = new ProductWorld({ seed: 3 });
    const weekday: number[] = [];
    const weekend: number[] = [];
    for (const date of days('2026-01-01', 70)) {
      const n = world.list(date, LATER).length;
      expect(n).toBeGreaterThanOrEqual(10);
      expect(n).toBeLessThanOrEqual(50);
      (isWeekend(date) ? weekend : weekday).push(n);
    }
    expect(median(weekend)).toBeLessThan(median(weekday));
  });

  it('orders each list by votes, most first, ties broken by product_id', () => {
    const list = new ProductWorld({ seed: 3 }).list('2026-02-03', new Date('2026-02-03T20:00:00Z'));
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1] as SimProduct;
      const cur = list[i] as SimProduct;
      expect(
        prev.votes_count > cur.votes_count ||
          (prev.votes_count === cur.votes_count && Number(prev.product_id) < Number(cur.product_id)),
      ).toBe(true);
    }
  });

  it('gives final votes by rank close to the medians of docs/registry.md over 60 weekdays', () => {
    const world = new ProductWorld({ seed: 11 });
    const byRank = new Map<number, number[]>();
    const weekdays = days('2026-01-05', 90)
      .filter((d) => !isWeekend(d))
      .slice(0, 60);
    for (const date of weekdays) {
      world.list(date, LATER).forEach((p, i) => {
        byRank.set(i + 1, [...(byRank.get(i + 1) ?? []), p.votes_count]);
      });
    }
    const expected: [number, number, number][] = [
      [1, 430, 620],
      [2, 340, 490],
      [3, 270, 395],
      [5, 195, 280],
      [10, 105, 160],
      [20, 20, 35],
      [30, 8, 17],
    ];
    for (const [rank, low, high] of expected) {
      const m = median(byRank.get(rank) ?? []);
      expect(m, `median votes of #${rank}`).toBeGreaterThanOrEqual(low);
      expect(m, `median votes of #${rank}`).toBeLessThanOrEqual(high);
    }
  });

  it('gives weekends fewer votes than weekdays', () => {
    const world = new ProductWorld({ seed: 11 });
    const tops = days('2026-01-05', 84).map((d) => ({ d, v: world.list(d, LATER)[0]?.votes_count ?? 0 }));
    const weekend = median(tops.filter((t) => isWeekend(t.d)).map((t) => t.v));
    const weekday = median(tops.filter((t) => !isWeekend(t.d)).map((t) => t.v));
    expect(weekend).toBeLessThan(weekday * 0.8);
  });

  it('grows votes and comments monotonically as now advances, and changes nothing else', () => {
    const world = new ProductWorld({ seed: 4 });
    const date = '2026-03-04';
    const start = pacificDayStart(date).getTime();
    let previous = new Map<string, SimProduct>();
    let baseline: Map<string, unknown> | undefined;
    for (let h = 0; h <= 24 * 16; h += 3) {
      const now = new Date(start + h * 3600_000 + 17_000);
      const list = world.list(date, now);
      const current = new Map(list.map((p) => [p.id, p]));
      baseline ??= new Map(list.map((p) => [p.id, fixedPart(p)]));
      for (const p of list) {
        expect(fixedPart(p)).toEqual(baseline.get(p.id));
        expect(p.comments_count).toBeGreaterThanOrEqual(p.comments.length);
        expect(p.comments.length).toBeLessThanOrEqual(5);
        for (const c of p.comments) expect(Date.parse(c.created_at)).toBeLessThanOrEqual(now.getTime());
        const before = previous.get(p.id);
        if (before) {
          expect(p.votes_count).toBeGreaterThanOrEqual(before.votes_count);
          expect(p.comments_count).toBeGreaterThanOrEqual(before.comments_count);
          expect(p.updated_at >= before.updated_at).toBe(true);
        }
      }
      previous = current;
    }
  });

  it('reaches about 85% of final votes when the Pacific day ends', () => {
    const world = new ProductWorld({ seed: 4 });
    const date = '2026-03-04';
    const atEnd = world.list(date, new Date(pacificDayStart(addDays(date, 1)).getTime() - 1));
    const final = new Map(world.list(date, LATER).map((p) => [p.id, p.votes_count]));
    const top = atEnd[0] as SimProduct;
    const ratio = top.votes_count / (final.get(top.id) ?? 1);
    expect(ratio).toBeGreaterThan(0.8);
    expect(ratio).toBeLessThan(0.9);
  });

  it('shows comments newest first, each with a Z timestamp', () => {
    const list = new ProductWorld({ seed: 4 }).list('2026-03-04', LATER);
    const top = list[0] as SimProduct;
    expect(top.comments).toHaveLength(5);
    const times = top.comments.map((c) => c.created_at);
    for (const t of times) expect(t).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('returns an empty list before the Pacific day begins and before the epoch', () => {
    const world = new ProductWorld({ seed: 1, epoch: '2026-02-01' });
    const start = pacificDayStart('2026-03-01');
    expect(world.list('2026-03-01', new Date(start.getTime() - 1))).toEqual([]);
    expect(world.list('2026-03-01', start).length).toBeGreaterThan(0);
    expect(world.list('2026-01-31', LATER)).toEqual([]);
    expect(world.list('2026-02-30', LATER)).toEqual([]);
  });

  it('gives null videoUrl to images and a YouTube or Loom videoUrl to videos', () => {
    const world = new ProductWorld({ seed: 9 });
    const media = days('2026-01-01', 30).flatMap((d) => world.list(d, LATER).flatMap((p) => p.media));
    const types = new Set(media.map((m) => m.type));
    expect(types).toEqual(new Set(['image', 'video', 'interactive_demo']));
    for (const m of media) {
      if (m.type === 'video') expect(m.videoUrl).toMatch(/^https:\/\/(www\.youtube\.com|www\.loom\.com)\//);
      else expect(m.videoUrl).toBeNull();
    }
  });

  it('fills every field in the documented formats', () => {
    const world = new ProductWorld({ seed: 9 });
    for (const p of world.list('2026-05-05', LATER)) {
      expect(p.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(p.product_id).toMatch(/^\d{6,7}$/);
      expect(p.url).toMatch(/^https:\/\/www\.producthunt\.com\/posts\/[a-z0-9-]+$/);
      expect(p.created_at).toMatch(STAMP);
      expect(p.featured_at).toMatch(STAMP);
      expect(p.updated_at).toMatch(STAMP);
      expect(p.featured_at >= p.created_at).toBe(true);
      expect(p.topics.length).toBeGreaterThanOrEqual(1);
      expect(p.topics.length).toBeLessThanOrEqual(4);
      for (const t of p.topics) expect(PRODUCT_TOPICS).toContain(t);
      expect(p.media.length).toBeGreaterThanOrEqual(1);
      expect(p.media.length).toBeLessThanOrEqual(5);
      expect(p.thumbnail.type).toBe('image');
      expect(p.product_links.length).toBeGreaterThanOrEqual(1);
      expect(p.product_links.length).toBeLessThanOrEqual(3);
      expect(p.product_links[0]?.type).toBe('Website');
    }
  });

  it('posts products at about 00:01 Pacific on their launch day', () => {
    const list = new ProductWorld({ seed: 9 }).list('2026-07-04', LATER);
    for (const p of list) {
      // 2026-07-04 is in PDT (UTC-7), so 00:01 PT is 07:01 UTC.
      expect(p.created_at.startsWith('2026-07-04T07:01:')).toBe(true);
    }
  });

  it('gives every product a unique product_id, id and name over a year', () => {
    const world = new ProductWorld({ seed: 21 });
    const all = days('2026-01-01', 365).flatMap((d) => world.list(d, LATER));
    expect(new Set(all.map((p) => p.id)).size).toBe(all.length);
    expect(new Set(all.map((p) => p.product_id)).size).toBe(all.length);
    expect(new Set(all.map((p) => p.name.toLowerCase())).size).toBe(all.length);
  });

  it('finds a product by name, trimmed and case-insensitive', () => {
    const world = new ProductWorld({ seed: 8 });
    const target = world.list('2026-02-14', LATER)[3] as SimProduct;
    const found = world.find(`  ${target.name.toUpperCase()} `, LATER);
    expect(found).toEqual(target);
  });

  it('does not find a product that has not launched yet, or a name that does not exist', () => {
    const world = new ProductWorld({ seed: 8 });
    const target = world.list('2026-02-14', LATER)[0] as SimProduct;
    expect(world.find(target.name, new Date('2026-02-13T12:00:00Z'))).toBeUndefined();
    expect(world.find('Definitely Not A Product', LATER)).toBeUndefined();
    expect(world.find(target.name, new Date('2025-06-01T00:00:00Z'))).toBeUndefined();
  });

  it('finds in a year of lists quickly after the first call', () => {
    const world = new ProductWorld({ seed: 8 });
    const now = new Date('2026-12-31T20:00:00Z');
    // Quickly: the first call plans the year's days, and the later ones plan none again (counted
    // as work, not timed: a timing would say more about the machine's load than about `find`).
    const plan = vi.spyOn(world as unknown as { plan: (date: string) => unknown }, 'plan');
    world.find('warm up', now);
    expect(plan.mock.calls.length).toBeGreaterThan(300);
    plan.mockClear();
    for (let i = 0; i < 100; i++) world.find(`missing ${i}`, now);
    expect(plan).not.toHaveBeenCalled();
  });

  it('returns fresh objects, so a caller that mutates one does not change the world', () => {
    const world = new ProductWorld({ seed: 8 });
    const first = world.list('2026-02-14', LATER)[0] as SimProduct;
    first.name = 'changed';
    first.media.length = 0;
    const again = world.list('2026-02-14', LATER)[0] as SimProduct;
    expect(again.name).not.toBe('changed');
    expect(again.media.length).toBeGreaterThan(0);
  });
});

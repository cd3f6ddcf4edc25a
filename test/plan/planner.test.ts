import { describe, expect, it } from 'vitest';
import {
  capacityOf,
  type PlanInput,
  planCycle,
  summarizePlan,
  type WatchCandidate,
} from '../../src/plan/planner.ts';
import { Rng } from '../../src/sim/rng.ts';
import { cycleOf } from '../../src/time/cycles.ts';
import { RELATED_PRIORITY } from '../../src/watch/csv.ts';

const day = (d: string) => new Date(`${d}T00:00:00Z`);

function entry(id: number, over: Partial<WatchCandidate> = {}): WatchCandidate {
  return {
    id,
    keyword: `企业${id}`,
    priority: 0,
    pid: null,
    lastRefreshedAt: null,
    lastOutcome: null,
    lastCycle: null,
    addedAt: day('2026-01-01'),
    // Due at its last refresh unless said: the round-robin order of entries without an estimate.
    dueAt: over.lastRefreshedAt ?? null,
    refreshedCycle: over.lastRefreshedAt ? cycleOf(over.lastRefreshedAt) : null,
    ...over,
  };
}

function input(candidates: WatchCandidate[], over: Partial<PlanInput> = {}): PlanInput {
  return {
    cycle: '2026-11-22',
    candidates,
    doneWatchIds: new Set(),
    donePids: new Set(),
    creditsPerQuery: 3,
    creditBudget: 3000,
    rateLimitPerMinute: 100,
    windowMinutes: 60,
    ...over,
  };
}

const ids = (xs: { id: number }[]) => xs.map((x) => x.id);

describe('the planner', () => {
  it('orders by priority, then never refreshed, then the oldest refresh, then id', () => {
    const plan = planCycle(
      input([
        entry(1, { lastRefreshedAt: day('2026-11-20') }),
        entry(2, { lastRefreshedAt: day('2026-11-10') }),
        entry(3),
        entry(4, { priority: 5, lastRefreshedAt: day('2026-11-21') }),
        entry(5),
      ]),
    );
    expect(ids(plan.selected)).toEqual([4, 3, 5, 2, 1]);
  });

  it('defers what the credit budget cannot pay for, saying so', () => {
    const plan = planCycle(
      input(
        [1, 2, 3, 4, 5].map((i) => entry(i)),
        { creditBudget: 10 },
      ),
    );
    expect(ids(plan.selected)).toEqual([1, 2, 3]);
    expect(plan.deferred.map((d) => [d.entry.id, d.reason])).toEqual([
      [4, 'credit_budget'],
      [5, 'credit_budget'],
    ]);
    expect(plan.creditsNeeded).toBe(9);
    expect(summarizePlan(plan)).toBe(
      'cycle 2026-11-22: 3 selected (9 credits), 2 deferred (2 credit budget)',
    );
  });

  it('defers what the rate window cannot fit', () => {
    const plan = planCycle(
      input(
        [1, 2, 3].map((i) => entry(i)),
        { rateLimitPerMinute: 1, windowMinutes: 2 },
      ),
    );
    expect(ids(plan.selected)).toEqual([1, 2]);
    expect(plan.deferred[0]).toMatchObject({ reason: 'rate_window' });
  });

  it('queries two keywords that resolve to the same PID once', () => {
    const plan = planCycle(
      input([entry(1, { pid: 'P' }), entry(2, { pid: 'P', priority: 9 }), entry(3, { pid: 'Q' })]),
    );
    expect(ids(plan.selected)).toEqual([2, 3]);
    expect(plan.skipped).toEqual([
      {
        entry: expect.objectContaining({ id: 1 }),
        reason: 'duplicate_pid',
        detail: 'same PID as watch entry 2',
      },
    ]);
  });

  it('skips entries already fetched this cycle and PIDs already bought', () => {
    const plan = planCycle(
      input([entry(1), entry(2, { pid: 'P' }), entry(3)], {
        doneWatchIds: new Set([1]),
        donePids: new Set(['P']),
      }),
    );
    expect(ids(plan.selected)).toEqual([3]);
    expect(plan.skipped.map((s) => s.reason).sort()).toEqual(['already_fetched_this_cycle', 'duplicate_pid']);
  });

  it('rests entries whose last answer was not_found for a week, then tries them again', () => {
    const recent = entry(1, { lastOutcome: 'not_found', lastCycle: '2026-11-20' });
    const old = entry(2, { lastOutcome: 'not_found', lastCycle: '2026-11-15' });
    const transient = entry(3, { lastOutcome: 'server_error', lastCycle: '2026-11-21' });
    const plan = planCycle(input([recent, old, transient]));
    expect(ids(plan.selected)).toEqual([2, 3]);
    expect(plan.skipped[0]).toMatchObject({
      reason: 'permanent_error_recent',
      detail: 'not_found in cycle 2026-11-20',
    });
  });

  it('a zero budget defers everything', () => {
    const plan = planCycle(input([entry(1), entry(2)], { creditBudget: 0 }));
    expect(plan.selected).toEqual([]);
    expect(plan.deferred).toHaveLength(2);
  });

  it('accounts for every candidate exactly once, whatever the input', () => {
    const rng = new Rng(42);
    for (let round = 0; round < 50; round++) {
      const n = rng.int(0, 200);
      const candidates = Array.from({ length: n }, (_, i) =>
        entry(i + 1, {
          priority: rng.int(-2, 2),
          pid: rng.chance(0.5) ? `P${rng.int(1, 40)}` : null,
          lastRefreshedAt: rng.chance(0.5) ? new Date(Date.UTC(2026, 10, rng.int(1, 21))) : null,
          lastOutcome: rng.chance(0.1) ? 'not_found' : null,
          lastCycle: rng.chance(0.5) ? '2026-11-19' : null,
        }),
      );
      const plan = planCycle(
        input(candidates, {
          creditBudget: rng.int(0, 600),
          doneWatchIds: new Set(Array.from({ length: 10 }, () => rng.int(1, 200))),
          donePids: new Set([`P${rng.int(1, 40)}`]),
        }),
      );
      const seen = [
        ...ids(plan.selected),
        ...plan.deferred.map((d) => d.entry.id),
        ...plan.skipped.map((s) => s.entry.id),
      ];
      expect(seen.sort((a, b) => a - b)).toEqual(candidates.map((c) => c.id));
      const pids = plan.selected.flatMap((e) => (e.pid ? [e.pid] : []));
      expect(new Set(pids).size).toBe(pids.length);
      expect(plan.creditsNeeded).toBeLessThanOrEqual(Math.max(0, plan.capacity.byCredits * 3));
    }
  });

  it('capacity: the tightest of credits, rate window and cap, and what binds', () => {
    const limits = { creditsPerQuery: 3, creditBudget: 3000, rateLimitPerMinute: 100, windowMinutes: 60 };
    expect(capacityOf(limits, 10)).toEqual({
      byCredits: 1000,
      byRate: 6000,
      limit: 1000,
      binding: 'credit_budget',
    });
    expect(capacityOf({ ...limits, windowMinutes: 5 }, 10)).toMatchObject({
      limit: 500,
      binding: 'rate_window',
    });
    expect(capacityOf({ ...limits, maxEntries: 7 }, 10)).toMatchObject({ limit: 7, binding: 'max_entries' });
    expect(capacityOf({ ...limits, creditsPerQuery: 0, windowMinutes: 1000 }, 10)).toMatchObject({
      byCredits: 10,
      limit: 10,
    });
  });

  it('given the head of the order and a count of the rest, defers the rest unseen for the binding reason', () => {
    const plan = planCycle(
      input(
        [1, 2, 3, 4, 5].map((i) => entry(i)),
        { creditBudget: 9, beyond: 995 },
      ),
    );
    expect(ids(plan.selected)).toEqual([1, 2, 3]);
    expect(plan.deferred.map((d) => d.entry.id)).toEqual([4, 5]);
    expect(plan).toMatchObject({ deferredBeyond: 995, deferReason: 'credit_budget', complete: true });
    expect(plan.capacity.byCredits).toBe(3);
    expect(summarizePlan(plan)).toBe(
      'cycle 2026-11-22: 3 selected (9 credits), 997 deferred (997 credit budget)',
    );
  });

  it('says it is not complete when skips ate the head before the capacity was filled', () => {
    const resting = (id: number) => entry(id, { lastOutcome: 'not_found', lastCycle: '2026-11-21' });
    const plan = planCycle(
      input([resting(1), resting(2), entry(3, { pid: 'P' })], { creditBudget: 9, beyond: 10 }),
    );
    expect(plan.complete).toBe(false);
    expect(plan.deferredBeyond).toBe(0);
    // With nothing beyond, the same head is a complete plan.
    expect(planCycle(input([resting(1), resting(2), entry(3)], { creditBudget: 9 })).complete).toBe(true);
  });

  it('planning a long enough head selects what planning every entry selects', () => {
    const rng = new Rng(7);
    const key = (c: WatchCandidate) => [
      c.priority,
      c.lastRefreshedAt?.getTime() ?? Number.NEGATIVE_INFINITY,
      c.id,
    ];
    const before = (a: WatchCandidate, b: WatchCandidate) => {
      const [pa, sa, ia] = key(a) as [number, number, number];
      const [pb, sb, ib] = key(b) as [number, number, number];
      return pb - pa || sa - sb || ia - ib;
    };
    for (let round = 0; round < 50; round++) {
      const n = rng.int(1, 400);
      const all = Array.from({ length: n }, (_, i) =>
        entry(i + 1, {
          priority: rng.int(0, 3),
          pid: rng.chance(0.6) ? `P${rng.int(1, 60)}` : null,
          lastRefreshedAt: rng.chance(0.7) ? new Date(Date.UTC(2026, 10, rng.int(1, 21))) : null,
          lastOutcome: rng.chance(0.15) ? 'not_found' : null,
          lastCycle: rng.chance(0.5) ? '2026-11-19' : null,
        }),
      ).sort(before);
      const over = { creditBudget: rng.int(0, 300) };
      const full = planCycle(input(all, over));
      // As the plan job does: a head, then longer heads until the plan is complete.
      let size = rng.int(0, n);
      let plan = planCycle(input(all.slice(0, size), { ...over, beyond: n - size }));
      while (!plan.complete) {
        size = Math.max(1, size * 4);
        plan = planCycle(input(all.slice(0, size), { ...over, beyond: Math.max(0, n - size) }));
      }
      expect(ids(plan.selected)).toEqual(ids(full.selected));
      expect(plan.selected.length + plan.deferred.length + plan.skipped.length + plan.deferredBeyond).toBe(n);
      expect(plan.deferReason).toBe(full.deferReason);
    }
  });

  it('plans shareholders watched through a holder after every entry of the user, within their share', () => {
    const shareholder = (id: number) => entry(id, { priority: RELATED_PRIORITY });
    // Ten entries a cycle; the shareholders may take 20% of them.
    const limits = { creditBudget: 30, relatedShare: 20 };
    const plan = planCycle(
      input(
        [shareholder(1), shareholder(2), shareholder(3), entry(4, { priority: -1000 }), entry(5)],
        limits,
      ),
    );
    expect(ids(plan.selected)).toEqual([5, 4, 1, 2]);
    expect(plan.deferred.map((d) => [d.entry.id, d.reason])).toEqual([[3, 'related_share']]);
    // The user's own entries fill the cycle first: no shareholder gets in.
    const full = planCycle(
      input([shareholder(1), ...Array.from({ length: 10 }, (_, i) => entry(10 + i))], limits),
    );
    expect(ids(full.selected)).toEqual(Array.from({ length: 10 }, (_, i) => 10 + i));
    expect(full.deferred.map((d) => [d.entry.id, d.reason])).toEqual([[1, 'credit_budget']]);
    // Shareholders beyond a head that ended on a capped shareholder wait for the share too.
    const head = planCycle(
      input([entry(4), shareholder(1), shareholder(2), shareholder(3)], { ...limits, beyond: 5 }),
    );
    expect(head.complete).toBe(true);
    expect(head.deferredBeyond).toBe(5);
    expect(head.deferReason).toBe('related_share');
    // No share of their own: they take what is left.
    expect(
      ids(planCycle(input([shareholder(1), shareholder(2), shareholder(3)], { creditBudget: 30 })).selected),
    ).toEqual([1, 2, 3]);
  });

  it('plans 1,000,000 entries', () => {
    const candidates = Array.from({ length: 1_000_000 }, (_, i) =>
      entry(i + 1, {
        priority: i % 7,
        lastRefreshedAt: i % 3 === 0 ? null : new Date(1_790_000_000_000 + (i % 1000) * 1000),
      }),
    );
    const started = performance.now();
    const plan = planCycle(input(candidates, { creditBudget: 30_000, windowMinutes: 1440 }));
    console.log(`planned 1,000,000 candidates in ${Math.round(performance.now() - started)} ms`);
    expect(plan.selected).toHaveLength(10_000);
    expect(plan.selected.length + plan.deferred.length + plan.skipped.length).toBe(1_000_000);
    expect(plan.selected[0]?.priority).toBe(6);
  });
});

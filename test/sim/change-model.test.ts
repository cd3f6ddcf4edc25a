/**
 * The simulator's change model: firms change unevenly (a heavy-tailed rate per firm that its
 * profile predicts), a change makes more changes likelier for a while, the share of the whole
 * world changed each day is what was configured, and the ground truth (what changed, which
 * fields, how severe, each firm's rate) is on the control surface.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnterpriseWorld } from '../../src/sim/enterprises.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import type { SimEnterprise } from '../../src/sim/types.ts';
import { addDays } from '../../src/time/cycles.ts';
import { runDaybook } from '../support/cli.ts';
import { rawGet, startTestSim } from '../support/sim.ts';

const EPOCH = '2026-01-01';
const DAYS = 90;
const CLOSED = new Set(['注销', '吊销，已注销', '撤销', '迁出']);

/** The changes of each day of a world run forward, and the states before each refresh. */
function run(size: number, share: number, seed = 3) {
  const world = new EnterpriseWorld({ seed, size, epoch: EPOCH, changeShare: share });
  const rates = world.rates();
  const status = new Map(world.all().map((e) => [e.PID, e.ENTSTATUS]));
  const days: ReturnType<EnterpriseWorld['changesIn']>[] = [];
  for (let d = 1; d <= DAYS; d++) {
    const cycle = addDays(EPOCH, d);
    world.at(cycle);
    days.push(world.changesIn(cycle));
  }
  return { world, rates, status, days };
}

describe("the simulator's change model", () => {
  const base = run(3000, 0.02);

  it('changes the configured share of the whole world a day, on average', () => {
    const mean = base.days.reduce((a, d) => a + d.length, 0) / DAYS / 3000;
    expect(mean).toBeGreaterThan(0.017);
    expect(mean).toBeLessThan(0.023);
    const more = run(3000, 0.05);
    const meanMore = more.days.reduce((a, d) => a + d.length, 0) / DAYS / 3000;
    expect(meanMore).toBeGreaterThan(0.044);
    expect(meanMore).toBeLessThan(0.056);
    const none = new EnterpriseWorld({ seed: 3, size: 300, epoch: EPOCH, changeShare: 0 });
    expect(none.changesIn(addDays(EPOCH, 5))).toEqual([]);
    expect(() => new EnterpriseWorld({ seed: 3, size: 10, epoch: EPOCH, changeShare: 0.9 })).toThrow(
      /changeShare must be from 0 to 0.5/,
    );
  });

  it('is uneven: a tenth of the firms make most of the changes, and rates spread over orders of magnitude', () => {
    const counts = new Map<string, number>();
    for (const d of base.days) for (const c of d) counts.set(c.pid, (counts.get(c.pid) ?? 0) + 1);
    const sorted = [...counts.values()].sort((a, b) => b - a);
    const total = sorted.reduce((a, b) => a + b, 0);
    const top = sorted.slice(0, 300).reduce((a, b) => a + b, 0);
    expect(top / total).toBeGreaterThan(0.5);
    const live = [...base.rates.values()].filter((r) => r > 0).sort((a, b) => a - b);
    const q = (p: number) => live[Math.floor(p * (live.length - 1))] as number;
    expect(q(0.9) / q(0.1)).toBeGreaterThan(30);
    // Closed firms never change.
    for (const [pid, s] of base.status) if (CLOSED.has(s)) expect(base.rates.get(pid)).toBe(0);
  });

  it("is predicted by the firm's profile: firms in distress change several times as often", () => {
    const meanOf = (statuses: string[]) => {
      const xs = [...base.rates].filter(([pid]) => statuses.includes(base.status.get(pid) as string));
      return xs.reduce((a, [, r]) => a + r, 0) / xs.length;
    };
    expect(meanOf(['清算', '吊销，未注销', '停业'])).toBeGreaterThan(2.5 * meanOf(['存续', '在业', '开业']));
  });

  it('comes in bursts: after a high-severity change, another comes soon far more often than the base rate says', () => {
    const changedOn = new Map<string, number[]>();
    base.days.forEach((d, i) => {
      for (const c of d) changedOn.set(c.pid, [...(changedOn.get(c.pid) ?? []), i + 1]);
    });
    const end = new Map(base.world.all().map((e) => [e.PID, e.ENTSTATUS]));
    let events = 0;
    let followed = 0;
    let expected = 0;
    base.days.forEach((d, i) => {
      const day = i + 1;
      if (day > DAYS - 7) return;
      for (const c of d) {
        if (c.severity !== 'high' || CLOSED.has(end.get(c.pid) as string)) continue;
        events++;
        if ((changedOn.get(c.pid) ?? []).some((x) => x > day && x <= day + 7)) followed++;
        expected += 1 - (1 - (base.rates.get(c.pid) ?? 0)) ** 7;
      }
    });
    expect(events).toBeGreaterThan(10);
    expect(followed / events).toBeGreaterThan(1.5 * (expected / events));
  });

  it('names the fields each refresh changed, and how severe, as the records show', () => {
    const world = new EnterpriseWorld({ seed: 4, size: 800, epoch: EPOCH });
    const before = new Map(world.all().map((e) => [e.PID, e]));
    const cycle = addDays(EPOCH, 1);
    world.at(cycle);
    const after = new Map(world.all().map((e) => [e.PID, e]));
    const differing = (a: SimEnterprise, b: SimEnterprise) => {
      const same = (x: unknown, y: unknown) =>
        JSON.stringify(Array.isArray(x) ? x.map((v) => JSON.stringify(v)).sort() : x) ===
        JSON.stringify(Array.isArray(y) ? y.map((v) => JSON.stringify(v)).sort() : y);
      const ra = a as unknown as Record<string, unknown>;
      const rb = b as unknown as Record<string, unknown>;
      return Object.keys(rb)
        .filter((k) => !same(ra[k], rb[k]))
        .sort();
    };
    const changes = world.changesIn(cycle);
    expect(changes.length).toBeGreaterThan(5);
    for (const c of changes)
      expect(c.fields).toEqual(
        differing(before.get(c.pid) as SimEnterprise, after.get(c.pid) as SimEnterprise),
      );
    const changed = new Set(changes.map((c) => c.pid));
    for (const [pid, e] of after)
      if (!changed.has(pid)) expect(differing(before.get(pid) as SimEnterprise, e)).toEqual([]);
    for (const c of changes) {
      const a = before.get(c.pid) as SimEnterprise;
      const b = after.get(c.pid) as SimEnterprise;
      const high =
        (a.ENTSTATUS !== b.ENTSTATUS && /吊销|注销|清算|停业|撤销/.test(b.ENTSTATUS)) ||
        (a.CLEARINGINFO.length === 0 && b.CLEARINGINFO.length > 0) ||
        (!a.REVOKEDATE && !!b.REVOKEDATE);
      expect(c.severity === 'high').toBe(high);
    }
  });

  it("tells each day's rates as its refresh drew them: a firm that just changed, burst and all", () => {
    const world = new EnterpriseWorld({ seed: 5, size: 3000, epoch: EPOCH, changeShare: 0.02 });
    let changed: string[] = [];
    const ratios: { fresh: number[]; quiet: number[] } = { fresh: [], quiet: [] };
    const lastChange = new Map<string, number>();
    for (let d = 1; d <= 40; d++) {
      const cycle = addDays(EPOCH, d);
      world.at(cycle);
      const drawn = world.drawnRates();
      const base = world.rates();
      let sum = 0;
      for (const p of drawn.values()) sum += p;
      // The probabilities the day's changes were drawn at sum to the share configured.
      expect(sum / 3000).toBeCloseTo(0.02, 2);
      if (d > 10)
        for (const [pid, p] of drawn) {
          const b = base.get(pid) ?? 0;
          if (!(b > 0) || !(p > 0)) continue;
          if (changed.includes(pid)) ratios.fresh.push(p / b);
          else if (!lastChange.has(pid) || d - (lastChange.get(pid) as number) > 60) ratios.quiet.push(p / b);
        }
      changed = world.changesIn(cycle).map((c) => c.pid);
      for (const pid of changed) lastChange.set(pid, d);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    expect(ratios.fresh.length).toBeGreaterThan(100);
    // The day after a change, a firm's drawn rate is its base rate times a burst of 4 or more.
    expect(median(ratios.fresh) / median(ratios.quiet)).toBeGreaterThan(3);
  });

  it('is deterministic, and a busy firm has a recent last approval date', () => {
    const again = run(3000, 0.02);
    expect(again.days.map((d) => d.map((c) => c.pid))).toEqual(base.days.map((d) => d.map((c) => c.pid)));
    const world = new EnterpriseWorld({ seed: 3, size: 3000, epoch: EPOCH });
    const rates = world.rates();
    const ages = (pick: (r: number) => boolean) => {
      const xs = world
        .all()
        .filter((e) => pick(rates.get(e.PID) ?? 0))
        .map((e) => (Date.parse(`${EPOCH}T00:00:00Z`) - Date.parse(e.APPRDATE)) / 86_400_000)
        .sort((a, b) => a - b);
      return xs[Math.floor(xs.length / 2)] as number;
    };
    expect(ages((r) => r > 0.05)).toBeLessThan(ages((r) => r > 0 && r < 0.002) / 5);
  });
});

describe('the ground truth on the control surface', { timeout: 60_000 }, () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startTestSim({ enterprises: 400, startAt: new Date('2026-03-10T04:00:00Z') });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('GET /_sim/changes answers what each refresh changed, as the world says', async () => {
    const r = await rawGet(sim, '/_sim/changes?from=2026-03-01&to=2026-03-07', null);
    expect(r.status).toBe(200);
    const { changes } = r.json as {
      changes: { cycle: string; pid: string; fields: string[]; severity: string }[];
    };
    const world = new EnterpriseWorld({ seed: 1, size: 400, epoch: EPOCH });
    const expected = [];
    for (let d = 0; d < 7; d++) {
      const cycle = addDays('2026-03-01', d);
      world.at(cycle);
      for (const c of world.changesIn(cycle)) expected.push({ cycle, ...c });
    }
    expect(changes).toEqual(expected);
    expect(changes.length).toBeGreaterThan(10);
    // The simulator's own world is where it was.
    expect(sim.sim.world().cycle).toBe('2026-03-10');
    for (const bad of [
      'from=2026-02-30&to=2026-03-01',
      'from=2026-03-05&to=2026-03-01',
      'from=2025-01-01&to=2026-06-01',
      '',
    ])
      expect((await rawGet(sim, `/_sim/changes?${bad}`, null)).status).toBe(400);
  });

  it('GET /_sim/rates answers every firm’s rate at the current cycle', async () => {
    const r = await rawGet(sim, '/_sim/rates', null);
    expect(r.status).toBe(200);
    const body = r.json as { cycle: string; rates: Record<string, number> };
    expect(body.cycle).toBe('2026-03-10');
    expect(Object.keys(body.rates)).toHaveLength(400);
    expect(Object.values(body.rates).every((x) => x >= 0 && x <= 0.9)).toBe(true);
  });

  it('daybook sim refuses a bad --change-share with exit 2', async () => {
    const r = await runDaybook(['sim', '--change-share', '0.7', '--port', '0'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--change-share "0.7" must be a number from 0 to 0.5');
  });
});

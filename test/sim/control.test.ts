/** The simulator's control surface (/_sim/...), which tests and benchmarks drive. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { balanceOf, rawGet, startTestSim, TEST_KEY } from '../support/sim.ts';

async function post(
  sim: RunningSimulator,
  path: string,
  body: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

describe('the simulator control surface', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startTestSim({ enterprises: 50 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('sets and advances the clock, naming the cycle of the new time', async () => {
    expect((await post(sim, '/_sim/clock', { now: '2026-11-23T18:59:00Z' })).json).toEqual({
      now: '2026-11-23T18:59:00.000Z',
      cycle: '2026-11-23',
    });
    // 19:00 UTC is 03:00 in Beijing: the next cycle begins.
    expect((await post(sim, '/_sim/clock', { advanceMs: 60_000 })).json).toMatchObject({
      cycle: '2026-11-24',
    });
  });

  it('refuses a clock body it cannot use instead of ignoring it', async () => {
    expect((await post(sim, '/_sim/clock', { at: '2026-11-23T00:00:00Z' })).status).toBe(400);
    expect((await post(sim, '/_sim/clock', { now: 'yesterday' })).status).toBe(400);
    // The simulated clock runs on from where it was set; the refused bodies moved it nowhere.
    const drift = sim.sim.now().getTime() - Date.parse('2026-11-23T19:00:00Z');
    expect(drift).toBeGreaterThanOrEqual(0);
    expect(drift).toBeLessThan(10_000);
  });

  it('sets a balance, and the next query is checked against it', async () => {
    expect((await post(sim, '/_sim/credits', { key: TEST_KEY, credits: 2 })).json).toEqual({ credits: 2 });
    const name = sim.sim.world().all()[0]?.ENTNAME ?? '';
    const r = await rawGet(sim, `/v1/enterprise-search?ent_name=${encodeURIComponent(name)}`);
    expect((r.json as { error: { code: string } }).error.code).toBe('insufficient_credits');
    expect(await balanceOf(sim)).toBe(2);
  });

  it('sets rate limits and refuses limits that are not positive integers', async () => {
    expect((await post(sim, '/_sim/limits', { enterprise: 7 })).json).toMatchObject({
      rateLimits: { 'enterprise-search': 7 },
    });
    expect((await post(sim, '/_sim/limits', {})).status).toBe(400);
    expect((await post(sim, '/_sim/limits', { product: -1 })).status).toBe(400);
    expect(sim.sim.options.rateLimits['product-listing']).toBeGreaterThan(0);
  });

  it('counts requests by operation and outcome, and resets the counters', async () => {
    const state = (await (await fetch(`${sim.url}/_sim/state`)).json()) as {
      counters: { outcomes: Record<string, Record<string, number>> };
    };
    expect(state.counters.outcomes['enterprise-search']?.insufficient_credits).toBe(1);
    await post(sim, '/_sim/reset', {});
    const after = (await (await fetch(`${sim.url}/_sim/state`)).json()) as {
      counters: { outcomes: Record<string, Record<string, number>> };
    };
    expect(after.counters.outcomes['enterprise-search']?.insufficient_credits ?? 0).toBe(0);
  });

  it('makes a keyword resolve to another company, and back to the model’s own match', async () => {
    await post(sim, '/_sim/credits', { key: TEST_KEY, credits: 1000 });
    await post(sim, '/_sim/limits', { enterprise: 6000 });
    const [a, b] = sim.sim.world().all();
    if (!a || !b) throw new Error('the world is empty');
    const search = async () => {
      const r = await rawGet(sim, `/v1/enterprise-search?ent_name=${encodeURIComponent(a.ENTNAME)}`);
      return (r.json as { metadata: { content: { PID: string; UNCID: string } } }).metadata.content;
    };
    expect((await search()).PID).toBe(a.PID);
    expect((await post(sim, '/_sim/resolve', { keyword: ` ${a.ENTNAME} `, pid: b.PID })).json).toEqual({
      keyword: a.ENTNAME,
      pid: b.PID,
      name: b.ENTNAME,
    });
    expect(await search()).toMatchObject({ PID: b.PID, UNCID: b.UNCID });
    await post(sim, '/_sim/resolve', { keyword: a.ENTNAME, pid: null });
    expect((await search()).PID).toBe(a.PID);
    expect((await post(sim, '/_sim/resolve', { keyword: a.ENTNAME, pid: 'no-such-pid' })).status).toBe(400);
    expect((await post(sim, '/_sim/resolve', { pid: b.PID })).status).toBe(400);
  });

  it('a short keyword resolves to some partial match', async () => {
    const a = sim.sim.world().all()[0];
    const keyword = [...(a?.ENTNAME ?? '')].slice(2, 4).join('');
    const r = await rawGet(sim, `/v1/enterprise-search?ent_name=${encodeURIComponent(keyword)}`);
    const content = (r.json as { metadata: { content: { ENTNAME: string } } }).metadata.content;
    expect(content.ENTNAME).toContain(keyword);
    expect(content.ENTNAME).not.toBe(keyword);
  });
});

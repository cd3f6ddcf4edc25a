/**
 * What the simulator offers related-party tests: shareholding chains of its world (A held by B
 * held by C), a status given to an enterprise on a known day, and the change log naming, for each
 * change, the enterprises that hold the one changed (its truth for "who is affected").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnterpriseWorld } from '../../src/sim/enterprises.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { addDays } from '../../src/time/cycles.ts';
import { startTestSim } from '../support/sim.ts';

const EPOCH = '2026-01-01';

describe('the simulated world’s related parties', () => {
  it('finds shareholding chains: each link listed by PID among the shareholders of the one before', () => {
    const world = new EnterpriseWorld({ seed: 4, size: 800, epoch: EPOCH });
    world.at(addDays(EPOCH, 3));
    const chains = world.chains(3, 5);
    expect(chains).toHaveLength(5);
    for (const chain of chains) {
      expect(new Set(chain.map((l) => l.pid)).size).toBe(3);
      for (let k = 0; k + 1 < chain.length; k++) {
        const holder = chain[k + 1]?.pid;
        const record = world.byPid(chain[k]?.pid as string);
        expect(record?.BE_INVEST.map((s) => s.PID)).toContain(holder);
      }
      for (const l of chain) expect(world.byPid(l.pid)?.ENTNAME).toBe(l.name);
    }
  });

  it('gives a status on the day asked, reports it with its holders, and replays a day already past', () => {
    const world = new EnterpriseWorld({ seed: 4, size: 800, epoch: EPOCH });
    world.at(addDays(EPOCH, 2));
    const [a, b, c] = world.chains(3, 1)[0] ?? [];
    if (!a || !b || !c) throw new Error('no chain of three');
    const day = addDays(EPOCH, 5);
    world.schedule(c.pid, day, '注销');
    world.at(addDays(EPOCH, 4));
    expect(world.byPid(c.pid)?.ENTSTATUS).not.toBe('注销');
    world.at(day);
    expect(world.byPid(c.pid)?.ENTSTATUS).toBe('注销');
    const change = world.changesIn(day).find((x) => x.pid === c.pid);
    expect(change).toMatchObject({ severity: 'high' });
    expect(change?.kinds).toContain('scheduled status');
    expect(change?.fields).toContain('ENTSTATUS');
    expect(change?.holders).toContain(b.pid);

    // Scheduled for a day already past: the world is replayed as if it had been asked from the start.
    const later = addDays(EPOCH, 3);
    world.schedule(b.pid, later, '清算');
    expect(world.cycle).toBe(day);
    const opened = world.changesIn(later).find((x) => x.pid === b.pid);
    expect(opened?.fields).toEqual(expect.arrayContaining(['CLEARINGINFO', 'ENTSTATUS']));
    expect(opened?.holders).toContain(a.pid);
    expect(world.byPid(b.pid)?.CLEARINGINFO.length).toBeGreaterThan(0);
  });

  it('seats people in several companies: a holder’s legal representative among the key persons of what it holds', () => {
    const world = new EnterpriseWorld({ seed: 4, size: 800, epoch: EPOCH });
    const people = world.sharedPeople(1000);
    expect(people.length).toBeGreaterThan(20);
    for (const p of people) {
      expect(new Set(p.seats.map((s) => s.pid)).size).toBe(p.seats.length);
      expect(p.seats.length).toBeGreaterThan(1);
      for (const s of p.seats) {
        const e = world.byPid(s.pid);
        expect([e?.LEGALPERSON, ...(e?.PERSONS.map((x) => x.NAME) ?? [])]).toContain(p.name);
      }
    }
    // On purpose: companies whose key persons include the legal representative of a holder.
    const seated = world.all().filter((e) =>
      e.BE_INVEST.some((s) => {
        const holder = s.PID ? world.byPid(s.PID) : undefined;
        return (
          holder &&
          holder.LEGALPERSON !== e.LEGALPERSON &&
          e.PERSONS.some((x) => x.NAME === holder.LEGALPERSON)
        );
      }),
    );
    expect(seated.length).toBeGreaterThan(20);
    // The same seed seats the same people.
    expect(new EnterpriseWorld({ seed: 4, size: 800, epoch: EPOCH }).sharedPeople(1000)).toEqual(people);
  });

  it('refuses an unknown PID, status or a day not after the first', () => {
    const world = new EnterpriseWorld({ seed: 4, size: 50, epoch: EPOCH });
    const pid = world.all()[0]?.PID as string;
    expect(() => world.schedule('nope', addDays(EPOCH, 2), '注销')).toThrow(/no enterprise has PID nope/);
    expect(() => world.schedule(pid, addDays(EPOCH, 2), '破产' as never)).toThrow(/status must be one of/);
    expect(() => world.schedule(pid, EPOCH, '注销')).toThrow(/not after the world's first day/);
  });

  describe('over HTTP', () => {
    let sim: RunningSimulator;
    beforeAll(async () => {
      sim = await startTestSim({ enterprises: 600 });
    });
    afterAll(() => sim?.close());

    it('serves the people in several companies, and refuses a bad limit', async () => {
      const r = (await (await fetch(`${sim.url}/_sim/people?limit=3`)).json()) as {
        people: { name: string; seats: { pid: string; role: string }[] }[];
      };
      expect(r.people).toHaveLength(3);
      for (const p of r.people) expect(p.seats.length).toBeGreaterThan(1);
      expect((await fetch(`${sim.url}/_sim/people?limit=0`)).status).toBe(400);
    });

    it('serves chains, takes a schedule, and /_sim/changes reports the change with its holders', async () => {
      const chains = (await (await fetch(`${sim.url}/_sim/chains?length=3&limit=2`)).json()) as {
        chains: { pid: string; name: string; uscc: string }[][];
      };
      expect(chains.chains).toHaveLength(2);
      const [, b, c] = chains.chains[0] ?? [];
      const { cycle } = (await (await fetch(`${sim.url}/_sim/state`)).json()) as { cycle: string };
      const day = addDays(cycle, 1);
      const res = await fetch(`${sim.url}/_sim/schedule`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pid: c?.pid, cycle: day, status: '吊销，未注销' }),
      });
      expect(res.status).toBe(200);
      const { changes } = (await (await fetch(`${sim.url}/_sim/changes?from=${day}&to=${day}`)).json()) as {
        changes: { pid: string; holders: string[]; fields: string[] }[];
      };
      const change = changes.find((x) => x.pid === c?.pid);
      expect(change?.fields).toEqual(expect.arrayContaining(['ENTSTATUS', 'REVOKEDATE']));
      expect(change?.holders).toContain(b?.pid);

      for (const bad of [
        { pid: c?.pid, cycle: day, status: 'gone' },
        { pid: c?.pid, cycle: '2026-02-30', status: '注销' },
        { pid: 'nope', cycle: day, status: '注销' },
        {},
      ]) {
        const r = await fetch(`${sim.url}/_sim/schedule`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(bad),
        });
        expect(r.status, JSON.stringify(bad)).toBe(400);
        expect(((await r.json()) as { error: string }).error).toMatch(/\w/);
      }
      expect((await fetch(`${sim.url}/_sim/chains?length=9`)).status).toBe(400);
    });
  });
});

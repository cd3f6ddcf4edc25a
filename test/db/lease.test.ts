/** The row is the lease (src/db/lease.ts): holder names, the take-over rule, and its SQL on a table of its own. */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.ts';
import {
  holderGone,
  holderOf,
  leaseLength,
  leaseLive,
  leaseUntil,
  letGo,
  localProcessGone,
  mayTake,
  newHolder,
  PROCESS_HOLDER,
  renew,
  stillHeld,
  take,
} from '../../src/db/lease.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

/** A pid that was this machine's and is no more: a child that ran and exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return child.pid as number;
}

describe('holders', () => {
  it('name this process (host:pid:tag), and a job under it', () => {
    expect(PROCESS_HOLDER).toMatch(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{6}$`));
    expect(holderOf('42')).toBe(`${PROCESS_HOLDER}/42`);
    expect(holderOf('x'.repeat(500))).toHaveLength(200);
  });

  it('a new holder is another name of this process', () => {
    const a = newHolder();
    expect(a).toMatch(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{6}$`));
    expect(new Set([a, newHolder(), newHolder(), PROCESS_HOLDER]).size).toBe(4);
  });

  it('a holder is known gone when none holds, or its process on this machine ended', async () => {
    expect(holderGone(null)).toBe(true);
    expect(holderGone('')).toBe(true);
    expect(holderGone(PROCESS_HOLDER)).toBe(false);
    expect(holderGone(holderOf('7'))).toBe(false);
    expect(localProcessGone(process.pid)).toBe(false);
    const pid = await deadPid();
    expect(localProcessGone(pid)).toBe(true);
    expect(holderGone(`${hostname()}:${pid}:abcdef/3`)).toBe(true);
    // Another machine's process cannot be looked at: never known gone.
    expect(holderGone(`not-${hostname()}:${pid}:abcdef`)).toBe(false);
    expect(holderGone('a')).toBe(false);
  });
});

describe('the take-over rule', () => {
  const me = 'me:1:aaaaaa';
  const other = 'other-host:2:bbbbbb';

  it('a free row, or a lapsed lease, may be taken', () => {
    expect(mayTake({ holder: null, live: false }, me)).toBe(true);
    expect(mayTake({ holder: null, live: true }, me)).toBe(true);
    expect(mayTake({ holder: other, live: false }, me)).toBe(true);
    expect(mayTake({ holder: me, live: false }, me)).toBe(true);
  });

  it("a live lease is respected, one's own too, unless the owner allows its own again", () => {
    expect(mayTake({ holder: other, live: true }, me)).toBe(false);
    expect(mayTake({ holder: me, live: true }, me)).toBe(false);
    expect(mayTake({ holder: me, live: true }, me, { reentrant: true })).toBe(true);
    expect(mayTake({ holder: other, live: true }, me, { reentrant: true })).toBe(false);
  });

  it('a live lease of a process known gone is taken over only where the owner probes processes', async () => {
    const gone = `${hostname()}:${await deadPid()}:cccccc`;
    expect(mayTake({ holder: gone, live: true }, me)).toBe(false);
    expect(mayTake({ holder: gone, live: true }, me, { probeProcess: true })).toBe(true);
    expect(mayTake({ holder: PROCESS_HOLDER, live: true }, me, { probeProcess: true })).toBe(false);
    expect(mayTake({ holder: other, live: true }, me, { probeProcess: true })).toBe(false);
  });

  it('a lease lasts whole milliseconds, at least one', () => {
    expect(leaseLength(1000)).toBe(1000);
    expect(leaseLength(1000.4)).toBe(1000);
    expect(leaseLength(0.6)).toBe(1);
    expect(leaseLength(0)).toBe(1);
    expect(leaseLength(-5)).toBe(1);
  });
});

describe('the lease in SQL', () => {
  let t: TestDatabase;
  let id = 0;
  beforeAll(async () => {
    t = await freshDatabase();
    await t.sql`create table probe (id int primary key, holder text, lease_until timestamptz,
                                    fence bigint not null default 0, note text)`;
  });
  afterAll(() => t.drop());
  beforeEach(async () => {
    id += 1;
    await t.sql`insert into probe (id) values (${id})`;
  });

  interface Row {
    holder: string | null;
    lease_until: Date | null;
    live: boolean;
    fence: string;
    ms: number | null;
  }
  const read = async (): Promise<Row> => {
    const [row] = await t.sql<Row[]>`
      select holder, lease_until, ${leaseLive(t.sql)} as live, fence,
             (extract(epoch from lease_until - now()) * 1000)::float8 as ms
      from probe where id = ${id}`;
    return row as Row;
  };
  const takeFor = async (holder: string, leaseMs: number, fence = true): Promise<number> => {
    const [row] = await t.sql<{ fence: string }[]>`
      update probe set ${take(t.sql, holder, leaseMs, { fence })} where id = ${id} returning fence`;
    return Number(row?.fence);
  };

  it('a row nobody holds has no live lease; taking it names the holder, a lease, a new fence', async () => {
    expect(await read()).toMatchObject({ holder: null, lease_until: null, live: false, fence: '0' });
    expect(await takeFor('a', 60_000)).toBe(1);
    const row = await read();
    expect(row).toMatchObject({ holder: 'a', live: true, fence: '1' });
    expect(row.ms).toBeGreaterThan(59_000);
    expect(row.ms).toBeLessThanOrEqual(60_000);
    expect(await takeFor('b', 60_000)).toBe(2);
    // Without a fence column, taking leaves the fence alone.
    expect(await takeFor('c', 60_000, false)).toBe(2);
  });

  it('a lease ends at lease_until: at and after it, it is not live', async () => {
    const [at] = await t.sql<{ live: boolean }[]>`
      update probe set lease_until = now() where id = ${id} returning ${leaseLive(t.sql)} as live`;
    expect(at?.live).toBe(false);
    await t.sql`update probe set holder = 'a', lease_until = now() - interval '1 second' where id = ${id}`;
    expect(await read()).toMatchObject({ holder: 'a', live: false });
    const [until] = await t.sql<{ later: boolean }[]>`select ${leaseUntil(t.sql, 0)} > now() as later`;
    expect(until?.later).toBe(true);
  });

  it('the lease column may be qualified', async () => {
    await takeFor('a', 60_000);
    const [row] = await t.sql<{ live: boolean }[]>`
      select ${leaseLive(t.sql, 'p.lease_until')} as live from probe p where p.id = ${id}`;
    expect(row?.live).toBe(true);
  });

  it('a holder acts only while the row still names it and its fence; a stale one changes nothing', async () => {
    const a = { holder: 'a', fence: await takeFor('a', 60_000) };
    const act = (claim: { holder: string; fence?: number }, note: string) =>
      t.sql`update probe set note = ${note}, ${renew(t.sql, 120_000)} where id = ${id} and ${stillHeld(t.sql, claim)}
            returning 1`;
    expect(await act(a, 'by a')).toHaveLength(1);
    expect((await read()).ms).toBeGreaterThan(119_000);
    // The same holder name under an older fence has lost the row: a take-over happened since.
    const b = { holder: 'a', fence: await takeFor('a', 60_000) };
    expect(await act(a, 'by stale a')).toHaveLength(0);
    expect(await act(b, 'by a again')).toHaveLength(1);
    expect(await act({ holder: 'z' }, 'by z')).toHaveLength(0);
    expect(await act({ holder: 'a' }, 'by holder a')).toHaveLength(1);
    const [row] = await t.sql<{ note: string }[]>`select note from probe where id = ${id}`;
    expect(row?.note).toBe('by holder a');
  });

  it('letting go frees the row at once', async () => {
    await takeFor('a', 60_000);
    await t.sql`update probe set ${letGo(t.sql)} where id = ${id}`;
    expect(await read()).toMatchObject({ holder: null, lease_until: null, live: false, fence: '1' });
    expect(mayTake({ holder: null, live: false }, 'b')).toBe(true);
  });

  it('of twenty claimers at once, on two pools, exactly one takes the row (read under its lock, the rule, then take)', async () => {
    const other = openDatabase(t.url, { max: 10 });
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? t.sql : other.sql).begin(async (tx) => {
            const [row] = await tx<{ holder: string | null; live: boolean }[]>`
              select holder, ${leaseLive(tx)} as live from probe where id = ${id} for update`;
            if (!row || !mayTake(row, `h${i}`)) return null;
            await tx`update probe set ${take(tx, `h${i}`, 60_000, { fence: true })} where id = ${id}`;
            return `h${i}`;
          }),
        ),
      );
      const won = results.filter((r) => r !== null);
      expect(won).toHaveLength(1);
      expect(await read()).toMatchObject({ holder: won[0], fence: '1', live: true });
    } finally {
      await other.close();
    }
  });
});

/**
 * The warehouse export's packages. A first export is full; after more cycles the next is
 * incremental, holding only what is new (new versions, and the versions they closed, as closed);
 * nothing new writes nothing. Each manifest chains to the previous package and names every file
 * with its rows and sha256 (checked here against the files). `replayPackages` leaves identical
 * packages in place and writes a deleted one again byte for byte, in every format. A transaction
 * that commits after a package's cut is in the next package, exactly once, and one left open does
 * not hold back what others commit after it began.
 */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents } from '../../src/events/outbox.ts';
import type { Format } from '../../src/export/formats.ts';
import { exportPackages, replayPackages } from '../../src/export/package.ts';
import {
  CYCLES,
  expectWholePackage,
  type Fixture,
  filesOf,
  fixture,
  ledgerOf,
  loadDir,
  manifestOf,
  ndjsonRows,
  packagesIn,
  type Row,
  scratch,
} from './helpers.ts';

/** The destinations written, one per format (NDJSON twice: plain and gzipped). */
const FLAVOURS: { name: string; format: Format; gzip: boolean }[] = [
  { name: 'ndjson', format: 'ndjson', gzip: false },
  { name: 'parquet', format: 'parquet', gzip: false },
  { name: 'csv', format: 'csv', gzip: false },
  { name: 'ndjson.gz', format: 'ndjson', gzip: true },
];

const key = (r: Row, cols: string[]) => JSON.stringify(cols.map((c) => r[c]));

describe('export packages: incremental, replayed, and late commits', { timeout: 120_000 }, () => {
  let f: Fixture;
  let root: string;
  const dirs = new Map<string, string>();
  /** The NDJSON destination, the one most tests read. */
  let dir: string;

  beforeAll(async () => {
    f = await fixture(5);
    root = scratch('packages');
    for (const fl of FLAVOURS) dirs.set(fl.name, join(root, fl.name));
    dir = dirs.get('ndjson') as string;
    await f.run([CYCLES[0]]);
  });

  afterAll(async () => {
    await f?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const exportTo = (name: string) => {
    const fl = FLAVOURS.find((x) => x.name === name) as (typeof FLAVOURS)[number];
    return exportPackages(f.t.sql, { to: dirs.get(name) as string, format: fl.format, gzip: fl.gzip });
  };

  it('writes a full first package whose manifest names every file with its rows and sha256', async () => {
    const written = await exportTo('ndjson');
    expect(written.map((p) => [p.loadNo, p.loadId, p.kind])).toEqual([[1, '0000000001', 'full']]);
    expect(packagesIn(dir)).toEqual(['load_id=0000000001']);
    const m = expectWholePackage(dir, 1);
    expect(m.previous_load_id).toBeNull();
    expect(m.kind).toBe('full');
    expect(m.cursor.from_snapshot).toBe('1:1:');
    expect(written[0]?.rows).toBe(m.rows);
    // A full package holds every row there is.
    const [db] = await f.t.sql<{ versions: number; events: number; sightings: number }[]>`
      select (select count(*)::int from enterprise_versions) as versions,
             (select count(*)::int from events) as events,
             (select count(*)::int from enterprise_sightings) as sightings`;
    expect(db?.versions).toBeGreaterThan(0);
    expect(m.tables.enterprise_versions?.rows).toBe(db?.versions);
    expect(m.tables.events?.rows).toBe(db?.events);
    expect(m.tables.enterprise_sightings?.rows).toBe(db?.sightings);
    expect(ndjsonRows(dir, 1, 'enterprise_versions').every((r) => r.is_current === true)).toBe(true);
    // The other formats hold the same rows, table by table.
    for (const fl of FLAVOURS.filter((x) => x.name !== 'ndjson')) {
      const other = await exportTo(fl.name);
      expect(
        other.map((p) => [p.loadNo, p.kind]),
        fl.name,
      ).toEqual([[1, 'full']]);
      const om = expectWholePackage(dirs.get(fl.name) as string, 1);
      expect(om.format).toBe(fl.format);
      expect(Object.fromEntries(Object.entries(om.tables).map(([tb, x]) => [tb, x.rows])), fl.name).toEqual(
        Object.fromEntries(Object.entries(m.tables).map(([tb, x]) => [tb, x.rows])),
      );
    }
    expect(manifestOf(dirs.get('ndjson.gz') as string, 1).tables.events?.file).toBe('events.ndjson.gz');
  });

  it('after more cycles, writes an incremental package of the new rows only: new versions, and the versions they closed, closed', async () => {
    const first = ndjsonRows(dir, 1, 'enterprise_versions');
    const firstKeys = new Set(first.map((r) => key(r, ['pid', 'version'])));
    await f.run([CYCLES[1], CYCLES[2]]);

    const written = await exportTo('ndjson');
    expect(written.map((p) => [p.loadNo, p.kind])).toEqual([[2, 'incremental']]);
    expect(packagesIn(dir)).toEqual(['load_id=0000000001', 'load_id=0000000002']);
    const m1 = manifestOf(dir, 1);
    const m2 = expectWholePackage(dir, 2);
    expect(m2.previous_load_id).toBe(m1.load_id);
    expect(m2.kind).toBe('incremental');
    expect(m2.cursor.from_snapshot).toBe(m1.cursor.to_snapshot);
    const ledger = await ledgerOf(f.t.sql, dir);
    expect(
      ledger.map((l) => [l.load_no, l.state, l.previous_load_id, l.from_snapshot, l.to_snapshot]),
    ).toEqual([
      [1, 'complete', null, m1.cursor.from_snapshot, m1.cursor.to_snapshot],
      [2, 'complete', '0000000001', m2.cursor.from_snapshot, m2.cursor.to_snapshot],
    ]);

    // enterprise_versions: exactly the versions written since, and those of load 1 closed since.
    const db = await f.t.sql<{ pid: string; version: number; valid_to: string | null }[]>`
      select pid, version,
             to_char(valid_to at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as valid_to
      from enterprise_versions order by pid, version`;
    const dbByKey = new Map(db.map((r) => [key(r, ['pid', 'version']), r]));
    const fresh = db.filter((r) => !firstKeys.has(key(r, ['pid', 'version'])));
    const closed = first.filter((r) => dbByKey.get(key(r, ['pid', 'version']))?.valid_to != null);
    expect(fresh.length).toBeGreaterThan(0);
    expect(closed.length).toBeGreaterThan(0);
    const second = ndjsonRows(dir, 2, 'enterprise_versions');
    expect(second.map((r) => key(r, ['pid', 'version'])).sort()).toEqual(
      [...fresh, ...closed].map((r) => key(r, ['pid', 'version'])).sort(),
    );
    for (const r of second) {
      const now = dbByKey.get(key(r, ['pid', 'version']));
      expect(r.valid_to, `${r.pid} v${r.version}`).toBe(now?.valid_to ?? null);
      expect(r.is_current, `${r.pid} v${r.version}`).toBe(now?.valid_to == null);
    }
    for (const r of closed) {
      const again = second.find((x) => x.pid === r.pid && x.version === r.version);
      expect(again?.is_current).toBe(false);
      expect(again?.valid_to).toEqual(expect.any(String));
      expect(again?.content_hash).toBe(r.content_hash);
    }

    // enterprise_links: the links of the same versions as enterprise_versions, as at the cut, and
    // every version's links are the database's (analytics.enterprise_links read per version).
    const linksOf = (n: number) => ndjsonRows(dir, n, 'enterprise_links');
    const linked = (rows: Record<string, unknown>[]) => new Set(rows.map((r) => key(r, ['pid', 'version'])));
    const versionsWithLinks = await f.t.sql<{ pid: string; version: number; n: number }[]>`
      select v.pid, v.version,
        ((select count(*) from enterprise_shareholders s where s.version_id = v.id)
         + (select count(*) from enterprise_persons p where p.version_id = v.id)
         + (select count(*) from enterprise_clearing_members m where m.version_id = v.id)
         + (case when coalesce(v.legal_person, '') <> '' then 1 else 0 end))::int as n
      from enterprise_versions v`;
    const expectedLinks = new Map(versionsWithLinks.map((r) => [key(r, ['pid', 'version']), r.n]));
    for (const [n, versions] of [
      [1, first],
      [2, second],
    ] as const) {
      const links = linksOf(n);
      expect([...linked(links)].sort(), `load ${n}: links of its versions`).toEqual(
        versions
          .filter((r) => (expectedLinks.get(key(r, ['pid', 'version'])) ?? 0) > 0)
          .map((r) => key(r, ['pid', 'version']))
          .sort(),
      );
      const count = new Map<string, number>();
      for (const l of links)
        count.set(key(l, ['pid', 'version']), (count.get(key(l, ['pid', 'version'])) ?? 0) + 1);
      for (const [k, c] of count) expect(c, `load ${n}: links of ${k}`).toBe(expectedLinks.get(k));
      expect(new Set(links.map((l) => l.link_id)).size).toBe(links.length);
      for (const l of links) {
        const v = versions.find((r) => r.pid === l.pid && r.version === l.version);
        expect([l.valid_to, l.is_current], `${l.link_id}`).toEqual([v?.valid_to, v?.is_current]);
      }
    }

    // Rows that are written once are in one package only, and every one of them in some package.
    const once: { table: string; cols: string[]; sql: string }[] = [
      {
        table: 'enterprise_changes',
        cols: ['change_id'],
        sql: 'select id::int as k from enterprise_changes',
      },
      { table: 'events', cols: ['sequence'], sql: 'select seq::int as k from events' },
      {
        table: 'enterprise_events',
        cols: ['event_id'],
        sql: 'select id::int as k from enterprise_observations',
      },
      {
        table: 'enterprise_sightings',
        cols: ['sighting_id'],
        sql: 'select id::int as k from enterprise_sightings',
      },
      { table: 'enterprise_persons', cols: ['pid', 'version', 'ordinal'], sql: '' },
    ];
    for (const o of once) {
      const a = ndjsonRows(dir, 1, o.table).map((r) => key(r, o.cols));
      const b = ndjsonRows(dir, 2, o.table).map((r) => key(r, o.cols));
      expect(
        b.filter((k) => a.includes(k)),
        `${o.table}: rows in both packages`,
      ).toEqual([]);
      if (o.sql) {
        const all = (await f.t.sql.unsafe<{ k: number }[]>(o.sql)).map((r) => JSON.stringify([r.k]));
        expect([...a, ...b].sort(), o.table).toEqual(all.sort());
      }
    }
    expect(m2.tables.enterprise_changes?.rows).toBeGreaterThan(0);

    // The other formats: the same incremental package.
    for (const fl of FLAVOURS.filter((x) => x.name !== 'ndjson')) {
      const other = await exportTo(fl.name);
      expect(
        other.map((p) => [p.loadNo, p.kind]),
        fl.name,
      ).toEqual([[2, 'incremental']]);
      const om = expectWholePackage(dirs.get(fl.name) as string, 2);
      expect(om.previous_load_id).toBe('0000000001');
      expect(om.tables.enterprise_versions?.rows).toBe(second.length);
    }
  });

  it('writes nothing when nothing is new: no folder, no ledger row, no package returned', async () => {
    const before = readdirSync(dir).sort();
    const ledger = await ledgerOf(f.t.sql, dir);
    expect(await exportTo('ndjson')).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(await ledgerOf(f.t.sql, dir)).toEqual(ledger);
    expect(ledger.map((l) => l.state)).toEqual(['complete', 'complete']);
  });

  describe('replay', () => {
    it.each(FLAVOURS.map((fl) => [fl.name]))(
      '%s: replaying into the folder reports every package identical and leaves its files alone',
      async (name) => {
        const to = dirs.get(name) as string;
        const before = filesOf(to);
        const mtimes = [...before.keys()].map((p) => statSync(join(to, p)).mtimeMs);
        const lines: string[] = [];
        const out = await replayPackages(f.t.sql, {
          to,
          from: 1,
          through: 2,
          progress: (l) => lines.push(l),
        });
        expect(out.map((p) => [p.loadNo, p.identical])).toEqual([
          [1, true],
          [2, true],
        ]);
        expect(lines.every((l) => l.includes('identical'))).toBe(true);
        const after = filesOf(to);
        expect([...after.keys()]).toEqual([...before.keys()]);
        for (const [p, bytes] of before) expect(after.get(p)?.equals(bytes), p).toBe(true);
        expect([...before.keys()].map((p) => statSync(join(to, p)).mtimeMs)).toEqual(mtimes);
        expect(readdirSync(to).filter((n) => n.startsWith('.'))).toEqual([]);
      },
    );

    it.each(FLAVOURS.map((fl) => [fl.name]))(
      '%s: a deleted package is written again, byte for byte',
      async (name) => {
        const to = dirs.get(name) as string;
        const copies = [1, 2].map((n) => filesOf(loadDir(to, n)));
        // Load 2 alone first, then both.
        rmSync(loadDir(to, 2), { recursive: true });
        expect(packagesIn(to)).toEqual(['load_id=0000000001']);
        const again = await replayPackages(f.t.sql, { to, from: 2, through: 2 });
        expect(again.map((p) => [p.loadNo, p.identical])).toEqual([[2, true]]);
        rmSync(loadDir(to, 1), { recursive: true });
        rmSync(loadDir(to, 2), { recursive: true });
        const both = await replayPackages(f.t.sql, { to, from: 1, through: 2 });
        expect(both.map((p) => [p.loadNo, p.identical])).toEqual([
          [1, true],
          [2, true],
        ]);
        for (const [i, copy] of copies.entries()) {
          const now = filesOf(loadDir(to, i + 1));
          expect([...now.keys()], `load ${i + 1}`).toEqual([...copy.keys()]);
          for (const [p, bytes] of copy) expect(now.get(p)?.equals(bytes), `load ${i + 1}: ${p}`).toBe(true);
        }
        expect(readdirSync(to).filter((n) => n.startsWith('.'))).toEqual([]);
      },
    );
  });

  describe('a transaction that commits late', () => {
    let other: postgres.Sql;
    beforeAll(() => {
      other = postgres(f.t.url, { max: 1, onnotice: () => {} });
    });
    afterAll(() => other?.end());

    /** The in-progress transactions of a cut (`xmin:xmax:xip,…`). */
    const inProgress = (snapshot: string) => (snapshot.split(':')[2] ?? '').split(',').filter((x) => x);
    const eventsOf = (pid: string) =>
      packagesIn(dir).flatMap((_, i) =>
        ndjsonRows(dir, i + 1, 'events')
          .filter((e) => e.pid === pid)
          .map(() => i + 1),
      );
    const observationsOf = (detail: string) =>
      packagesIn(dir).flatMap((_, i) =>
        ndjsonRows(dir, i + 1, 'enterprise_events')
          .filter((e) => e.detail === detail)
          .map(() => i + 1),
      );
    const observe = async (sql: postgres.Sql | postgres.TransactionSql, detail: string) => {
      await sql`insert into enterprise_observations (pid, kind, cycle, detail, observed_at)
                values ('late-test', 'stale_ignored', '2026-11-20', ${detail}, now())`;
    };

    it('is not in the package cut while it is open, and is in the next one, exactly once', async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let xid = '';
      let ready: () => void = () => {};
      const inserted = new Promise<void>((r) => {
        ready = r;
      });
      const late = other.begin(async (tx) => {
        await appendEvents(tx, [
          {
            type: 'company.disappeared',
            severity: 'high',
            pid: 'late-commit',
            cycle: '2026-11-20',
            detectedAt: new Date(),
            rawResponseId: null,
            data: { kind: 'disappeared', keyword: null, detail: null },
          },
        ]);
        const [x] = await tx<{ xid: string }[]>`select pg_current_xact_id()::text as xid`;
        xid = x?.xid ?? '';
        ready();
        await held;
      });
      await inserted;
      await observe(f.t.sql, 'committed-before-the-cut');
      const third = await exportTo('ndjson');
      expect(third.map((p) => [p.loadNo, p.kind])).toEqual([[3, 'incremental']]);
      // The late transaction was in flight at the cut: the package does not hold its row.
      expect(inProgress(manifestOf(dir, 3).cursor.to_snapshot)).toContain(xid);
      expect(observationsOf('committed-before-the-cut')).toEqual([3]);
      expect(eventsOf('late-commit')).toEqual([]);

      release();
      await late;
      const fourth = await exportTo('ndjson');
      expect(fourth.map((p) => [p.loadNo, p.kind])).toEqual([[4, 'incremental']]);
      expectWholePackage(dir, 4);
      expect(manifestOf(dir, 4).tables.events?.rows).toBe(1);
      expect(eventsOf('late-commit')).toEqual([4]);
      // And nothing is new after it.
      expect(await exportTo('ndjson')).toEqual([]);
      expect(eventsOf('late-commit')).toEqual([4]);
    });

    it('a transaction left open does not hold back what others commit after it began', async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let ready: () => void = () => {};
      const begun = new Promise<void>((r) => {
        ready = r;
      });
      let xid = '';
      const open = other.begin(async (tx) => {
        await observe(tx, 'written-by-the-open-transaction');
        const [x] = await tx<{ xid: string }[]>`select pg_current_xact_id()::text as xid`;
        xid = x?.xid ?? '';
        ready();
        await held;
      });
      await begun;
      const [idle] = await f.t.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state = 'idle in transaction' and backend_xid::text = ${xid}`;
      expect(idle?.n).toBe(1);
      // Committed after the open transaction began (its xid is older).
      await observe(f.t.sql, 'committed-after-it-began');
      const fifth = await exportTo('ndjson');
      expect(fifth.map((p) => p.loadNo)).toEqual([5]);
      const cut = manifestOf(dir, 5).cursor.to_snapshot;
      expect(Number(cut.split(':')[0])).toBeLessThanOrEqual(Number(xid));
      expect(inProgress(cut)).toContain(xid);
      expect(observationsOf('committed-after-it-began')).toEqual([5]);
      expect(observationsOf('written-by-the-open-transaction')).toEqual([]);

      release();
      await open;
      const sixth = await exportTo('ndjson');
      expect(sixth.map((p) => p.loadNo)).toEqual([6]);
      expect(observationsOf('written-by-the-open-transaction')).toEqual([6]);
      expect(observationsOf('committed-after-it-began')).toEqual([5]);
      // The chain holds: each package starts where the one before ended.
      for (let n = 2; n <= 6; n++) {
        const m = expectWholePackage(dir, n);
        expect(m.previous_load_id).toBe(manifestOf(dir, n - 1).load_id);
        expect(m.cursor.from_snapshot).toBe(manifestOf(dir, n - 1).cursor.to_snapshot);
      }
      expect(existsSync(loadDir(dir, 7))).toBe(false);
    });
  });
});

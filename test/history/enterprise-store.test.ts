import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyEnterprises,
  type EnterpriseObservation,
  markDisappeared,
} from '../../src/history/enterprise-store.ts';
import { normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import { EnterpriseRecord } from '../../src/upstream/schemas.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { sampleEnterpriseRecord } from '../support/records.ts';

/** The sample record, with the legal representative, people and shareholders these tests read back. */
function record(overrides: Record<string, unknown> = {}): EnterpriseRecord {
  return EnterpriseRecord.parse(
    sampleEnterpriseRecord({
      PID: 'p-0001',
      LEGALPERSON: '张伟',
      PERSONS: [
        { NAME: '张伟', POSITION: '执行董事' },
        { NAME: '李娜', POSITION: '监事' },
      ],
      BE_INVEST: [
        { INV: '张伟', INVTYPE: '自然人股东' },
        { PID: 'p-0002', INV: '北京华拓电子有限公司', INVTYPE: '企业法人' },
      ],
      industry_middle: '软件开发',
      ...overrides,
    }),
  );
}

function obs(r: EnterpriseRecord, at: string, cycle = at.slice(0, 10)): EnterpriseObservation {
  return {
    normalized: normalizeEnterprise(r),
    fetchedAt: new Date(at),
    rawResponseId: null,
    cycle,
    keyword: r.ENTNAME,
  };
}

describe('enterprise history (SCD type 2) in Postgres', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(() => t.drop());

  const versions = async (pid: string) =>
    t.sql<{ version: number; is_current: boolean; valid_to: Date | null; ent_status: string }[]>`
      select version, is_current, valid_to, ent_status from enterprise_versions where pid = ${pid} order by version`;
  const changes = async (pid: string) =>
    t.sql<
      {
        category: string;
        field: string;
        kind: string;
        before: string | null;
        after: string | null;
        severity: string;
      }[]
    >`
      select category, field, kind, before, after, severity from enterprise_changes where pid = ${pid} order by id`;

  it('records a first sighting as one version and an initial observation, not a flood of changes', async () => {
    const s = await applyEnterprises(t.sql, [obs(record(), '2026-11-20T20:00:00Z')]);
    expect(s).toMatchObject({ initial: 1, changed: 0, changes: 0 });
    expect(await versions('p-0001')).toHaveLength(1);
    expect(await changes('p-0001')).toHaveLength(0);
    const [o] = await t.sql`select kind from enterprise_observations where pid = 'p-0001'`;
    expect(o?.kind).toBe('initial');
  });

  it('stores a six-digit division code in PROVINCE and a headcount beyond 32 bits, and sees a district move as a change', async () => {
    const pid = 'p-division';
    const first = record({
      PID: pid,
      ENTNAME: '上海分区示例有限公司',
      PROVINCE: '310115',
      participants: '3000000000',
    });
    await applyEnterprises(t.sql, [obs(first, '2026-11-20T20:00:00Z')]);
    const [row] = await t.sql<
      { province: number; participants_count: number | null; participants: string }[]
    >`
      select province, participants_count, participants from enterprise_versions where pid = ${pid}`;
    expect(row).toEqual({ province: 31, participants_count: null, participants: '3000000000' });
    await applyEnterprises(t.sql, [
      obs(
        record({ PID: pid, ENTNAME: '上海分区示例有限公司', PROVINCE: '310104', participants: '3000000000' }),
        '2026-11-21T20:00:00Z',
      ),
    ]);
    expect((await versions(pid)).map((v) => v.version)).toEqual([1, 2]);
    expect((await changes(pid)).map((c) => [c.field, c.before, c.after])).toEqual([
      ['PROVINCE', '310115', '310104'],
    ]);
  });

  it('re-applying the same payload writes no version and no change, only last_seen_at', async () => {
    const s = await applyEnterprises(t.sql, [obs(record(), '2026-11-21T20:00:00Z')]);
    expect(s).toMatchObject({ unchanged: 1, initial: 0, changed: 0 });
    expect(await versions('p-0001')).toHaveLength(1);
    const [e] = await t.sql<
      { last_seen_at: Date }[]
    >`select last_seen_at from enterprises where pid = 'p-0001'`;
    expect(e?.last_seen_at.toISOString()).toBe('2026-11-21T20:00:00.000Z');
  });

  it('a change writes version 2, closes version 1 and logs field-level rows with severities', async () => {
    const v2 = record({
      ENTSTATUS: '注销',
      LEGALPERSON: '王芳',
      REGCAP: 300,
      PERSONS: [{ NAME: '张伟', POSITION: '执行董事' }],
    });
    const s = await applyEnterprises(t.sql, [obs(v2, '2026-11-22T20:00:00Z')]);
    expect(s.changed).toBe(1);
    const vs = await versions('p-0001');
    expect(vs.map((v) => [v.version, v.is_current])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(vs[0]?.valid_to?.toISOString()).toBe('2026-11-22T20:00:00.000Z');
    const rows = await changes('p-0001');
    const byCategory = Object.fromEntries(rows.map((r) => [r.category, r]));
    expect(byCategory.status).toMatchObject({ before: '存续', after: '注销', severity: 'high' });
    expect(byCategory.legal_representative).toMatchObject({
      before: '张伟',
      after: '王芳',
      severity: 'medium',
    });
    expect(byCategory.registered_capital).toMatchObject({ kind: 'modified', severity: 'medium' });
    expect(byCategory.key_personnel).toMatchObject({ kind: 'removed', severity: 'low' });
  });

  it('a revert to the earlier content is a change too', async () => {
    const s = await applyEnterprises(t.sql, [obs(record(), '2026-11-23T20:00:00Z')]);
    expect(s.changed).toBe(1);
    expect((await versions('p-0001')).map((v) => v.version)).toEqual([1, 2, 3]);
    const rows = await changes('p-0001');
    expect(rows.filter((r) => r.category === 'status').map((r) => r.after)).toEqual(['注销', '存续']);
  });

  it('a field that disappears from the payload is a change', async () => {
    const { industry_middle: _drop, ...rest } = record() as Record<string, unknown>;
    await applyEnterprises(t.sql, [obs(EnterpriseRecord.parse(rest), '2026-11-24T20:00:00Z')]);
    const rows = await changes('p-0001');
    expect(rows.at(-1)).toMatchObject({ kind: 'removed', before: '软件开发', after: null });
  });

  it('rejects a payload fetched before the latest applied one as stale, leaving history untouched', async () => {
    const before = await versions('p-0001');
    const s = await applyEnterprises(t.sql, [obs(record({ ENTSTATUS: '吊销' }), '2026-11-21T21:00:00Z')]);
    expect(s.stale).toBe(1);
    expect(await versions('p-0001')).toEqual(before);
    const [o] =
      await t.sql`select kind from enterprise_observations where pid = 'p-0001' order by id desc limit 1`;
    expect(o?.kind).toBe('stale_ignored');
  });

  it('records disappeared on not_found and reappeared when found again, keeping history', async () => {
    const n = await markDisappeared(t.sql, [
      {
        pid: 'p-0001',
        keyword: 'x',
        fetchedAt: new Date('2026-11-25T20:00:00Z'),
        rawResponseId: null,
        cycle: '2026-11-26',
      },
    ]);
    expect(n).toBe(1);
    const s = await applyEnterprises(t.sql, [obs(record({ OPLOC: '上海市徐汇区' }), '2026-11-26T20:00:00Z')]);
    expect(s.reappeared).toBe(1);
    const kinds = await t.sql<
      { kind: string }[]
    >`select kind from enterprise_observations where pid = 'p-0001' order by id`;
    expect(kinds.map((k) => k.kind)).toEqual(['initial', 'stale_ignored', 'disappeared', 'reappeared']);
    expect((await versions('p-0001')).length).toBe(5);
  });

  it('orders a batch by fetch time and versions several payloads of one enterprise correctly', async () => {
    const pid = 'p-batch';
    const s = await applyEnterprises(t.sql, [
      obs(record({ PID: pid, ENTSTATUS: '在业' }), '2026-11-22T20:00:00Z'),
      obs(record({ PID: pid }), '2026-11-20T20:00:00Z'),
      obs(record({ PID: pid }), '2026-11-21T20:00:00Z'),
    ]);
    expect(s).toMatchObject({ initial: 1, unchanged: 1, changed: 1 });
    const vs = await versions(pid);
    expect(vs.map((v) => [v.version, v.is_current, v.ent_status])).toEqual([
      [1, false, '存续'],
      [2, true, '在业'],
    ]);
  });

  it('loads 1,000 enterprises in one batch', async () => {
    const batch = Array.from({ length: 1000 }, (_, i) =>
      obs(record({ PID: `bulk-${i}`, ENTNAME: `企业${i}有限公司` }), '2026-11-20T20:00:00Z'),
    );
    const s = await applyEnterprises(t.sql, batch);
    expect(s.initial).toBe(1000);
    const [n] = await t.sql<{ n: number }[]>`select count(*)::int as n from enterprise_persons p
      join enterprise_versions v on v.id = p.version_id where v.pid like 'bulk-%'`;
    expect(n?.n).toBe(2000);
    const again = await applyEnterprises(
      t.sql,
      batch.map((o) => ({ ...o, fetchedAt: new Date('2026-11-21T20:00:00Z') })),
    );
    expect(again.unchanged).toBe(1000);
  });

  it('the analytics view shows the current record with its children', async () => {
    const [row] = await t.sql`select * from analytics.enterprise_current where pid = 'p-batch'`;
    expect(row).toMatchObject({
      ent_status: '在业',
      version: 2,
      capital_currency: 'CNY',
      capital_amount: '5000000',
    });
    expect(row?.shareholders).toEqual([
      { name: '张伟', type: '自然人股东', pid: null },
      { name: '北京华拓电子有限公司', type: '企业法人', pid: 'p-0002' },
    ]);
  });
});

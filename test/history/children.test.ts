/**
 * Nothing hidden: a child is kept as sent, and a child that cannot be read never takes its
 * parent's change with it. Answers go the whole way, as live ingestion takes them: landed, read
 * by the schema, normalized, versioned, and their events written, in Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestEnterpriseSuccess } from '../../src/history/ingest.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { enterpriseAnswer } from '../support/records.ts';

const MARKUP = '<img src=x onerror=alert(1)>';

describe('children kept as sent, and the parent change written whatever its children hold', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase();
  });
  afterAll(() => t?.drop());

  /** Ingests the sample record of `pid` with `overrides`, in `cycle`. */
  const ingest = (pid: string, cycle: string, overrides: Record<string, unknown> = {}) => {
    const over = { PID: pid, ENTNAME: `${pid} 有限公司`, ...overrides };
    return ingestEnterpriseSuccess(t.sql, enterpriseAnswer(over), over.ENTNAME, { runId: null, cycle });
  };
  const members = (pid: string) =>
    t.sql<{ name: string; position: string | null }[]>`
      select m.name, m.position from enterprise_clearing_members m
      join enterprise_versions v on v.id = m.version_id
      where v.pid = ${pid} and v.is_current order by m.ordinal`;
  const events = (pid: string) =>
    t.sql<{ type: string; severity: string; current: string | null; previous: string | null }[]>`
      select type, severity, data->>'current' as current, data->>'previous' as previous
      from events where pid = ${pid} order by seq`;
  const versions = async (pid: string) =>
    (await t.sql<{ n: number }[]>`select count(*)::int as n from enterprise_versions where pid = ${pid}`)[0]
      ?.n;

  it('a clearing member named only with markup is stored with that name, and the liquidation opens (high)', async () => {
    const pid = 'p-markup';
    await ingest(pid, '2026-11-20', { CLEARINGINFO: [] });
    const r = await ingest(pid, '2026-11-21', { CLEARINGINFO: [{ liqMem: MARKUP, ligpriSign: '2' }] });

    expect(r.summary).toMatchObject({ changed: 1 });
    expect(await versions(pid)).toBe(2);
    expect(await members(pid)).toEqual([{ name: MARKUP, position: '清算组成员' }]);
    const opened = (await events(pid)).filter((e) => e.type === 'company.liquidation.opened');
    expect(opened).toEqual([
      {
        type: 'company.liquidation.opened',
        severity: 'high',
        current: `${MARKUP} (清算组成员)`,
        previous: null,
      },
    ]);
    const [current] = await t.sql<{ clearing_members: { name: string }[] }[]>`
      select clearing_members from analytics.enterprise_current where pid = ${pid}`;
    expect(current?.clearing_members.map((m) => m.name)).toEqual([MARKUP]);
    const [change] = await t.sql<{ severity: string; detail: string }[]>`
      select severity, detail from enterprise_changes where pid = ${pid} and field = 'CLEARINGINFO'`;
    expect(change).toEqual({ severity: 'high', detail: 'opened' });
  });

  it('a CLEARINGINFO entry with every field empty stores no member, and still opens the liquidation (high)', async () => {
    const pid = 'p-blank';
    await ingest(pid, '2026-11-20', { CLEARINGINFO: [] });
    const blank = { CLEARINGINFO: [{ liqMem: '  ', ligpriSign: '' }] };
    await ingest(pid, '2026-11-21', blank);

    expect(await versions(pid)).toBe(2);
    expect(await members(pid)).toEqual([]);
    expect((await events(pid)).filter((e) => e.severity === 'high')).toEqual([
      { type: 'company.liquidation.opened', severity: 'high', current: '', previous: null },
    ]);

    // The same answer again is no change; the group disappearing closes the liquidation.
    await ingest(pid, '2026-11-22', blank);
    expect(await versions(pid)).toBe(2);
    await ingest(pid, '2026-11-23', { CLEARINGINFO: [] });
    expect(await versions(pid)).toBe(3);
    expect((await events(pid)).map((e) => e.type)).toEqual([
      'company.first_seen',
      'company.liquidation.opened',
      'company.liquidation.closed',
    ]);
  });

  it('a person and a shareholder named with markup, or sent without a name, are stored', async () => {
    const pid = 'p-people';
    await ingest(pid, '2026-11-20', {
      PERSONS: [
        { NAME: MARKUP, POSITION: '监事' },
        { NAME: '', POSITION: '经理' },
      ],
      BE_INVEST: [{ INV: '<b></b>', INVTYPE: '自然人股东' }, { INV: '', INVTYPE: '企业法人' }, { INV: ' ' }],
    });
    const persons = await t.sql<{ name: string; position: string | null }[]>`
      select p.name, p.position from enterprise_persons p join enterprise_versions v on v.id = p.version_id
      where v.pid = ${pid} order by p.ordinal`;
    expect(persons).toEqual([
      { name: MARKUP, position: '监事' },
      { name: '', position: '经理' },
    ]);
    const holders = await t.sql<{ name: string | null; type: string | null }[]>`
      select s.name, s.type from enterprise_shareholders s join enterprise_versions v on v.id = s.version_id
      where v.pid = ${pid} order by s.ordinal`;
    expect(holders).toEqual([
      { name: '<b></b>', type: '自然人股东' },
      { name: null, type: '企业法人' },
    ]);
  });

  it('a version stored before inLiquidation existed reads as open from its members: no false opening or closing', async () => {
    const pid = 'p-legacy';
    const liquidating = { ENTSTATUS: '清算', CLEARINGINFO: [{ liqMem: '王五', ligpriSign: '1' }] };
    await ingest(pid, '2026-11-20', liquidating);
    await t.sql`update enterprise_versions set normalized = normalized - 'inLiquidation' where pid = ${pid}`;
    await ingest(pid, '2026-11-21', { ...liquidating, OPLOC: '上海市徐汇区 2 号' });
    expect((await events(pid)).map((e) => e.type)).toEqual(['company.first_seen', 'company.address.changed']);
  });
});

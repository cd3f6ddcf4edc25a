/**
 * Migration 0032 (`ledger_compacted`) on a database written under the migrations before it: the
 * ledger is written with 0030's schema, read, migrated, compacted, and read again. The credit
 * ledger, the credits by cycle (`analytics.credit_usage`), the export's credits and status's
 * per-cycle credits read the same rows before and after, differing by 0 rows; the metric counts
 * stay equal to the ledger; and a running cycle still takes each call's entry once.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactBookkeeping } from '../../jobs/compact.ts';
import { MIGRATIONS_DIR, migrateDatabase } from '../../src/db/migrate.ts';
import { EXPORT_TABLES, rangeSql, SNAPSHOT_ZERO } from '../../src/export/contract.ts';
import { landRaw } from '../../src/landing/landing.ts';
import { ledgerCredits } from '../../src/purchase/credits.ts';
import { addDays } from '../../src/time/cycles.ts';
import { adminUrl, databaseUrl } from '../support/pg-url.ts';

const MIGRATIONS = readMigrationFiles({ migrationsFolder: MIGRATIONS_DIR });
const JOURNAL = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta/_journal.json'), 'utf8')) as {
  entries: { tag: string }[];
};
/** Where 0032 is among the migrations (in the journal's order). */
const AT = JOURNAL.entries.findIndex((e) => e.tag === '0032_ledger_compacted');
const FIRST = '2026-05-01';
const CYCLES = Array.from({ length: 6 }, (_, i) => addDays(FIRST, i));
const FIRMS = 40;

/** The reads compared, each as a query over the migrated database. */
const credits = EXPORT_TABLES.find((t) => t.name === 'credits');
const exportCredits = () => {
  if (!credits) throw new Error('no credits table in the export');
  const cols = credits.columns.map((c) => `${c.expr} as ${c.name}`).join(', ');
  return rangeSql(
    `select ${cols} from ${credits.from} where ${credits.where}`,
    SNAPSHOT_ZERO,
    // Every transaction so far: the current snapshot.
    '999999999:999999999:',
  );
};
const READS: Record<string, string> = {
  credit_ledger: 'select * from credit_ledger',
  credit_usage: 'select * from analytics.credit_usage',
  export_credits: exportCredits(),
};

describe('migration 0032 on a ledger written before it', { timeout: 120_000 }, () => {
  const name = `daybook_t_${randomBytes(5).toString('hex')}`;
  let admin: postgres.Sql;
  let sql: postgres.Sql;

  beforeAll(async () => {
    expect(AT).toBeGreaterThan(0);
    admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    sql = postgres(databaseUrl(name), { max: 2, onnotice: () => {} });
    // The migrations before 0032, recorded as the runner records them.
    await sql.begin(async (tx) => {
      await tx`create schema if not exists "drizzle"`;
      await tx`create table "drizzle"."__drizzle_migrations" (id serial primary key, hash text not null, created_at bigint)`;
      for (const m of MIGRATIONS.slice(0, AT)) {
        for (const statement of m.sql) await tx.unsafe(statement);
        await tx`insert into "drizzle"."__drizzle_migrations" (hash, created_at) values (${m.hash}, ${m.folderMillis})`;
      }
    });
    // The ledger as 0030's writers wrote it: a booked entry per firm and cycle for its answer;
    // a presumed call (no answer), an unconfirmed one (a timeout landed), a product call, and an
    // entry billed for an error answer.
    for (const [k, cycle] of CYCLES.entries()) {
      const landed = await landRaw(
        sql,
        Array.from({ length: FIRMS }, (_, i) => ({
          runId: 1000 * k + i,
          cycle,
          operation: 'enterprise-search' as const,
          params: { ent_name: `迁移测试${i}` },
          httpStatus: 200,
          bodyText: JSON.stringify({ status: 'success', data: { PID: `P${i}`, day: i % 3 === 0 ? k : 0 } }),
          outcome: 'success',
          fetchedAt: new Date(Date.parse(`${cycle}T02:00:00Z`) + i * 1000),
          durationMs: 100 + i,
        })),
      );
      await sql`
        insert into ledger_entries (cycle, subject_id, credits, run_id, raw_response_id, billed_at, status, watch_id, call_fence)
        select ${cycle}, daybook_ledger_subject('enterprise-search', 'P' || i, '迁移测试' || i, 'stated by the answer'),
               3, 1000 * ${k} + i, raw, l, 'booked', i + 1, 1 + (i % 2)
        from unnest(${landed.map((l) => l.id)}::bigint[], ${landed.map((l) => l.landedAt.toISOString())}::timestamptz[])
             with ordinality as u(raw, l, n), lateral (select (n - 1)::int as i) x`;
      await sql`
        insert into ledger_entries (cycle, subject_id, credits, status, watch_id, call_fence, billed_at)
        values (${cycle}, daybook_ledger_subject('enterprise-search', null, '迁移测试0', 'presumed billed'), 3,
                'presumed', 1, 9, ${`${cycle}T05:00:00Z`})`;
      const [timeout] = await landRaw(sql, [
        {
          runId: 5000 + k,
          cycle,
          operation: 'enterprise-search',
          params: { ent_name: '迁移测试1' },
          httpStatus: null,
          bodyText: null,
          outcome: 'timeout',
          fetchedAt: new Date(`${cycle}T06:00:00Z`),
          durationMs: 30000,
        },
      ]);
      await sql`
        insert into ledger_entries (cycle, subject_id, credits, run_id, raw_response_id, billed_at, status, watch_id, call_fence)
        values (${cycle}, daybook_ledger_subject('enterprise-search', null, '迁移测试1', 'no answer'), 3, ${5000 + k},
                ${timeout?.id ?? null}, ${`${cycle}T06:00:01Z`}, 'unconfirmed', 2, 7)`;
      const [limited] = await landRaw(sql, [
        {
          runId: 6000 + k,
          cycle,
          operation: 'enterprise-search',
          params: { ent_name: '迁移测试2' },
          httpStatus: 429,
          bodyText: '{"status":"error","error":{"code":"rate_limit_exceeded"}}',
          outcome: 'rate_limit_exceeded',
          fetchedAt: new Date(`${cycle}T07:00:00Z`),
          durationMs: 5,
        },
      ]);
      await sql`
        insert into ledger_entries (cycle, subject_id, credits, run_id, raw_response_id, billed_at, status, watch_id, call_fence)
        values (${cycle}, daybook_ledger_subject('enterprise-search', 'P2', '迁移测试2', 'billed for an error'), 1,
                ${6000 + k}, ${limited?.id ?? null}, ${`${cycle}T07:00:01Z`}, 'booked', 3, 5)`;
      // A fence too large for the compacted form's two bytes: the entry stays where it is.
      const [wide] = await landRaw(sql, [
        {
          runId: 8000 + k,
          cycle,
          operation: 'enterprise-search',
          params: { ent_name: '迁移测试3' },
          httpStatus: 200,
          bodyText: '{"status":"success","data":{"PID":"P3"}}',
          outcome: 'success',
          fetchedAt: new Date(`${cycle}T09:00:00Z`),
          durationMs: 7,
        },
      ]);
      await sql`
        insert into ledger_entries (cycle, subject_id, credits, run_id, raw_response_id, billed_at, status, watch_id, call_fence)
        values (${cycle}, daybook_ledger_subject('enterprise-search', 'P3', '迁移测试3', 'stated by the answer'), 3,
                ${8000 + k}, ${wide?.id ?? null}, ${`${cycle}T09:00:01Z`}, 'booked', 4, 40000)`;
      await sql`
        insert into ledger_entries (cycle, subject_id, credits, run_id, billed_at, status)
        values (${cycle}, daybook_ledger_subject('product-listing', null, ${cycle}, 'unpriced'), null, ${7000 + k},
                ${`${cycle}T08:00:00Z`}, 'booked')`;
    }
    // Claims are left for the cycles from the third on (the first two were compacted under 0030).
    await sql`insert into watchlist (keyword, keyword_key) select '迁移测试' || i, 'k' || i from generate_series(0, ${FIRMS}) i`;
    for (const cycle of CYCLES.slice(2))
      await sql`insert into cycle_fetches (cycle, watch_id, status) select ${cycle}, id, 'succeeded' from watchlist`;
    for (const [read, query] of Object.entries(READS))
      await sql.unsafe(`create table "before_${read}" as ${query}`);
  });

  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await admin?.unsafe(`drop database if exists "${name}" with (force)`);
    await admin?.end({ timeout: 5 });
  });

  /** Rows in one read and not the other, either way (as many times as they differ). */
  const differing = async (read: string) => {
    const query = READS[read] as string;
    const [d] = await sql.unsafe<{ n: number }[]>(`
      select count(*)::int as n from (
        (select * from "before_${read}" except all (${query}))
        union all
        ((${query}) except all select * from "before_${read}")) d`);
    return d?.n;
  };
  const perCycle = () => Promise.all(CYCLES.map((c) => ledgerCredits(sql, c)));
  const countsAgree = async () => {
    const [r] = await sql<{ n: number }[]>`
      select count(*)::int as n from (
        (select a::date as cycle, sum(n)::int as n from metric_counts where metric = 'credits' group by 1 having sum(n) <> 0
         except all
         select cycle, sum(credits)::int from credit_ledger group by 1 having sum(credits) <> 0)
        union all
        (select cycle, sum(credits)::int from credit_ledger group by 1 having sum(credits) <> 0
         except all
         select a::date, sum(n)::int from metric_counts where metric = 'credits' group by 1 having sum(n) <> 0)) d`;
    return r?.n;
  };

  it('reads the same ledger after the migration, and after the compaction moves the old entries', async () => {
    const rows = (await sql<{ n: number }[]>`select count(*)::int as n from before_credit_ledger`)[0]?.n;
    expect(rows).toBe(CYCLES.length * (FIRMS + 5));
    // Per-cycle credits as status reads them, under 0030's query.
    const statusBefore = await Promise.all(
      CYCLES.map(async (c) => {
        const [r] = await sql<{ booked: number; other: number }[]>`
          select coalesce(sum(credits) filter (where status = 'booked'), 0)::int as booked,
                 coalesce(sum(credits) filter (where status <> 'booked'), 0)::int as other
          from ledger_entries where cycle = ${c}`;
        return r;
      }),
    );
    expect(await countsAgree()).toBe(0);

    expect(await migrateDatabase(databaseUrl(name))).toBe(MIGRATIONS.length - AT); // 0032 and every one after it
    for (const read of Object.keys(READS)) expect(await differing(read), read).toBe(0);
    // The migration moved the entries of the two cycles compacted before it.
    const [early] = await sql<{ n: number; cycles: string[] }[]>`
      select count(*)::int as n, array_agg(distinct cycle::text order by cycle::text) as cycles from ledger_compacted`;
    expect(early).toEqual({ n: 2 * FIRMS, cycles: CYCLES.slice(0, 2) });
    expect(await countsAgree()).toBe(0);

    // Compacted with 2 days kept: the cycles before the last two are compacted.
    const last = CYCLES[CYCLES.length - 1] as string;
    const s = await compactBookkeeping(sql, last, 2);
    const compactedCycles = CYCLES.filter((c) => c < addDays(last, -2));
    expect(compactedCycles.length).toBe(3);
    expect(s.ledgerEntries).toBe(FIRMS);
    const [moved] = await sql<{ n: number; cycles: number }[]>`
      select count(*)::int as n, count(distinct cycle)::int as cycles from ledger_compacted`;
    expect(moved).toEqual({ n: compactedCycles.length * FIRMS, cycles: compactedCycles.length });
    // What does not move: presumed, unconfirmed, product entries, an entry billed for an error,
    // one whose fence does not fit two bytes.
    const [stay] = await sql<{ n: number }[]>`
      select count(*)::int as n from ledger_entries where cycle < ${addDays(last, -2)}`;
    expect(stay?.n).toBe(compactedCycles.length * 5);
    for (const read of Object.keys(READS)) expect(await differing(read), read).toBe(0);
    const [ids] = await sql<{ n: number; distinct: number }[]>`
      select count(*)::int as n, count(distinct id)::int as distinct from credit_ledger`;
    expect(ids?.n).toBe(ids?.distinct);
    expect(await countsAgree()).toBe(0);
    const statusAfter = await perCycle();
    expect(statusAfter.map((r) => ({ booked: r.confirmed, other: r.unconfirmed }))).toEqual(statusBefore);

    // Idempotent: a second compaction moves nothing and changes no read.
    expect((await compactBookkeeping(sql, last, 2)).ledgerEntries).toBe(0);
    for (const read of Object.keys(READS)) expect(await differing(read), read).toBe(0);
  });

  it('still takes one entry per call in a running cycle', async () => {
    const last = CYCLES[CYCLES.length - 1] as string;
    const again = await sql`
      insert into ledger_entries (cycle, subject_id, credits, status, watch_id, call_fence, billed_at)
      values (${last}, daybook_ledger_subject('enterprise-search', null, '迁移测试0', 'twice'), 3, 'presumed', 1, 1, now())
      on conflict do nothing returning 1`;
    expect(again.length).toBe(0);
  });
});

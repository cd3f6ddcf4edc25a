/** Row types from the schema (src/db/rows.ts): the driver's row shape of a drizzle table. */
import { getTableColumns, getTableName, is, Table } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { DriverRow, LeftJoined, NonNull, Recast, SnakeCase } from '../../src/db/rows.ts';
import * as schema from '../../src/db/schema.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

describe('the types', () => {
  it('name a property by its snake_case column', () => {
    expectTypeOf<SnakeCase<'lastRefreshedAt'>>().toEqualTypeOf<'last_refreshed_at'>();
    expectTypeOf<SnakeCase<'id'>>().toEqualTypeOf<'id'>();
  });

  it('read each column type as the driver parses it', () => {
    type W = DriverRow<typeof schema.watchlist>;
    expectTypeOf<W['id']>().toEqualTypeOf<string>(); // bigserial: int8
    expectTypeOf<W['priority']>().toEqualTypeOf<number>();
    expectTypeOf<W['pid']>().toEqualTypeOf<string | null>();
    expectTypeOf<W['added_at']>().toEqualTypeOf<Date>(); // timestamptz, mode string in drizzle
    expectTypeOf<W['last_refreshed_at']>().toEqualTypeOf<Date | null>();
    expectTypeOf<W['last_cycle']>().toEqualTypeOf<Date | null>(); // date, mode string in drizzle
    expectTypeOf<W['change_rate']>().toEqualTypeOf<number | null>();
    expectTypeOf<W['change_history']>().toEqualTypeOf<unknown>();
    expectTypeOf<W>().not.toHaveProperty('lastRefreshedAt');
    type F = DriverRow<typeof schema.cycleFetches>;
    expectTypeOf<F['call_fence']>().toEqualTypeOf<string | null>(); // bigint mode number in drizzle
    type S = DriverRow<typeof schema.subscriptions>;
    expectTypeOf<S['types']>().toEqualTypeOf<string[]>();
    type Run = DriverRow<typeof schema.runs>;
    expectTypeOf<Run['load_xid']>().toEqualTypeOf<string>(); // xid8: text on the wire
  });

  it('recast what a query casts, keeping null where it was', () => {
    type W = Recast<DriverRow<typeof schema.watchlist>, 'last_cycle' | 'id', string>;
    expectTypeOf<W['last_cycle']>().toEqualTypeOf<string | null>();
    expectTypeOf<W['id']>().toEqualTypeOf<string>();
    expectTypeOf<W['added_at']>().toEqualTypeOf<Date>();
    type Json = Recast<DriverRow<typeof schema.watchlist>, 'change_history', { n: number }>;
    expectTypeOf<Json['change_history']>().toEqualTypeOf<{ n: number }>();
  });

  it('drop null where a query rules it out, and add it on the optional side of a left join', () => {
    type W = NonNull<DriverRow<typeof schema.watchlist>, 'pid' | 'keyword'>;
    expectTypeOf<W['pid']>().toEqualTypeOf<string>();
    expectTypeOf<W['keyword']>().toEqualTypeOf<string>();
    expectTypeOf<W['last_cycle']>().toEqualTypeOf<Date | null>();
    type V = LeftJoined<Pick<DriverRow<typeof schema.enterpriseVersions>, 'id' | 'version' | 'valid_to'>>;
    expectTypeOf<V>().toEqualTypeOf<{ id: string | null; version: number | null; valid_to: Date | null }>();
  });
});

describe('the schema', () => {
  it('names every column as the snake_case of its property, but one declared by a literal name', () => {
    const tables = (Object.values(schema) as unknown[]).filter((t): t is Table => is(t, Table));
    expect(tables.length).toBeGreaterThan(30);
    const otherwise: string[] = [];
    for (const table of tables)
      for (const [key, column] of Object.entries(getTableColumns(table)))
        if (column.name !== key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
          otherwise.push(`${getTableName(table)}.${key}`);
    // Each of these must keep its literal SQL name in its type (not go through tstz or id).
    expect(otherwise).toEqual(['enterprise_versions.sconForm']);
    type V = DriverRow<typeof schema.enterpriseVersions>;
    expectTypeOf<V['sconform']>().toEqualTypeOf<string | null>();
    expectTypeOf<V>().not.toHaveProperty('scon_form');
  });
});

describe('the driver', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('parses as DriverRow says: dates and timestamps to Date, int8 to string', async () => {
    const [w] = await db.sql<DriverRow<typeof schema.watchlist>[]>`
      insert into watchlist (keyword, keyword_key, last_cycle, last_refreshed_at, change_rate)
      values ('k', 'k', '2026-01-02', now(), 0.5)
      returning *`;
    expect(typeof w?.id).toBe('string');
    expect(w?.added_at).toBeInstanceOf(Date);
    expect(w?.last_refreshed_at).toBeInstanceOf(Date);
    expect(w?.last_cycle).toBeInstanceOf(Date);
    expect(typeof w?.priority).toBe('number');
    expect(typeof w?.change_rate).toBe('number');
    expect(Object.keys(w ?? {}).sort()).toEqual(
      Object.values(getTableColumns(schema.watchlist))
        .map((c) => c.name)
        .sort(),
    );
  });
});

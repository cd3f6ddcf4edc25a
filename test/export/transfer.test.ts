/**
 * The two ways a table's rows leave the database (src/export/formats.ts `Transfer`) give the same
 * bytes: COPY (Postgres) and the cursor (kept for the embedded database). A table of every
 * column type with awkward values (quotes, commas, CR, LF and CRLF inside values, backslashes,
 * tabs, control characters, Chinese text, empty text and NULL, nested JSON, a decimal Parquet
 * cannot hold) and enough rows to cross the writers' chunk boundaries inside quoted values, in
 * CSV, NDJSON and gzipped NDJSON. After each COPY, and after a COPY whose file could not be
 * written, the transaction goes on (the connection is not left waiting). The Parquet file staged
 * from the CSV holds the NDJSON's values (read back by hyparquet).
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Column, type ExportTable, SNAPSHOT_ZERO } from '../../src/export/contract.ts';
import { openParquetWriter, type Transfer, writeCsv, writeNdjson } from '../../src/export/formats.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { scratch } from './helpers.ts';

const col = (name: string, type: Column['type'], nullable = true): Column => ({
  name,
  type,
  nullable,
  description: name,
  expr: `x.${name}`,
});

/** Awkward texts, one per row in turn (the last is NULL). */
const TEXTS = [
  'plain',
  '',
  'a "quoted" word, and a comma',
  'line one\nline two',
  'crlf\r\ninside',
  'a lone \r return',
  'back\\slash \\N and \\.',
  'tab\there',
  'control \u0001\u0002\u001f chars',
  '上海华信科技有限公司，“存续”',
  '"',
  '\n',
  null,
];

const ROWS = 20_000;

const TABLE: ExportTable = {
  name: 'awkward',
  description: 'Every column type with awkward values.',
  key: ['id'],
  columns: [
    col('id', 'int64', false),
    col('n', 'int32'),
    col('label', 'text'),
    col('long_text', 'text'),
    col('flag', 'boolean'),
    col('day', 'date'),
    col('at', 'timestamp'),
    col('amount', 'decimal'),
    col('doc', 'json', false),
  ],
  from: `(select g::bigint as id,
            case when g % 7 = 0 then null else (g * 37) % 100000 - 50000 end as n,
            (:texts)[1 + g % ${TEXTS.length}] as label,
            repeat((:texts)[1 + (g * 3) % ${TEXTS.length}] || '长文本', 1 + g % 40) as long_text,
            case g % 3 when 0 then true when 1 then false end as flag,
            date '2026-01-01' + (g % 400) as day,
            timestamptz '2026-01-01 03:00:00+08' + g * interval '1.000123 second' as at,
            case g % 5 when 0 then null when 1 then 123456789012345678901234567890.5
                 when 2 then 0.00000000001 else (g::numeric / 7)::numeric(20, 6) end as amount,
            jsonb_build_object('g', g, 'text', (:texts)[1 + g % ${TEXTS.length}], 'nested',
              jsonb_build_array(1, 2.50, 'x"y', null, jsonb_build_object('k', '中文'))) as doc
          from generate_series(1, ${ROWS}) g) x`.replaceAll(
    ':texts',
    `array[${TEXTS.map((t) => (t === null ? 'null' : `'${t.replaceAll("'", "''")}'`)).join(', ')}]::text[]`,
  ),
  where: 'true',
  orderBy: 'x.id',
};

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('COPY and the cursor give the same files', { timeout: 120_000 }, () => {
  let db: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    db = await freshDatabase();
    dir = scratch('transfer');
  });
  afterAll(async () => {
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const both = async <T>(write: (transfer: Transfer) => Promise<T>) =>
    db.sql.begin('isolation level repeatable read read only', async (tx) => {
      const copy = await write('copy');
      const [after] = await tx<{ one: number }[]>`select 1 as one`;
      expect(after?.one).toBe(1);
      const cursor = await write('cursor');
      return { copy, cursor };
    });

  it('CSV: the same bytes and rows', async () => {
    const { copy, cursor } = await both((t) =>
      writeCsv(db.sql, TABLE, SNAPSHOT_ZERO, SNAPSHOT_ZERO, join(dir, `${t}.csv`), t),
    );
    expect(copy.rows).toBe(ROWS);
    expect(cursor.rows).toBe(ROWS);
    expect(copy.sha256).toBe(cursor.sha256);
    expect(sha(join(dir, 'copy.csv'))).toBe(copy.sha256);
    expect(readFileSync(join(dir, 'copy.csv'), 'utf8')).toBe(readFileSync(join(dir, 'cursor.csv'), 'utf8'));
    const text = readFileSync(join(dir, 'copy.csv'), 'utf8');
    expect(text.startsWith('id,n,label,long_text,flag,day,at,amount,doc\r\n')).toBe(true);
    // NULL an empty unquoted field (n of row 7), an empty text "" (label of row 1).
    expect(text).toContain('\r\n"7",,"tab\there",');
    expect(text).toContain('\r\n"1","-49963","",');
  });

  it('NDJSON, plain and gzipped: the same bytes and rows', async () => {
    for (const gzip of [false, true]) {
      const ext = gzip ? 'ndjson.gz' : 'ndjson';
      const { copy, cursor } = await both((t) =>
        writeNdjson(db.sql, TABLE, SNAPSHOT_ZERO, SNAPSHOT_ZERO, join(dir, `${t}.${ext}`), gzip, t),
      );
      expect(copy.rows).toBe(ROWS);
      expect(cursor.rows).toBe(ROWS);
      expect(copy.sha256).toBe(cursor.sha256);
      expect(sha(join(dir, `copy.${ext}`))).toBe(copy.sha256);
    }
    const lines = gunzipSync(readFileSync(join(dir, 'copy.ndjson.gz')))
      .toString('utf8')
      .split('\n');
    expect(lines.pop()).toBe('');
    const rows = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r.label).slice(0, TEXTS.length)).toEqual([...TEXTS.slice(1), TEXTS[0]]);
    expect(rows[0]).toMatchObject({ id: 1, n: -49963, flag: false, day: '2026-01-02' });
    expect(rows[0]?.at).toBe('2025-12-31T19:00:01.000123Z');
    expect(rows[0]?.amount).toBe('123456789012345678901234567890.5');
  });

  it('a COPY whose file cannot be written fails, and the transaction goes on', async () => {
    await db.sql.begin('isolation level repeatable read read only', async (tx) => {
      // /dev/full opens, and every write to it fails (ENOSPC): the COPY has begun by then.
      await expect(
        writeNdjson(tx, TABLE, SNAPSHOT_ZERO, SNAPSHOT_ZERO, '/dev/full', false, 'copy'),
      ).rejects.toThrow(/ENOSPC/);
      const [after] = await tx<{ one: number }[]>`select 1 as one`;
      expect(after?.one).toBe(1);
    });
  });

  it('Parquet staged from the CSV holds the NDJSON values', async () => {
    const csv = join(dir, 'staged.csv');
    const staged = await writeCsv(db.sql, TABLE, SNAPSHOT_ZERO, SNAPSHOT_ZERO, csv, 'copy');
    const writer = await openParquetWriter();
    try {
      const written = await writer.write(TABLE, csv, join(dir, 'awkward.parquet'), staged.rows);
      expect(written.rows).toBe(ROWS);
      // 123456789012345678901234567890.5 has 30 digits before the point, 0.00000000001 eleven
      // after it: two rows in five.
      expect(written.inexact).toEqual({ amount: (2 * ROWS) / 5 });
    } finally {
      writer.close();
    }
    const rows = await parquetReadObjects({ file: await asyncBufferFromFile(join(dir, 'awkward.parquet')) });
    const json = readFileSync(join(dir, 'copy.ndjson'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toHaveLength(json.length);
    for (let i = 0; i < rows.length; i += 97) {
      const p = rows[i] as Record<string, unknown>;
      const j = json[i] as Record<string, unknown>;
      expect(p.label ?? null).toBe(j.label);
      expect(p.long_text ?? null).toBe(j.long_text);
      expect(p.flag ?? null).toBe(j.flag);
      expect(p.n ?? null).toBe(j.n);
      const doc = typeof p.doc === 'string' ? JSON.parse(p.doc) : p.doc;
      expect(doc).toEqual(j.doc);
    }
  });
});

/**
 * A decimal in a Parquet file is the value Postgres wrote, to the digit: the Parquet writer
 * (src/export/formats.ts) reads decimals from the staged CSV as text and makes DECIMAL(38,10)
 * of each value that fits (at most 28 digits before the point, at most 10 after it once trailing
 * zeros are dropped); any other is written as null and counted, never rounded. The values the
 * file holds are checked against DuckDB's own cast of the same text, for generated values of
 * every length and sign, zeros, and the largest and smallest that fit.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExportTable } from '../../src/export/contract.ts';
import { openParquetWriter } from '../../src/export/formats.ts';
import { scratch } from './helpers.ts';

const TABLE: ExportTable = {
  name: 'amounts',
  description: 'Decimals.',
  key: ['id'],
  columns: [
    { name: 'id', type: 'int64', nullable: false, description: 'Row.' },
    { name: 'amount', type: 'decimal', nullable: true, description: 'A decimal.' },
  ],
  from: 'amounts a',
  where: 'true',
  orderBy: 'a.id',
};

const digits = (min: number, max: number) =>
  fc
    .array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max, size: 'max' })
    .map((d) => d.join(''));

/** A decimal as Postgres writes numeric: an optional sign, digits (up to 31), and a fraction. */
const decimalText = fc
  .record({
    negative: fc.boolean(),
    lead: fc.integer({ min: 1, max: 9 }),
    whole: digits(0, 30),
    zero: fc.boolean(),
    fraction: digits(0, 13),
    zeros: fc.nat(4),
  })
  .map(({ negative, lead, whole, zero, fraction, zeros }) => {
    const frac = fraction === '' && zeros === 0 ? '' : `.${fraction}${'0'.repeat(zeros)}`;
    return `${negative ? '-' : ''}${zero ? '0' : `${lead}${whole}`}${frac}`;
  });

const EDGES = [
  '0',
  '-0',
  '0.0000000000',
  '-0.5',
  '1.5000000000000',
  '0.0000000001',
  '0.00000000001',
  '9999999999999999999999999999.9999999999',
  '-9999999999999999999999999999.9999999999',
  '99999999999999999999999999999',
  '12345678901234567890123456789.5',
  'NaN',
  'Infinity',
  '-Infinity',
];

/** Whether DECIMAL(38,10) holds the value exactly. */
function fits(text: string): boolean {
  const m = /^-?([0-9]+)(?:\.([0-9]*))?$/.exec(text);
  if (!m) return false;
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  return (m[1] as string).length <= 28 && fraction.length <= 10;
}

const dir = scratch('parquet-decimals');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Parquet decimals', () => {
  it('hold every value that fits to the digit, and count the others', async () => {
    const generated = fc.sample(decimalText, { numRuns: 3000, seed: 20261128 });
    const values: (string | null)[] = [...EDGES, ...generated, null];
    const csv = join(dir, 'amounts.csv');
    const lines = ['id,amount', ...values.map((v, i) => `"${i}",${v === null ? '' : `"${v}"`}`)];
    writeFileSync(csv, `${lines.join('\r\n')}\r\n`);
    const plain = join(dir, 'plain.csv');
    writeFileSync(plain, `${lines.join('\r\n')}\r\n`);
    const file = join(dir, 'amounts.parquet');

    const writer = await openParquetWriter();
    let inexact: Record<string, number> | undefined;
    try {
      const written = await writer.write(TABLE, csv, file, values.length);
      expect(written.rows).toBe(values.length);
      inexact = written.inexact;
    } finally {
      writer.close();
    }
    const notFitting = values.filter((v) => v !== null && !fits(v)).length;
    expect(notFitting).toBeGreaterThan(100);
    expect(inexact).toEqual({ amount: notFitting });

    const { DuckDBInstance } = await import('@duckdb/node-api');
    const duck = await DuckDBInstance.create(':memory:');
    const conn = await duck.connect();
    try {
      const read = await conn.runAndReadAll(
        `select p.id, p.amount::varchar as got, c.amount as text,
                try_cast(c.amount as decimal(38,10))::varchar as cast
         from read_parquet('${file}') p
         join read_csv('${plain}', header = true, all_varchar = true) c on c.id::bigint = p.id
         order by p.id`,
      );
      const rows = read.getRowObjectsJson() as {
        id: string;
        got: string | null;
        text: string | null;
        cast: string | null;
      }[];
      expect(rows).toHaveLength(values.length);
      const wrong = rows.filter((r) => {
        const want = r.text !== null && fits(r.text) ? r.cast : null;
        return r.got !== want;
      });
      expect(wrong.slice(0, 5)).toEqual([]);
    } finally {
      conn.closeSync();
      duck.closeSync();
    }
  });
});

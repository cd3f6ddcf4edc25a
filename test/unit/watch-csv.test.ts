import { describe, expect, it } from 'vitest';
import { parseWatchlistCsv } from '../../src/watch/csv.ts';
import { keywordKey } from '../../src/watch/keyword.ts';

const ok = (text: string) => {
  const r = parseWatchlistCsv(text);
  expect(r.errors).toEqual([]);
  return r.entries.map((e) => [e.line, e.keyword, e.priority]);
};
const errors = (text: string) => parseWatchlistCsv(text).errors.map((e) => `${e.line}: ${e.message}`);

describe('watchlist CSV', () => {
  it('reads names and priorities', () => {
    expect(ok('name,priority\nA公司,3\nB公司,\n')).toEqual([
      [2, 'A公司', 3],
      [3, 'B公司', 0],
    ]);
  });
  it('strips a BOM and reads CRLF', () => expect(ok('\uFEFFname\r\nA公司\r\n')).toEqual([[2, 'A公司', 0]]));
  it('skips blank lines and keeps physical line numbers', () =>
    expect(ok('name\n\nA公司\n  \nB公司')).toEqual([
      [3, 'A公司', 0],
      [5, 'B公司', 0],
    ]));
  it('reads quotes, doubled quotes and commas inside quotes', () =>
    expect(ok('name\n"A, ""B"" 公司"\n')).toEqual([[2, 'A, "B" 公司', 0]]));
  it('a line break inside a quoted name is refused, and the lines after it keep their numbers', () => {
    const r = parseWatchlistCsv('name\n"A\nB"\nC公司\n');
    expect(r.errors.map((e) => e.line)).toEqual([2]);
    expect(r.errors[0]?.message).toMatch(/control character/);
    expect(r.entries.map((e) => [e.line, e.keyword])).toEqual([[4, 'C公司']]);
  });
  it('accepts other name columns and any column order', () => {
    expect(ok('priority,ent_name\n2,A公司\n')).toEqual([[2, 'A公司', 2]]);
    expect(ok('企业名称\nA公司\n')).toEqual([[2, 'A公司', 0]]);
    expect(ok('NAME,extra\nA公司,x\n')).toEqual([[2, 'A公司', 0]]);
  });
  it('tolerates trailing commas', () => expect(ok('name,priority,\nA公司,1,\n')).toEqual([[2, 'A公司', 1]]));
  it('reports a missing name column', () => expect(errors('company\nA\n')[0]).toMatch(/^1: no name column/));
  it('reports an empty file', () => expect(errors('')[0]).toMatch(/empty/));
  it('a header alone imports nothing', () => expect(ok('name\n')).toEqual([]));
  it('reports an empty name', () =>
    expect(errors('name,priority\n,1\n')).toEqual(['2: name is empty: give an enterprise name']));
  it('reports a name over 100 characters', () =>
    expect(errors(`name\n${'a'.repeat(101)}\n`)[0]).toMatch(/^2: name is 101 characters/));
  it('reports control characters', () =>
    expect(errors('name\nA\u0001B\n')[0]).toMatch(/^2: .*control character/));
  it('reports a bad priority', () => {
    expect(errors('name,priority\nA,abc\n')[0]).toMatch(/^2: priority "abc"/);
    expect(errors('name,priority\nA,1.5\n')[0]).toMatch(/^2: priority "1.5"/);
    expect(errors('name,priority\nA,5000\n')[0]).toMatch(/^2: priority "5000"/);
  });
  it('reports duplicates, full-width and half-width forms alike', () => {
    expect(errors('name\nABC公司\nＡＢＣ公司\n')).toEqual(['3: "ＡＢＣ公司" is a duplicate of line 2']);
    expect(errors('name\nabc 公司\nABC  公司\n')[0]).toMatch(/duplicate of line 2/);
  });
  it('reports a stray quote and an unclosed quote', () => {
    expect(errors('name\nA"B\n')[0]).toMatch(/^2: a stray quote/);
    expect(errors('name\n"AB\n')[0]).toMatch(/^2: a quoted field is never closed/);
    expect(errors('name\n"A"B\n')[0]).toMatch(/^2: a stray character after a closing quote/);
  });
  it('keeps reading after a bad row', () => {
    const r = parseWatchlistCsv('name,priority\nA,x\nB,1\n');
    expect(r.entries.map((e) => e.keyword)).toEqual(['B']);
    expect(r.errors).toHaveLength(1);
  });
  it('keyword keys fold width, case and spacing', () => {
    expect(keywordKey(' Ａbc  公司 ')).toBe('abc 公司');
  });
});

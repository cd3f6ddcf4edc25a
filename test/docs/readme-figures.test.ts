/**
 * The figures of the README and docs/ stay true to their sources:
 *
 * - every span between `<!-- figures:NAME -->` markers that comes from bench/results.json (in
 *   docs/benchmarks.md, where the README's Benchmarks section moved) is, to the character, what
 *   scripts/readme-figures.ts computes from the file now (`npm run readme:figures` rewrites them);
 *   the backtest's table and the rules it missed are in docs/planner.md and the README too, the
 *   same text; the demo's span, in the README's quick start, is checked by
 *   test/cli/readme-demo.test.ts, on the demo run it makes anyway;
 * - a goal a bench part missed shows as missed;
 * - where the documentation says how long a killed worker's jobs wait, it quotes
 *   DAYBOOK_JOB_LOCK_MS's default, and docs/configuration.md's table gives the same default;
 * - the number of tables with foreign keys to `raw_responses` (docs/operations.md, What is kept)
 *   is the migrated database's;
 * - no page states an exact number of tests (that drifts with every test added);
 * - every DAYBOOK_ variable the README, docs/ and .env.example name is one the code reads.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BenchDocument,
  benchSpans,
  DEMO_SPAN,
  MAIN_PARTS,
  REFRESH_SPANS,
  readBenchDocument,
  readSpans,
  writeSpans,
} from '../../scripts/readme-figures.ts';
import { ENV_SCHEMA, loadConfig } from '../../src/config/config.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const README = read('README.md');
const BENCHMARKS = 'docs/benchmarks.md';
const PLANNER = 'docs/planner.md';
const benchmarks = read(BENCHMARKS);
/** The markdown of docs/, every folder included, by path. */
const DOCS = (readdirSync(join(ROOT, 'docs'), { recursive: true }) as string[])
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`)
  .sort();
/** The README and every page of docs/: the text a statement may have moved to. */
const ALL = ['README.md', ...DOCS].map((file) => ({ file, text: read(file) }));
const doc = readBenchDocument();

/** How the table's rows of a part begin, where it is not the part's name. */
const ROW_LABEL: Record<string, string> = { delivery: 'webhooks', cli: 'commands' };

describe('the figures from bench/results.json in docs/benchmarks.md', () => {
  const spans = benchSpans(doc);
  const present = readSpans(benchmarks, BENCHMARKS);

  it('has every span the generator writes, and no span it does not know', () => {
    expect([...present.keys()].sort()).toEqual(Object.keys(spans).sort());
  });

  it("leaves the README the demo's span and the backtest's, docs/planner.md the backtest's, and no other file a span", () => {
    expect([...readSpans(README).keys()].sort()).toEqual([DEMO_SPAN, ...REFRESH_SPANS].sort());
    expect([...readSpans(read(PLANNER)).keys()].sort()).toEqual([...REFRESH_SPANS].sort());
    for (const { file, text } of ALL)
      if (file !== 'README.md' && file !== BENCHMARKS && file !== PLANNER)
        expect(readSpans(text, file).size, file).toBe(0);
  });

  for (const name of REFRESH_SPANS)
    it(`figures:${name} reads the same in docs/planner.md and the README as in docs/benchmarks.md`, () => {
      expect(readSpans(read(PLANNER), PLANNER).get(name)).toBe(spans[name]);
      expect(readSpans(README).get(name)).toBe(spans[name]);
    });

  it("marks every rule of the backtest's table ✓ or ✗, and names every rule a row missed", () => {
    const table = spans['refresh-table'] ?? '';
    const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| world'));
    const refresh = doc.parts.refresh as { table: { family: string; met: boolean }[] };
    expect(rows.length).toBe(refresh.table.length);
    for (const r of rows) expect(r.split(' | ').slice(-5).join(' ')).toMatch(/^([✓✗–] ?)+\|?$/);
    const goals = spans['refresh-goals'] ?? '';
    for (const row of refresh.table.filter((x) => !x.met)) expect(goals).toContain(row.family);
  });

  for (const [name, text] of Object.entries(spans)) {
    it(`figures:${name} is what bench/results.json gives (npm run readme:figures rewrites it)`, () => {
      expect(present.get(name)).toBe(text);
    });
  }

  it('rewrites only the spans: the page written again from its own figures is the same text', () => {
    expect(writeSpans(benchmarks, spans, BENCHMARKS)).toBe(benchmarks);
  });

  it('shows every target a main bench part missed as missed, with the goal', () => {
    const table = spans['bench-table'] ?? '';
    const rows = table.split('\n').filter((l) => l.startsWith('| '));
    for (const part of MAIN_PARTS) {
      const result = doc.parts[part] as { met?: boolean } | undefined;
      if (result?.met === false) {
        const label = ROW_LABEL[part] ?? part;
        const missed = rows.filter((r) => r.startsWith(`| ${label}`) && r.includes('✗ missed'));
        expect(missed.length, `${part} missed its target: a row says so`).toBeGreaterThan(0);
        // The goal it missed is in the row too.
        for (const r of missed) expect(r.split(' | ')[2]?.trim()).not.toBe('');
      }
    }
  });

  it('turns a target met into ✓ and a target missed into ✗ missed (a memory figure over its bound)', () => {
    const memory = doc.parts.memory as { met: boolean; peakRssMiB: number };
    const over: BenchDocument = structuredClone(doc);
    over.parts.memory = { ...memory, peakRssMiB: 250, met: false };
    const row = (d: BenchDocument) =>
      (benchSpans(d)['bench-table'] ?? '').split('\n').find((l) => l.startsWith('| memory')) ?? '';
    expect(row({ ...doc, parts: { ...doc.parts, memory: { ...memory, met: true } } })).toContain('✓ met');
    expect(row(over)).toContain('250 MiB');
    expect(row(over)).toContain('✗ missed');
  });

  it('says how long every part takes from the parts’ own times', () => {
    const seconds = Object.values(doc.parts).reduce<number>(
      (sum, p) => sum + ((p as { seconds?: number }).seconds ?? 0),
      0,
    );
    expect(spans['bench-header']).toContain(`about ${Math.round(seconds / 60)} minutes`);
  });
});

describe("the documentation's other statements", () => {
  it('quotes the default of DAYBOOK_JOB_LOCK_MS wherever it gives the lock a number', () => {
    const lockSeconds = loadConfig({}, join(ROOT, 'no-such.env')).DAYBOOK_JOB_LOCK_MS / 1000;
    const quoted = ALL.flatMap(({ text }) =>
      [...text.matchAll(/`DAYBOOK_JOB_LOCK_MS`, (\d+(?:\.\d+)?) s\b/g)].map((m) => Number(m[1])),
    );
    expect(quoted.length, 'the documentation says how long a killed worker’s jobs wait').toBeGreaterThan(0);
    for (const q of quoted) expect(q).toBe(lockSeconds);
    // The configuration table gives the same default, in milliseconds.
    expect(read('docs/configuration.md')).toMatch(
      new RegExp(`\\| \`DAYBOOK_JOB_LOCK_MS\` \\| \`${lockSeconds * 1000}\` \\|`),
    );
  });

  describe('the tables that point at the raw landing', () => {
    let t: TestDatabase;
    beforeAll(async () => {
      t = await freshDatabase();
    });
    afterAll(() => t.drop());

    it('are as many as the migrated database has with foreign keys to raw_responses', async () => {
      const [row] = await t.sql<{ n: number }[]>`
        select count(distinct conrelid)::int as n from pg_constraint
        where contype = 'f' and confrelid = 'raw_responses'::regclass`;
      const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
      words.push('eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen');
      const stated = /\b([a-z]+|\d+) tables have foreign keys to its rows/.exec(
        read('docs/operations.md'),
      )?.[1];
      expect(
        stated,
        'docs/operations.md says how many tables have foreign keys to the landing',
      ).toBeDefined();
      const n = /^\d+$/.test(stated ?? '') ? Number(stated) : words.indexOf(stated ?? '');
      expect(n).toBe(row?.n);
    });
  });

  it('states no exact number of tests', () => {
    for (const { file, text } of ALL) expect(text, file).not.toMatch(/\b\d[\d,]* tests\b/);
  });

  it('names no DAYBOOK_ variable that nothing reads (README, docs/, .env.example)', () => {
    const docs = ['README.md', '.env.example', ...DOCS];
    // Variables of the benches, the test setup, CI and compose, read there rather than through the config.
    const readers = ['bench', 'test/support']
      .flatMap((dir) => readdirSync(join(ROOT, dir)).map((f) => join(ROOT, dir, f)))
      .filter((f) => f.endsWith('.ts'))
      .concat(['.ci/run', 'docker-compose.yml'].map((f) => join(ROOT, f)))
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const known = new Set(Object.keys(ENV_SCHEMA.shape));
    const unread: string[] = [];
    for (const file of docs) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const name of new Set(text.match(/\bDAYBOOK_[A-Z0-9_]+\b/g) ?? [])) {
        const read =
          known.has(name) ||
          readers.includes(`process.env.${name}`) ||
          readers.includes(`'${name}'`) ||
          readers.includes(`$${name}`) ||
          readers.includes(`\${${name}`);
        if (!read) unread.push(`${file}: ${name}`);
      }
    }
    expect(unread).toEqual([]);
  });
});

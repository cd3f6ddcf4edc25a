/**
 * The user reference in docs/ stays true to the code and the database.
 *
 * - docs/data-dictionary.md has a section for every view of the `analytics` schema and a row for
 *   every column, in the view's order, with the type Postgres reports. Types are written as
 *   `information_schema.columns.data_type`, except `timestamptz` for `timestamp with time zone`
 *   and `<element>[]` for an array (`text[]`).
 * - Columns documented as never null are not null in views filled by the history stores.
 * - docs/changes.md documents every change category, with the severities classify.ts gives, every
 *   upstream field under its category, every event kind the code writes, and every option of
 *   `daybook changes`.
 * - docs/simulator.md documents every option of `daybook sim` and every control endpoint.
 *
 * The links of docs/ and the README are checked by test/docs/links.test.ts.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesCommand } from '../../src/cli/changes.ts';
import { simCommand } from '../../src/cli/sim.ts';
import {
  ENTERPRISE_CHANGE_CATEGORIES,
  ENTERPRISE_FIELD_CATEGORIES,
  SEVERITY_RULES,
  severityOf,
} from '../../src/history/classify.ts';
import {
  applyEnterprises,
  disappearKeyword,
  type EnterpriseObservation,
} from '../../src/history/enterprise-store.ts';
import { normalizeEnterprise } from '../../src/normalize/enterprise.ts';
import { EnterpriseRecord } from '../../src/upstream/schemas.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { sections, tableWith, ticked, unticked } from '../support/markdown.ts';
import { sampleEnterpriseRecord } from '../support/records.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

// ---- the database's view of the analytics schema ---------------------------------------------

interface ColumnInfo {
  table_name: string;
  column_name: string;
  data_type: string;
  udt_name: string;
}

/** The type as the data dictionary writes it (see the module comment). */
function documentedType(c: ColumnInfo): string {
  if (c.data_type === 'timestamp with time zone') return 'timestamptz';
  if (c.data_type === 'ARRAY') return `${c.udt_name.replace(/^_/, '')}[]`;
  return c.data_type;
}

// ---- what the code can produce ----------------------------------------------------------------

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** Splits an SQL values list on top-level commas, leaving `${…}` and (…) whole. */
function splitValues(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of list) {
    if (ch === '(' || ch === '{') depth++;
    if (ch === ')' || ch === '}') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

/**
 * The event kinds written to enterprise_observations anywhere in src/ and jobs/: through the
 * `observe(pid, 'kind', …)` helper of the enterprise store, or a literal in an
 * `insert into enterprise_observations (…, kind, …) values (…)` statement.
 */
/** The text from `start` (just after an opening parenthesis) to its matching closing one. */
function insideParentheses(text: string, start: number): string {
  let depth = 1;
  let end = start;
  for (; end < text.length && depth > 0; end++) {
    if (text[end] === '(') depth++;
    if (text[end] === ')') depth--;
  }
  return text.slice(start, end - 1);
}

function eventKindsInCode(): Set<string> {
  const kinds = new Set<string>();
  for (const file of [...sourceFiles('src'), ...sourceFiles('jobs')]) {
    const text = read(file);
    for (const m of text.matchAll(/\bobserve\(\s*[\w.]+\s*,\s*'([a-z_]+)'/g)) kinds.add(m[1] as string);
    for (const m of text.matchAll(/insert\s+into\s+enterprise_observations\s*\(([^)]*)\)\s*values\s*\(/gi)) {
      const columns = (m[1] as string).split(',').map((c) => c.trim());
      const values = splitValues(insideParentheses(text, (m.index ?? 0) + m[0].length));
      const literal = /^'([a-z_]+)'$/.exec(values[columns.indexOf('kind')] ?? '');
      if (literal) kinds.add(literal[1] as string);
    }
    // Observations written through the owner's helper: the kind of each row it is handed.
    for (const m of text.matchAll(/\binsertObservations\(/g)) {
      const args = insideParentheses(text, (m.index ?? 0) + m[0].length);
      for (const k of args.matchAll(/\bkind:\s*'([a-z_]+)'/g)) kinds.add(k[1] as string);
    }
  }
  return kinds;
}

/** The long options declared in the source of one commander command (`.option('--x …')`). */
/** The long options a command declares, read from the command itself. */
function optionsDeclared(command: Command): string[] {
  return command.options.map((o) => o.long).filter((o): o is string => o !== undefined);
}

// ---- fixtures for the history stores ----------------------------------------------------------

function record(overrides: Record<string, unknown> = {}): EnterpriseRecord {
  return EnterpriseRecord.parse(
    sampleEnterpriseRecord({
      PID: 'doc-0001',
      ENTNAME: '上海文档信息科技有限公司',
      OPTO: '9999-12-31',
      BE_INVEST: [
        { INV: '张伟', INVTYPE: '自然人股东' },
        { PID: 'doc-0009', INV: '北京华拓电子有限公司', INVTYPE: '企业法人' },
      ],
      ...overrides,
    }),
  );
}

// ---- the tests --------------------------------------------------------------------------------

const dictionary = read('docs/data-dictionary.md');
const changesDoc = read('docs/changes.md');
const simulatorDoc = read('docs/simulator.md');
const DICTIONARY_COLUMNS = ['column', 'type', 'meaning', 'upstream field', 'null when'];

/** The data dictionary's sections by view name (`## analytics.<view>`). */
function viewSections(): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of sections(dictionary, 2)) {
    const m = /^`?analytics\.([a-z_0-9]+)`?$/.exec(s.heading);
    if (m) out.set(m[1] as string, s.body);
  }
  return out;
}

describe('the user reference in docs/', { timeout: 60_000 }, () => {
  let t: TestDatabase;
  let columns: ColumnInfo[];
  let views: string[];

  beforeAll(async () => {
    t = await freshDatabase();
    columns = await t.sql<ColumnInfo[]>`
      select table_name::text, column_name::text, data_type::text, udt_name::text
      from information_schema.columns
      where table_schema = 'analytics'
      order by table_name, ordinal_position`;
    views = (
      await t.sql<{ table_name: string }[]>`
        select table_name::text from information_schema.views where table_schema = 'analytics'
        order by table_name`
    ).map((r) => r.table_name);
  });
  afterAll(async () => {
    await t.drop();
  });

  describe('docs/data-dictionary.md', () => {
    it('has a section for every analytics view, and none for a view that does not exist', () => {
      expect(views.length).toBeGreaterThan(5);
      expect([...viewSections().keys()].sort()).toEqual(views);
    });

    it('has a row for every column of every view, in the view’s order, with the type Postgres reports', () => {
      const byView = viewSections();
      for (const view of views) {
        const rows = tableWith(byView.get(view) ?? '', DICTIONARY_COLUMNS, `analytics.${view}`);
        const actual = columns.filter((c) => c.table_name === view);
        expect(
          rows.map((r) => unticked(r[0] ?? '')),
          `analytics.${view}: documented columns`,
        ).toEqual(actual.map((c) => c.column_name));
        for (const [i, c] of actual.entries()) {
          const row = rows[i] ?? [];
          expect(unticked(row[1] ?? ''), `analytics.${view}.${c.column_name}: type`).toBe(documentedType(c));
          for (const [k, name] of DICTIONARY_COLUMNS.entries()) {
            expect(row[k] ?? '', `analytics.${view}.${c.column_name}: ${name}`).not.toBe('');
          }
        }
      }
    });
  });

  describe('docs/changes.md', () => {
    const severityRows = () =>
      tableWith(changesDoc, ['category', 'fields', 'detail', 'severity', 'why'], 'docs/changes.md').map(
        (r) => ({
          category: unticked(r[0] ?? ''),
          fields: ticked(r[1] ?? ''),
          details: [...ticked(r[2] ?? ''), ...(/\bnone\b/.test(r[2] ?? '') ? [null] : [])],
          severity: (r[3] ?? '').trim(),
        }),
      );

    it('documents every change category classify.ts has, and no other', () => {
      expect(new Set(severityRows().map((r) => r.category))).toEqual(new Set(ENTERPRISE_CHANGE_CATEGORIES));
    });

    it('gives each category and detail the severity classify.ts gives it', () => {
      for (const row of severityRows()) {
        expect(row.details.length, `${row.category}: a detail (or none)`).toBeGreaterThan(0);
        for (const detail of row.details) {
          expect(row.severity, `${row.category} / ${detail ?? 'none'}`).toBe(
            severityOf(row.category as (typeof ENTERPRISE_CHANGE_CATEGORIES)[number], detail),
          );
        }
      }
      for (const rule of SEVERITY_RULES) {
        if (rule.detail === '*') continue;
        expect(
          severityRows().some(
            (r) =>
              r.category === rule.category && r.details.includes(rule.detail) && r.severity === rule.severity,
          ),
          `the rule ${rule.category} / ${rule.detail} → ${rule.severity}`,
        ).toBe(true);
      }
    });

    it('lists every upstream field under the category classify.ts puts it in', () => {
      const rows = severityRows();
      for (const [field, category] of Object.entries(ENTERPRISE_FIELD_CATEGORIES)) {
        const listing = new Set(rows.filter((r) => r.fields.includes(field)).map((r) => r.category));
        expect([...listing], field).toEqual([category]);
      }
    });

    it('documents every event kind the code writes, and no other', () => {
      const inCode = eventKindsInCode();
      // The scan itself must keep finding the kinds known when this test was written.
      for (const kind of ['initial', 'disappeared', 'reappeared', 'stale_ignored', 'resolution_changed'])
        expect(inCode.has(kind), `the scan finds ${kind}`).toBe(true);
      const documented = tableWith(changesDoc, ['kind', 'written when'], 'docs/changes.md').map((r) =>
        unticked(r[0] ?? ''),
      );
      expect(new Set(documented)).toEqual(inCode);
      const kindRow = tableWith(
        viewSections().get('enterprise_events') ?? '',
        DICTIONARY_COLUMNS,
        'analytics.enterprise_events',
      ).find((r) => unticked(r[0] ?? '') === 'kind');
      for (const kind of inCode)
        expect(ticked(kindRow?.[2] ?? ''), `enterprise_events.kind names ${kind}`).toContain(kind);
    });

    it('documents every option of daybook changes', () => {
      const declared = optionsDeclared(changesCommand());
      expect(declared).toContain('--detected-since');
      const section = sections(changesDoc, 2).find((s) => s.heading.includes('daybook changes'))?.body ?? '';
      const documented = tableWith(section, ['option', 'selects'], 'Reading changes').flatMap((r) =>
        ticked(r[0] ?? '').map((o) => o.split(' ')[0]),
      );
      for (const option of declared) expect(documented, option).toContain(option);
    });
  });

  describe('docs/simulator.md', () => {
    it('documents every option of daybook sim', () => {
      const declared = optionsDeclared(simCommand());
      expect(declared).toContain('--faults');
      const section = sections(simulatorDoc, 2).find((s) => s.heading === 'Options')?.body ?? '';
      const documented = tableWith(section, ['option', 'default', 'meaning'], 'Options').flatMap((r) =>
        ticked(r[0] ?? '').map((o) => o.split(' ')[0]),
      );
      for (const option of declared) expect(documented, option).toContain(option);
    });

    it('documents every control endpoint of the simulator under its own heading', () => {
      const routes = [...read('src/sim/server.ts').matchAll(/app\.(get|post)\(\s*'(\/_sim\/[\w/-]+)'/g)].map(
        (m) => `${(m[1] as string).toUpperCase()} ${m[2]}`,
      );
      expect(routes.length).toBeGreaterThanOrEqual(7);
      const headings = sections(simulatorDoc, 3).map((s) => unticked(s.heading));
      for (const route of routes) expect(headings, route).toContain(route);
    });
  });

  describe('what the history stores write', () => {
    let raw = 0;
    /** A landed answer to point at (the events and versions keep their raw response). */
    const landed = async (at: string, outcome = 'success'): Promise<number> => {
      const [r] = await t.sql<{ id: string }[]>`
        insert into raw_responses (operation, params_id, outcome, fetched_at, landed_at, cycle)
        values ('enterprise-search', daybook_raw_params(${t.sql.json({ ent_name: `doc ${++raw}` })}), ${outcome}, ${at},
                ${at}, '2026-11-21')
        returning id`;
      return Number(r?.id);
    };
    const apply = async (r: EnterpriseRecord, at: string, keyword: string): Promise<void> => {
      const o: EnterpriseObservation = {
        normalized: normalizeEnterprise(r),
        fetchedAt: new Date(at),
        rawResponseId: await landed(at),
        cycle: '2026-11-21',
        keyword,
      };
      await t.sql.begin((tx) => applyEnterprises(tx, [o]));
    };

    beforeAll(async () => {
      const keyword = '文档信息';
      const changed = record({
        ENTSTATUS: '注销',
        REGCAP: 300,
        REVOKEDATE: '2026-11-20',
        OPLOC: '上海市浦东新区张江路200号',
        PERSONS: [
          { NAME: '张伟', POSITION: '执行董事兼总经理' },
          { NAME: '王芳', POSITION: '监事' },
        ],
        BE_INVEST: [{ INV: '张伟', INVTYPE: '自然人股东' }],
        CLEARINGINFO: [{ liqMem: '<b>赵强</b>', ligpriSign: '1' }],
        ENTNAME_EN: 'Shanghai Docs Co., Ltd.',
      });
      await apply(record(), '2026-11-20T20:00:00.000Z', keyword); // initial
      await apply(changed, '2026-11-20T20:00:02.000Z', keyword); // version 2, changes
      await apply(record(), '2026-11-20T20:00:01.000Z', keyword); // stale_ignored
      const notFound = await landed('2026-11-21T20:00:00.000Z', 'not_found');
      await t.sql.begin((tx) =>
        disappearKeyword(tx, {
          keyword,
          fetchedAt: new Date('2026-11-21T20:00:00.000Z'),
          rawResponseId: notFound,
          cycle: '2026-11-22',
        }),
      ); // disappeared
      await apply(changed, '2026-11-22T20:00:00.000Z', keyword); // reappeared
      await apply(
        record({ PID: 'doc-0002', ENTNAME: '上海文档信息咨询有限公司' }),
        '2026-11-23T20:00:00.000Z',
        keyword,
      ); // resolution_changed, initial
    });

    it('writes only event kinds and change categories the docs describe', async () => {
      const kinds = new Set(
        (await t.sql<{ kind: string }[]>`select distinct kind from analytics.enterprise_events`).map(
          (r) => r.kind,
        ),
      );
      expect(kinds).toEqual(
        new Set(['initial', 'stale_ignored', 'disappeared', 'reappeared', 'resolution_changed']),
      );
      const documentedKinds = tableWith(changesDoc, ['kind', 'written when'], 'docs/changes.md').map((r) =>
        unticked(r[0] ?? ''),
      );
      for (const kind of kinds) expect(documentedKinds, kind).toContain(kind);
      const changes = await t.sql<{ category: string; detail: string | null; severity: string }[]>`
        select distinct category, detail, severity from analytics.enterprise_changes`;
      expect(changes.length).toBeGreaterThan(5);
      for (const c of changes) {
        expect(changesDoc, c.category).toContain(`\`${c.category}\``);
        if (c.detail !== null)
          for (const d of c.detail.split(',')) expect(changesDoc, d).toContain(`\`${d}\``);
      }
    });

    it('leaves no column the data dictionary calls never null, null', async () => {
      const byView = viewSections();
      let checked = 0;
      for (const view of views) {
        const never = tableWith(byView.get(view) ?? '', DICTIONARY_COLUMNS, `analytics.${view}`)
          .filter((r) => /^never\b/.test(r[4] ?? ''))
          .map((r) => unticked(r[0] ?? ''));
        if (never.length === 0) continue;
        const counts = never.map((c) => `count(*) filter (where "${c}" is null)::int as "${c}"`).join(', ');
        const [row] = await t.sql.unsafe(`select count(*)::int as rows, ${counts} from analytics."${view}"`);
        const { rows, ...nulls } = row as Record<string, number>;
        if ((rows ?? 0) > 0) checked++;
        for (const [c, n] of Object.entries(nulls)) expect(n, `analytics.${view}.${c}`).toBe(0);
      }
      // The enterprise views at least have rows to check.
      expect(checked).toBeGreaterThanOrEqual(4);
    });
  });
});

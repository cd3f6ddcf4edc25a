/**
 * docs/export.md stays true to the code of the warehouse export (no database needed):
 *
 * - the Tables section has one `###` section per table of EXPORT_TABLES, in that order, naming
 *   its key, with a row for every column in contract order: its logical type and whether it can
 *   be null;
 * - the schema version it states is SCHEMA_VERSION;
 * - the Types table has a row for every logical type the contract uses, with the DuckDB type the
 *   Parquet writer gives it;
 * - every option of `daybook export` is documented, and no option the command lacks.
 */

import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exportCommand } from '../../src/cli/export.ts';
import { EXPORT_TABLES, SCHEMA_VERSION } from '../../src/export/contract.ts';
import { duckType } from '../../src/export/formats.ts';
import { sections, tableWith, ticked, unticked } from '../support/markdown.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const doc = readFileSync(join(ROOT, 'docs/export.md'), 'utf8');

/** The body of the `##` section with this heading; fails the test when there is none. */
function section(heading: string): string {
  const found = sections(doc, 2).filter((s) => s.heading === heading);
  expect(found, `docs/export.md: one section "## ${heading}"`).toHaveLength(1);
  return found[0]?.body ?? '';
}

// ---- the tests --------------------------------------------------------------------------------

const COLUMN_HEADER = ['column', 'type', 'null', 'description'];

describe('docs/export.md', () => {
  describe('the column contract', () => {
    /** The `###` sections of the Tables section that name a table (`### \`name\``). */
    const tableSections = () =>
      sections(section('Tables'), 3)
        .filter((s) => /^`[a-z_0-9]+`$/.test(s.heading))
        .map((s) => ({ name: unticked(s.heading), body: s.body }));

    it('has one section per exported table, in the order of EXPORT_TABLES, and none for another', () => {
      expect(EXPORT_TABLES.length).toBeGreaterThan(10);
      expect(tableSections().map((s) => s.name)).toEqual(EXPORT_TABLES.map((t) => t.name));
    });

    it('names the key of every table', () => {
      const bodies = new Map(tableSections().map((s) => [s.name, s.body]));
      for (const table of EXPORT_TABLES) {
        const line = /^Key: (.+)$/m.exec(bodies.get(table.name) ?? '')?.[1] ?? '';
        expect(ticked(line), `${table.name}: its key`).toEqual(table.key);
      }
    });

    it('has a row for every column of every table, in contract order, with its type and whether it can be null', () => {
      const bodies = new Map(tableSections().map((s) => [s.name, s.body]));
      for (const table of EXPORT_TABLES) {
        const rows = tableWith(bodies.get(table.name) ?? '', COLUMN_HEADER, table.name);
        expect(
          rows.map((r) => unticked(r[0] ?? '')),
          `${table.name}: the columns documented`,
        ).toEqual(table.columns.map((c) => c.name));
        for (const [i, column] of table.columns.entries()) {
          const row = rows[i] ?? [];
          const where = `${table.name}.${column.name}`;
          expect(unticked(row[1] ?? ''), `${where}: type`).toBe(column.type);
          expect(row[2], `${where}: null`).toBe(column.nullable ? 'yes' : 'no');
          expect(row[3] ?? '', `${where}: description`).not.toBe('');
        }
      }
    });

    it('states the schema version the code writes', () => {
      const stated = [...doc.matchAll(/schema version is `(\d+)`/gi)].map((m) => Number(m[1]));
      expect(stated.length, 'a sentence "schema version is `N`"').toBeGreaterThan(0);
      for (const n of stated) expect(n).toBe(SCHEMA_VERSION);
      // The example manifest too.
      for (const m of doc.matchAll(/"schema_version": (\d+)/g)) expect(Number(m[1])).toBe(SCHEMA_VERSION);
    });
  });

  it('gives every logical type the contract uses, with the DuckDB type of its Parquet column', () => {
    const rows = tableWith(section('Types'), ['type', 'Parquet (DuckDB type)', 'NDJSON', 'CSV'], 'Types');
    const used = new Set(EXPORT_TABLES.flatMap((t) => t.columns.map((c) => c.type)));
    expect(new Set(rows.map((r) => unticked(r[0] ?? '')))).toEqual(used);
    for (const row of rows) {
      const type = unticked(row[0] ?? '') as Parameters<typeof duckType>[0];
      expect(ticked(row[1] ?? '')[0], `${type}: Parquet`).toBe(duckType(type));
      expect(row[2] ?? '', `${type}: NDJSON`).not.toBe('');
      expect(row[3] ?? '', `${type}: CSV`).not.toBe('');
    }
  });

  it('documents every option of daybook export, and no other', () => {
    const declared = exportCommand().options.map((o) => o.long);
    expect(declared).toContain('--replay');
    const rows = tableWith(section('Exporting'), ['option', 'meaning'], 'Exporting');
    const documented = rows.flatMap((r) => ticked(r[0] ?? '').map((o) => o.split(' ')[0]));
    expect(new Set(documented)).toEqual(new Set(declared));
    // The synopsis names them all too.
    const synopsis = /^daybook export .*$/m.exec(doc)?.[0] ?? '';
    for (const option of declared) expect(synopsis, `the synopsis names ${option}`).toContain(`${option}`);
  });
});

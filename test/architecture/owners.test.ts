/**
 * One owner per table: every table daybook writes is written by exactly one module, the one
 * docs/architecture.md names in its "One owner per table" section (no database needed).
 *
 * Every `.ts` file of src/ and jobs/ is read (not src/sim/, the simulator, which keeps its own
 * state in memory), and every SQL write is found in its string literals and template literals
 * (postgres.js tagged SQL, `sql.unsafe` strings, fragments): INSERT INTO, UPDATE … SET,
 * DELETE FROM, TRUNCATE, COPY … FROM and MERGE INTO, at the start of a statement, with quoted and
 * schema-qualified names. SQL comments and quoted SQL strings are skipped; `ON CONFLICT … DO UPDATE`,
 * `FOR UPDATE`, a hash's `.update(…)` and English text are not writes. A table named through a
 * placeholder is resolved when it is a string constant of the file (a table list joined into a
 * TRUNCATE, `sql('name')`); rows written with the bulk helper `insertRows(sql, 'table', …)` count as
 * the caller's. Drizzle's own bookkeeping (the `drizzle` schema of src/db/migrate.ts) is left out.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sections, tableWith, ticked, unticked } from '../support/markdown.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = 'docs/architecture.md';

type WriteKind = 'insert' | 'update' | 'delete' | 'truncate' | 'copy' | 'merge';
interface SqlWrite {
  table: string | null;
  kind: WriteKind;
  line: number;
}

/** Marks a template placeholder in the text handed to the SQL reader: HOLE, its index, HOLE. */
const HOLE = '\u0001';

/**
 * The SQL tokens of `text`: words lower-cased, `"quoted"` identifiers kept as written, every SQL
 * string (`'…'`, `$tag$…$tag$`) as `''`, comments dropped, placeholders as `HOLE n HOLE`.
 */
function sqlTokens(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (/\s/.test(c)) i++;
    else if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else if (c === "'") {
      let j = i + 1;
      for (;;) {
        const k = text.indexOf("'", j);
        if (k < 0) {
          j = text.length;
          break;
        }
        if (text[k + 1] === "'") j = k + 2;
        else {
          j = k + 1;
          break;
        }
      }
      out.push("''");
      i = j;
    } else if (c === '"') {
      let j = i + 1;
      let name = '';
      for (;;) {
        const k = text.indexOf('"', j);
        if (k < 0) {
          name += text.slice(j);
          j = text.length;
          break;
        }
        name += text.slice(j, k);
        if (text[k + 1] === '"') {
          name += '"';
          j = k + 2;
        } else {
          j = k + 1;
          break;
        }
      }
      out.push(`"${name}"`);
      i = j;
    } else if (c === '$') {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i))?.[0];
      if (tag) {
        const end = text.indexOf(tag, i + tag.length);
        i = end < 0 ? text.length : end + tag.length;
        out.push("''");
      } else {
        const param = /^\$\d*/.exec(text.slice(i))?.[0] ?? '$';
        out.push(param);
        i += param.length;
      }
    } else if (c === HOLE) {
      const end = text.indexOf(HOLE, i + 1);
      const stop = end < 0 ? text.length : end + 1;
      out.push(text.slice(i, stop));
      i = stop;
    } else if (/[A-Za-z_]/.test(c)) {
      const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(text.slice(i))?.[0] as string;
      out.push(word.toLowerCase());
      i += word.length;
    } else if (/[0-9]/.test(c)) {
      const number = /^[0-9][0-9.]*/.exec(text.slice(i))?.[0] as string;
      out.push(number);
      i += number.length;
    } else {
      out.push(c);
      i++;
    }
  }
  return out;
}

const isHole = (token: string | undefined) => token?.startsWith(HOLE) === true;
const isWord = (token: string | undefined) => token !== undefined && /^[a-z_][a-z0-9_$]*$/.test(token);
const isName = (token: string | undefined) => isWord(token) || (token?.startsWith('"') ?? false);
const nameOf = (token: string) => (token.startsWith('"') ? token.slice(1, -1) : token);

/** What may stand before the first word of a statement: nothing, `(` (a CTE, a subquery), `;`, `)`, a placeholder. */
function startsStatement(tokens: string[], at: number): boolean {
  const before = tokens[at - 1];
  return before === undefined || before === '(' || before === ';' || before === ')' || isHole(before);
}

/** A table reference at `at`: `name`, `"name"`, `schema.name`, or a placeholder. */
type TableRef = { kind: 'name'; schema: string | null; name: string } | { kind: 'hole'; index: number };
function tableAt(tokens: string[], at: number): { ref: TableRef; next: number } | null {
  const first = tokens[at];
  if (first === undefined) return null;
  if (isHole(first)) return { ref: { kind: 'hole', index: Number(first.slice(1, -1)) }, next: at + 1 };
  if (!isName(first)) return null;
  if (tokens[at + 1] === '.' && isName(tokens[at + 2]))
    return {
      ref: { kind: 'name', schema: nameOf(first), name: nameOf(tokens[at + 2] as string) },
      next: at + 3,
    };
  return { ref: { kind: 'name', schema: null, name: nameOf(first) }, next: at + 1 };
}

/** Words that cannot be a table's alias (they follow the table in a statement). */
const CLAUSES = new Set(['set', 'where', 'using', 'returning', 'from', 'values', 'select', 'default', 'on']);

/**
 * The writes of one SQL text (its placeholders as `HOLE n HOLE`), each with the table reference it
 * names. The grammar is checked, so English ("update the watchlist") and row locks are not writes.
 */
function sqlWriteRefs(text: string): { kind: WriteKind; ref: TableRef }[] {
  const tokens = sqlTokens(text);
  const found: { kind: WriteKind; ref: TableRef }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i];
    if (!startsStatement(tokens, i)) continue;
    if (word === 'insert' && tokens[i + 1] === 'into') {
      const t = tableAt(tokens, i + 2);
      const after = t ? tokens[t.next] : undefined;
      if (
        t &&
        (after === '(' ||
          isHole(after) ||
          ['values', 'select', 'default', 'as', 'overriding', 'with'].includes(after ?? ''))
      )
        found.push({ kind: 'insert', ref: t.ref });
    } else if (word === 'update') {
      const start = tokens[i + 1] === 'only' ? i + 2 : i + 1;
      const t = tableAt(tokens, start);
      if (!t || (t.ref.kind === 'name' && CLAUSES.has(t.ref.name))) continue;
      let j = t.next;
      if (tokens[j] === 'as') j++;
      if (isWord(tokens[j]) && !CLAUSES.has(tokens[j] as string)) j++;
      // SET then `column =`, `(columns) =` or a placeholder (`set ${sql(row)}`).
      const assigned = tokens[j + 1];
      if (
        tokens[j] === 'set' &&
        (assigned === '(' || isHole(assigned) || (isName(assigned) && tokens[j + 2] === '='))
      )
        found.push({ kind: 'update', ref: t.ref });
    } else if (word === 'delete' && tokens[i + 1] === 'from') {
      const start = tokens[i + 2] === 'only' ? i + 3 : i + 2;
      const t = tableAt(tokens, start);
      if (!t) continue;
      let j = t.next;
      if (tokens[j] === 'as') j++;
      if (isWord(tokens[j]) && !CLAUSES.has(tokens[j] as string)) j++;
      const after = tokens[j];
      // The end of the text only right after the table: `delete from runs`, not "delete from the list".
      if (
        (after === undefined && j === t.next) ||
        after === ';' ||
        after === ')' ||
        isHole(after) ||
        ['where', 'using', 'returning'].includes(after ?? '')
      )
        found.push({ kind: 'delete', ref: t.ref });
    } else if (word === 'truncate') {
      let j = i + 1;
      if (tokens[j] === 'table') j++;
      for (;;) {
        if (tokens[j] === 'only') j++;
        const t = tableAt(tokens, j);
        if (!t) break;
        found.push({ kind: 'truncate', ref: t.ref });
        j = t.next;
        if (tokens[j] === '*') j++;
        if (tokens[j] !== ',') break;
        j++;
      }
    } else if (word === 'copy') {
      const t = tableAt(tokens, i + 1);
      if (!t) continue;
      let j = t.next;
      if (tokens[j] === '(') while (j < tokens.length && tokens[j] !== ')') j++;
      if (tokens[j] === ')') j++;
      if (tokens[j] === 'from') found.push({ kind: 'copy', ref: t.ref });
    } else if (word === 'merge' && tokens[i + 1] === 'into') {
      const t = tableAt(tokens, i + 2);
      if (t) found.push({ kind: 'merge', ref: t.ref });
    }
  }
  return found;
}

/**
 * Helpers that write a table their caller names, and the argument naming it (a table name, or an
 * object whose `table` is one): their writes count as their callers', and a write through a
 * placeholder the reader cannot name is allowed only in the file that defines one of them.
 */
const TABLE_HELPERS: Record<string, number> = {
  insertRows: 1,
  insertChildRows: 1,
  writeVersions: 1,
  truncateTables: 1,
  deleteSuperseded: 1,
};

/**
 * The string constants of a file: `const NAME = 'text'`, `const NAME = ['a', 'b'] (as const)`, and
 * `const NAME = { table: 'text', … }`.
 */
function constantsOf(source: ts.SourceFile): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const names = literalNames(node.initializer);
      if (names) out.set(node.name.text, names);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The names a literal expression stands for: 'x', ['x', 'y'], { table: 'x' }. */
function literalNames(e: ts.Expression): string[] | null {
  if (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e))
    return literalNames(e.expression);
  if (ts.isStringLiteralLike(e)) return [e.text];
  if (ts.isArrayLiteralExpression(e) && e.elements.every((x) => ts.isStringLiteralLike(x)))
    return e.elements.map((x) => (x as ts.StringLiteralLike).text);
  if (ts.isObjectLiteralExpression(e)) {
    const table = e.properties.find(
      (p): p is ts.PropertyAssignment =>
        ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'table',
    );
    return table && ts.isStringLiteralLike(table.initializer) ? [table.initializer.text] : null;
  }
  return null;
}

/** The table names an expression stands for, when it is a string constant: 'x', X, X.join(…), sql(X). */
function namesOf(e: ts.Expression, constants: Map<string, string[]>): string[] | null {
  const literal = literalNames(e);
  if (literal) return literal;
  if (ts.isIdentifier(e)) return constants.get(e.text) ?? null;
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) return namesOf(e.expression, constants);
  if (ts.isCallExpression(e)) {
    const callee = e.expression;
    if (ts.isPropertyAccessExpression(callee) && callee.name.text === 'join')
      return namesOf(callee.expression, constants);
    if (e.arguments.length === 1) return namesOf(e.arguments[0] as ts.Expression, constants);
  }
  return null;
}

/** The name a call calls: `f(…)` and `x.f(…)` both call f. */
function calleeName(call: ts.CallExpression): string {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return '';
}

/** One SQL text of a source: a string or template literal, its placeholders as `HOLE n HOLE`. */
interface SqlText {
  node: ts.Node;
  text: string;
  holes: readonly ts.Expression[];
}

/** The SQL texts of one parsed source, and the calls of a TABLE_HELPERS helper. */
function sqlTextsOf(source: ts.SourceFile): { texts: SqlText[]; helperCalls: ts.CallExpression[] } {
  const texts: SqlText[] = [];
  const helperCalls: ts.CallExpression[] = [];
  // A `from:` property holds a FROM clause (the export's column contract): read as one.
  const clause = (node: ts.Node) =>
    ts.isPropertyAssignment(node.parent) &&
    node.parent.initializer === node &&
    node.parent.name.getText(source) === 'from'
      ? 'select * from '
      : '';
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
      texts.push({ node, text: clause(node) + node.text, holes: [] });
    else if (ts.isTemplateExpression(node)) {
      let text = clause(node) + node.head.text;
      node.templateSpans.forEach((span, index) => {
        text += ` ${HOLE}${index}${HOLE} ${span.literal.text}`;
      });
      texts.push({ node, text, holes: node.templateSpans.map((s) => s.expression) });
    } else if (ts.isCallExpression(node) && TABLE_HELPERS[calleeName(node)] !== undefined)
      helperCalls.push(node);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { texts, helperCalls };
}

/** The line of a node, from 1. */
const lineOf = (source: ts.SourceFile, node: ts.Node) =>
  source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;

/**
 * Every SQL write of one TypeScript source (its file name only for the parser). `table` is null
 * for a write through a placeholder the reader cannot name (a table passed in as a parameter).
 */
function writesIn(fileName: string, text: string): SqlWrite[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const constants = constantsOf(source);
  const writes: (SqlWrite & { at: number })[] = [];
  const add = (node: ts.Node, kind: WriteKind, schema: string | null, name: string | null) => {
    if (schema === 'drizzle') return; // drizzle-kit's migration bookkeeping, not daybook's
    writes.push({ table: name, kind, line: lineOf(source, node), at: node.getStart(source) });
  };
  const { texts, helperCalls } = sqlTextsOf(source);
  for (const { node, text: sqlText, holes } of texts)
    for (const { kind, ref } of sqlWriteRefs(sqlText)) {
      if (ref.kind === 'name') add(node, kind, ref.schema, ref.name);
      else {
        const hole = holes[ref.index];
        const names = hole ? namesOf(hole, constants) : null;
        if (names === null) add(node, kind, null, null);
        else for (const name of names) add(node, kind, null, name);
      }
    }
  for (const call of helperCalls) {
    const table = call.arguments[TABLE_HELPERS[calleeName(call)] as number];
    if (!table) continue;
    const names = namesOf(table, constants);
    if (names === null) add(call, 'insert', null, null);
    else for (const name of names) add(call, 'insert', null, name);
  }
  // In the order of the source, helper calls among the literals.
  return writes.sort((a, b) => a.at - b.at).map(({ at: _, ...w }) => w);
}

/**
 * The tables one SQL text reads (its placeholders as `HOLE n HOLE`): every table reference after
 * FROM, JOIN or USING, and each of a FROM list (`from a x, b y`). A text that holds no SELECT,
 * UPDATE, DELETE or MERGE is not SQL (English "from the watchlist" is not a read).
 */
function sqlReadRefs(text: string): TableRef[] {
  const tokens = sqlTokens(text);
  if (!tokens.some((t) => t === 'select' || t === 'update' || t === 'delete' || t === 'merge')) return [];
  const found: TableRef[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i];
    if (word !== 'from' && word !== 'join' && word !== 'using') continue;
    if (tokens[i - 1] === 'distinct') continue; // `a is distinct from b` compares two values
    let j = i + 1;
    for (;;) {
      if (tokens[j] === 'only' || tokens[j] === 'lateral') j++;
      const t = tableAt(tokens, j);
      // A function (`from unnest(…)`, `from generate_series(…)`) is not a table.
      if (!t || tokens[t.next] === '(') break;
      found.push(t.ref);
      j = t.next;
      if (tokens[j] === '*') j++;
      if (tokens[j] === 'as') j++;
      if (isWord(tokens[j]) && !CLAUSES.has(tokens[j] as string) && tokens[j + 1] === ',') j++;
      if (tokens[j] !== ',' || word !== 'from') break;
      j++;
    }
  }
  return found;
}

interface SqlRead {
  table: string;
  line: number;
}

/**
 * Every table of the `public` schema one TypeScript source names in a read (schema-qualified
 * names of other schemas, the `analytics` and `console` views, are left out), placeholders
 * resolved when they are string constants of the file, the others left out.
 */
function readsIn(fileName: string, text: string): SqlRead[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const constants = constantsOf(source);
  const reads: SqlRead[] = [];
  for (const { node, text: sqlText, holes } of sqlTextsOf(source).texts)
    for (const ref of sqlReadRefs(sqlText)) {
      if (ref.kind === 'name') {
        if (ref.schema === null || ref.schema === 'public')
          reads.push({ table: ref.name, line: lineOf(source, node) });
      } else {
        const hole = holes[ref.index];
        for (const name of (hole ? namesOf(hole, constants) : null) ?? [])
          reads.push({ table: name, line: lineOf(source, node) });
      }
    }
  return reads;
}

/** Whether a source defines one of TABLE_HELPERS (its own writes name no table). */
function definesTableHelper(text: string): boolean {
  return Object.keys(TABLE_HELPERS).some((name) => new RegExp(`\\bfunction ${name}\\b`).test(text));
}

/** The `.ts` files of a folder of the repository, recursively, as repository paths. */
function sourcesUnder(folder: string): string[] {
  return (readdirSync(join(ROOT, folder), { recursive: true }) as string[])
    .map((f) => `${folder}/${String(f).split('\\').join('/')}`)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .sort();
}

interface CodeWrites {
  /** table → file → its writes of the table. */
  byTable: Map<string, Map<string, SqlWrite[]>>;
  /** Writes whose table the reader cannot name, outside the table helpers: `file:line`. */
  unnamed: string[];
}

/** Every write of src/ (not src/sim/) and jobs/, by table and file. */
function writesOfTheCode(): CodeWrites {
  const files = [...sourcesUnder('src'), ...sourcesUnder('jobs')].filter((f) => !f.startsWith('src/sim/'));
  const byTable = new Map<string, Map<string, SqlWrite[]>>();
  const unnamed: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const w of writesIn(file, text)) {
      if (w.table === null) {
        if (!definesTableHelper(text)) unnamed.push(`${file}:${w.line} (${w.kind})`);
        continue;
      }
      const byFile = byTable.get(w.table) ?? new Map<string, SqlWrite[]>();
      byTable.set(w.table, byFile);
      byFile.set(file, [...(byFile.get(file) ?? []), w]);
    }
  }
  return { byTable, unnamed };
}

/** The owner map of docs/architecture.md: table → the one file that writes it. */
function ownerMap(): { owners: Map<string, string>; duplicates: string[] } {
  const doc = readFileSync(join(ROOT, DOC), 'utf8');
  const found = sections(doc, 2).filter((s) => s.heading === 'One owner per table');
  expect(found, `${DOC}: one section "## One owner per table"`).toHaveLength(1);
  const rows = tableWith(found[0]?.body ?? '', ['table', 'owner'], `${DOC}, One owner per table`);
  const owners = new Map<string, string>();
  const duplicates: string[] = [];
  for (const row of rows) {
    const table = unticked(row[0] ?? '');
    const owner = unticked(row[1] ?? '').replace(/^\[([^\]]*)\]\([^)]*\)$/, '$1');
    if (owners.has(table)) duplicates.push(table);
    owners.set(table, unticked(owner));
  }
  return { owners, duplicates };
}

/** The reads of src/ (not src/sim/) and jobs/: `file`, `table` and line, for each table of the schema. */
function readsOfTheCode(schema: Set<string>): { file: string; table: string; line: number }[] {
  const files = [...sourcesUnder('src'), ...sourcesUnder('jobs')].filter((f) => !f.startsWith('src/sim/'));
  return files.flatMap((file) =>
    readsIn(file, readFileSync(join(ROOT, file), 'utf8'))
      .filter((r) => schema.has(r.table))
      .map((r) => ({ file, ...r })),
  );
}

/**
 * The tables the database writes itself (docs/architecture.md "Written by the database"): table →
 * the one file that reads them, their owner for reads.
 */
function databaseWritten(): Map<string, string> {
  const doc = readFileSync(join(ROOT, DOC), 'utf8');
  const found = sections(doc, 3).filter((s) => s.heading === 'Written by the database');
  expect(found, `${DOC}: one section "### Written by the database"`).toHaveLength(1);
  const rows = tableWith(
    found[0]?.body ?? '',
    ['table', 'read by', 'why'],
    `${DOC}, Written by the database`,
  );
  return new Map(rows.map((row) => [unticked(row[0] ?? ''), unticked(row[1] ?? '')]));
}

/** The `published` views of docs/architecture.md, by name (`published.x`; a row may name several): their owners. */
function publishedViews(): Map<string, string> {
  const doc = readFileSync(join(ROOT, DOC), 'utf8');
  const found = sections(doc, 3).filter((s) => s.heading === 'Reads outside the owner');
  const rows = tableWith(
    found[0]?.body ?? '',
    ['view', 'owner', 'read by', 'what'],
    `${DOC}, published views`,
  );
  return new Map(rows.flatMap((row) => ticked(row[0] ?? '').map((view) => [view, unticked(row[1] ?? '')])));
}

/** The views the migrations create in the `published` schema (and do not drop). */
function publishedViewsOfTheSchema(): Set<string> {
  const views = new Set<string>();
  const dir = join(ROOT, 'migrations');
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort())
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(
      /\b(create(?: or replace)?|drop) view (?:if (?:not )?exists )?"?published"?\."?([a-z_][a-z0-9_]*)"?/gi,
    )) {
      const name = `published.${m[2]?.toLowerCase()}`;
      if (m[1]?.toLowerCase().startsWith('drop')) views.delete(name);
      else views.add(name);
    }
  return views;
}

/** The folder that reads a table: its owner's (`src/history` for `src/history/enterprise-store.ts`). */
const folderOf = (file: string) => dirname(file);

/** The tables the migrations create (and do not drop). */
function tablesOfTheSchema(): Set<string> {
  const tables = new Set<string>();
  const dir = join(ROOT, 'migrations');
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()) {
    const text = readFileSync(join(dir, f), 'utf8');
    for (const m of text.matchAll(
      /\b(create|drop) table (?:if (?:not )?exists )?(?:"?public"?\.)?"?([a-z_][a-z0-9_]*)"?/gi,
    )) {
      if ((m[1] as string).toLowerCase() === 'create') tables.add(m[2] as string);
      else tables.delete(m[2] as string);
    }
  }
  return tables;
}

const where = (writes: SqlWrite[]) => writes.map((w) => `${w.kind}@${w.line}`).join(',');

describe('the SQL write reader', () => {
  // The sources below write a template's placeholders #{…}, read as ${…}.
  const tables = (text: string) =>
    writesIn('x.ts', text.replaceAll('#{', '$\u{7b}')).map((w) => `${w.kind} ${w.table ?? '?'}`);

  it('finds inserts, updates, deletes, truncates and copies, quoted or schema-qualified, and helper calls', () => {
    expect(
      tables(
        [
          'sql`insert into watchlist (keyword) values (#{k}) on conflict (keyword_key) do update set priority = excluded.priority`;',
          'tx`update cycle_fetches set status = #{s} where id = #{id}`;',
          'sql.unsafe(`delete from exports where id = $1`, [id]);',
          'sql.unsafe(\'INSERT INTO "public"."runs" (kind) VALUES ($1)\', [\'x\']);',
          'sql`UPDATE "enterprise_versions" AS v SET valid_to = u.t FROM u WHERE v.id = u.id`;',
          'sql`with gone as (delete from runs r where r.id = any(#{ids}) returning r.id) insert into run_summaries as s (n) select count(*) from gone`;',
          'sql`insert into products #{sql(rows)} on conflict (product_id) do nothing`;',
          "const T = ['a_table', 'b_table'] as const; tx.unsafe(`truncate #{T.join(', ')} restart identity`);",
          "sql`update #{sql('rate_limits')} set refusals = 0`;",
          "insertRows(sql, 'product_topics', rows);",
          "const V: VersionTable = { table: 'product_versions', keyColumn: 'product_id' }; await writeVersions(sql, V, stored, writes, columns);",
          'sql`insert into #{sql(table)} #{sql(rows)}`;',
          'await insertRows(sql, name, rows);',
          'sql`copy enterprises (pid) from stdin`;',
        ].join('\n'),
      ),
    ).toEqual([
      'insert watchlist',
      'update cycle_fetches',
      'delete exports',
      'insert runs',
      'update enterprise_versions',
      'delete runs',
      'insert run_summaries',
      'insert products',
      'truncate a_table',
      'truncate b_table',
      'update rate_limits',
      'insert product_topics',
      'insert product_versions',
      'insert ?',
      'insert ?',
      'copy enterprises',
    ]);
  });

  it('does not take locks, conflict updates, comments, hashes or English for writes', () => {
    expect(
      tables(
        [
          '// update watchlist set x = 1: a comment of the code',
          'sql`select * from cycle_fetches f -- delete from runs\n for update of f skip locked`;',
          'sql`select 1 /* insert into runs (a) values (1) */ for no key update`;',
          'sql`insert into format_drift as d (a) values (1) on conflict (a) do update set seen = d.seen + 1`;',
          "createHash('sha256').update(text, 'utf8').digest('hex');",
          "throw new Error('could not update the watchlist: delete from it first');",
          "log.info('Update the watchlist set by the user');",
          "const s = 'insert into watchlist: the keyword is there already';",
          "const t = 'Delete from the list the rows it names';",
          "const u = 'delete from the list';",
          "sql`select 'delete from runs' as text, $tag$update runs set a = 1$tag$ as body`;",
          'sql.unsafe(\'insert into "drizzle"."__drizzle_migrations" (hash) values ($1)\');',
          'sql`copy (select * from runs) to stdout`;',
        ].join('\n'),
      ),
    ).toEqual(['insert format_drift']);
  });
});

describe('one owner per table (docs/architecture.md)', () => {
  const { byTable: writes, unnamed } = writesOfTheCode();
  let map: ReturnType<typeof ownerMap> | undefined;
  // Read when a test needs it, so a missing document fails those tests, not the file.
  const mapped = () => {
    map ??= ownerMap();
    return map;
  };

  it('reads writes from the code', () => {
    // The reader finds the writes the pipeline cannot do without.
    for (const table of ['raw_responses', 'watchlist', 'events', 'enterprise_versions'])
      expect(writes.has(table), `a write of ${table}`).toBe(true);
  });

  it("names the table of every write (outside the helpers that write their caller's table)", () => {
    expect(unnamed, 'writes to a table the reader cannot name').toEqual([]);
  });

  it('names each table once, and only tables of the schema', () => {
    const { owners, duplicates } = mapped();
    const schema = tablesOfTheSchema();
    expect(duplicates, 'tables named twice').toEqual([]);
    expect(
      [...owners.keys()].filter((t) => !schema.has(t)),
      'tables of the map no migration creates',
    ).toEqual([]);
  });

  it('has an owner for every table the code writes', () => {
    const { owners } = mapped();
    const missing = [...writes.entries()]
      .filter(([table]) => !owners.has(table))
      .map(([table, byFile]) => `${table} (written by ${[...byFile.keys()].join(', ')})`)
      .sort();
    expect(missing, `tables written in src/ or jobs/ with no row in ${DOC}`).toEqual([]);
  });

  it('has each table written by its owner only', () => {
    const { owners } = mapped();
    const outside: string[] = [];
    for (const [table, byFile] of writes) {
      const owner = owners.get(table);
      if (owner === undefined) continue; // reported above
      for (const [file, list] of byFile)
        if (file !== owner) outside.push(`${table}: ${file} (${where(list)}), owner ${owner}`);
    }
    expect(outside.sort(), 'tables written outside their owner').toEqual([]);
  });

  it('has each owner write its table', () => {
    const { owners } = mapped();
    const idle = [...owners.entries()]
      .filter(([table, owner]) => !writes.get(table)?.has(owner))
      .map(([table, owner]) => `${table}: ${owner}`)
      .sort();
    expect(idle, `owners in ${DOC} that do not write their table`).toEqual([]);
  });
});

describe('the SQL read reader', () => {
  const tables = (text: string) => readsIn('x.ts', text.replaceAll('#{', '$\u{7b}')).map((r) => r.table);

  it('finds tables after FROM, JOIN and USING, in FROM lists, quoted, schema-qualified or constant', () => {
    expect(
      tables(
        [
          'sql`select * from watchlist w join cycle_fetches f on f.watch_id = w.id`;',
          'sql`select count(*) from runs r, run_summaries s where r.id = s.id`;',
          'sql.unsafe(\'SELECT 1 FROM "public"."events" LEFT JOIN "exports" e ON true\');',
          'tx`delete from exports e using subscriptions s where e.id = s.id`;',
          'tx`update rate_limits r set refusals = 0 from cycle_budgets b where b.cycle = r.cycle`;',
          "const T = 'products'; sql`select * from #{sql(T)}`;",
          'sql`with x as (select id from only enterprises) select * from x`;',
        ].join('\n'),
      ),
    ).toEqual([
      'watchlist',
      'cycle_fetches',
      'runs',
      'run_summaries',
      'events',
      'exports',
      'exports',
      'subscriptions',
      'cycle_budgets',
      'products',
      'enterprises',
      'x',
    ]);
  });

  it('leaves out views, functions, placeholders it cannot name, casts of dates and English', () => {
    expect(
      tables(
        [
          'sql`select * from analytics.enterprise_current c join console.runs r on true`;',
          'sql`select * from unnest(#{ids}::text[]) as u(id), generate_series(1, 3) g`;',
          'sql`select extract(epoch from now() - started_at) from #{sql(table)}`;',
          "log.info('removed from watchlist');",
          "sql`select 'from runs' as text, x is distinct from y from t`;",
        ].join('\n'),
      ),
    ).toEqual(['t']);
  });
});

describe('reads by the owner only (docs/architecture.md)', () => {
  const schema = tablesOfTheSchema();
  const reads = readsOfTheCode(schema);

  it('reads reads from the code', () => {
    for (const table of ['watchlist', 'cycle_fetches', 'events', 'enterprise_versions'])
      expect(
        reads.some((r) => r.table === table),
        `a read of ${table}`,
      ).toBe(true);
  });

  it("has each table named in SQL only in its owner's folder", () => {
    const owners = new Map([...ownerMap().owners, ...databaseWritten()]);
    const outside = reads
      .filter((r) => {
        const owner = owners.get(r.table);
        return owner === undefined || folderOf(owner) !== folderOf(r.file);
      })
      .map((r) => `${r.file}:${r.line} ${r.table}, owner ${owners.get(r.table) ?? 'none'}`);
    expect([...new Set(outside)].sort(), 'tables read outside their owner').toEqual([]);
  });

  it('names tables the database writes that no code writes, each read where it says', () => {
    const written = databaseWritten();
    expect([...written.keys()].sort()).toEqual([
      'ledger_subjects',
      'metric_counts',
      'raw_params',
      'sql_reader',
    ]);
    const { owners } = ownerMap();
    for (const [table, reader] of written) {
      expect(owners.has(table), `${table} has an owner in code too`).toBe(false);
      if (reader === '—') {
        expect(
          reads.filter((r) => r.table === table).map((r) => r.file),
          `${table} is read by no code`,
        ).toEqual([]);
        continue;
      }
      expect(
        reads.some((r) => r.table === table && r.file === reader),
        `${reader} reads ${table}`,
      ).toBe(true);
    }
  });

  it('lists the published views the migrations create, each with an owner that exists', () => {
    const listed = publishedViews();
    expect([...listed.keys()].sort()).toEqual([...publishedViewsOfTheSchema()].sort());
    const sources = new Set(sourcesUnder('src'));
    for (const owner of listed.values()) expect(sources.has(owner), `${owner} is a file of src/`).toBe(true);
  });
});

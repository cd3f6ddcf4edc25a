/**
 * Reads a watchlist CSV: a header with a name column (`name`, `keyword`, `ent_name`, 企业名称 or
 * 名称, any case), an optional `priority` column, an optional `uscc` column (the unified
 * social credit code the name must resolve to, checked by src/watch/uscc.ts; an empty cell is
 * none), an optional `with_shareholders` column (levels of shareholders, 0 to 3) and an optional
 * `direct` column (false: watched only as another entry's shareholder, as `watch list --csv`
 * writes it; such a row is not an entry of its own). Any other column is ignored and said so: a warning naming it, with the known name it is
 * closest to (`prioirty`: did you mean `priority`?), as is a column the header leaves unnamed that
 * holds values. csv-parse reads the CSV (RFC 4180: quotes, doubled quotes, commas and line breaks
 * inside quotes; CRLF, LF or CR; spaces around a quoted field); this module skips a UTF-8 BOM,
 * blank lines and lines of bare commas, and goes on reading after a row it cannot parse. Every
 * problem of every row is reported, each with the physical line (1-based, the header is line 1)
 * its row starts on and the column it is in. Pure.
 */
import { CsvError, parse } from 'csv-parse/sync';
import { InvalidRequestError } from '../upstream/errors.ts';
import { checkEntName } from '../upstream/params.ts';
import { keywordKey } from './keyword.ts';
import { normalizeUscc, usccProblem } from './uscc.ts';

export interface CsvEntry {
  line: number;
  keyword: string;
  priority: number;
  /** The expected code, valid and normalized; null when the row gives none. */
  uscc: string | null;
  /** Levels of its enterprise shareholders to watch with it (0 to 3); null when the row gives none. */
  shareholders: number | null;
  /**
   * False for a row a `direct` column marks as watched only as a shareholder of another entry
   * (`watch list --csv`): it is not imported as an entry of its own; its holder's sync watches it.
   */
  direct: boolean;
}

export interface CsvProblem {
  line: number;
  message: string;
}

/** A column daybook does not read: named in a warning, refused by `watch import --strict`. */
export interface IgnoredColumn {
  /** The header line, or for a column the header leaves unnamed the line of its first value. */
  line: number;
  /** 1-based position in the header. */
  position: number;
  /** The header's text for it; '' when the header leaves it unnamed. */
  name: string;
  /** The known column name closest to it, when one is close enough to be a misspelling. */
  suggestion: string | null;
  /** How messages call it: `column "prioirty"`, or `column 4` when unnamed. */
  label: string;
  /** Why it is not read: `daybook reads no column of that name; did you mean "priority"?`. */
  why: string;
  /** A column `watch list --csv` writes for reading (LISTED_COLUMNS), not a misspelling. */
  listed: boolean;
}

export interface ParsedWatchlist {
  entries: CsvEntry[];
  /** Every problem, in line order, then column order within a line. */
  errors: CsvProblem[];
  /** Rows with at least one problem (a row may have several). */
  invalidRows: number;
  ignored: IgnoredColumn[];
}

export const NAME_COLUMNS: readonly string[] = ['name', 'keyword', 'ent_name', '企业名称', '名称'];
export const PRIORITY_COLUMNS: readonly string[] = ['priority', '优先级'];
export const USCC_COLUMNS: readonly string[] = [
  'uscc',
  'uncid',
  'credit_code',
  'expected_uscc',
  '统一社会信用代码',
];
export const SHAREHOLDER_COLUMNS: readonly string[] = [
  'with_shareholders',
  'shareholders',
  'shareholder_depth',
  '股东层级',
];
/** Whether the row is the user's own entry (`watch list --csv` writes it): true, false or empty. */
export const DIRECT_COLUMNS: readonly string[] = ['direct', '直接关注'];
export const KNOWN_COLUMNS: readonly string[] = [
  ...NAME_COLUMNS,
  ...PRIORITY_COLUMNS,
  ...USCC_COLUMNS,
  ...SHAREHOLDER_COLUMNS,
  ...DIRECT_COLUMNS,
];
/**
 * The columns `watch list --csv` writes: the keys of its `--json`, in this order. Those an import
 * does not read are said in one line, not one warning each: a list imports back.
 */
export const LISTED_COLUMNS = [
  'id',
  'keyword',
  'priority',
  'active',
  'pid',
  'added_at',
  'last_refreshed_at',
  'last_cycle',
  'last_outcome',
  'last_error',
  'expected_uscc',
  'pin_uscc',
  'resolved_name',
  'resolved_uscc',
  'match',
  'resolution_mismatch',
  'changes_per_month',
  'due_at',
  'direct',
  'shareholder_depth',
  'watched_through',
] as const;

const YES = ['true', 'yes', 'y', '1', '是'];
const NO = ['false', 'no', 'n', '0', '否'];
export const PRIORITY_MIN = -1000;
export const PRIORITY_MAX = 1000;
/**
 * The plan priority of an entry watched only as a shareholder of a watched company
 * (src/watch/related.ts): below any a user can give, so it is planned after every entry of theirs.
 */
export const RELATED_PRIORITY = PRIORITY_MIN - 1;

interface CsvRecord {
  line: number;
  fields: string[];
  /** Whether any field was quoted: `""` is an empty name written on purpose, not a blank line. */
  quoted: boolean;
  error?: string;
}

/** csv-parse's errors in this module's words (the opening line of an unclosed quote is added). */
const PARSE_ERRORS: Partial<Record<CsvError['code'], string>> = {
  INVALID_OPENING_QUOTE:
    'a stray quote inside an unquoted field (quote the whole field and double the quote)',
  CSV_INVALID_CLOSING_QUOTE:
    'a stray character after a closing quote (write a quote inside a quoted field as "")',
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE:
    'a stray character after a closing quote (write a quote inside a quoted field as "")',
};

/** The physical line (1-based) of each byte offset: CRLF, LF and a lone CR each end a line. */
function lineNumbers(bytes: Buffer): (offset: number) => number {
  const breaks: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x0d || (b === 0x0a && bytes[i - 1] !== 0x0d)) breaks.push(i);
  }
  return (offset) => {
    let lo = 0;
    let hi = breaks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((breaks[mid] as number) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}

/** The offset just past the first line break at or after `from`; null when there is none. */
function nextLineStart(bytes: Buffer, from: number): number | null {
  for (let i = from; i < bytes.length; i++) {
    if (bytes[i] === 0x0a) return i + 1;
    if (bytes[i] === 0x0d) return bytes[i + 1] === 0x0a ? i + 2 : i + 1;
  }
  return null;
}

/**
 * Where, in the raw text of a record whose quote csv-parse found never closed, that quote opened:
 * the last quote opening a field (outside quotes, after a comma, spaces or the record's start).
 */
function unclosedQuoteAt(raw: string): number {
  let open = 0;
  let quoting = false;
  let fieldStart = true;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (quoting) {
      if (ch === '"' && raw[i + 1] === '"') i++;
      else if (ch === '"') quoting = false;
    } else if (ch === '"' && fieldStart) {
      quoting = true;
      open = i;
    } else if (ch === ',') fieldStart = true;
    else if (ch !== ' ' && ch !== '\t') fieldStart = false;
  }
  return open;
}

/**
 * Splits CSV text into records with csv-parse, each with the physical line it starts on. A record
 * csv-parse cannot read is kept as an error, and reading starts again on the next line (csv-parse
 * itself would read on in the wrong quoting state); an unclosed quote runs to the end of the text.
 */
function readRecords(text: string): CsvRecord[] {
  const bytes = Buffer.from(text, 'utf8');
  const lineOf = lineNumbers(bytes);
  const out: CsvRecord[] = [];
  let from: number | null = 0;
  while (from !== null && from < bytes.length) {
    const base: number = from;
    let recordStart = base;
    try {
      parse(bytes.subarray(base), {
        relax_column_count: true,
        trim: true,
        raw: true,
        record_delimiter: ['\r\n', '\n', '\r'],
        // With `raw`, csv-parse hands each record over as { record, raw }. A record that parsed
        // and holds a quote had a quoted field (a stray quote is an error).
        on_record: (withRaw, context) => {
          const { record, raw } = withRaw as unknown as { record: string[]; raw: string };
          out.push({ line: lineOf(recordStart), fields: record, quoted: raw.includes('"') });
          recordStart = base + context.bytes;
          return null;
        },
      });
      from = null;
    } catch (err) {
      if (!(err instanceof CsvError)) throw err;
      const e = err;
      const raw = typeof e.raw === 'string' ? e.raw : '';
      const line = lineOf(recordStart);
      if (e.code === 'CSV_QUOTE_NOT_CLOSED') {
        const opened = lineOf(recordStart + Buffer.byteLength(raw.slice(0, unclosedQuoteAt(raw))));
        out.push({
          line,
          fields: [],
          quoted: true,
          error: `a quoted field opened on line ${opened} is never closed`,
        });
        from = null;
      } else {
        out.push({ line, fields: [], quoted: true, error: PARSE_ERRORS[e.code] ?? e.message });
        from = nextLineStart(bytes, recordStart + Buffer.byteLength(raw));
      }
    }
  }
  return out;
}

const isBlank = (r: CsvRecord) =>
  r.error === undefined && !r.quoted && r.fields.every((f) => f.trim() === '');

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and transpositions of
 * two neighbours (`prioirty` is one step from `priority`), counted in code points.
 */
export function editDistance(a: string, b: string): number {
  const s = Array.from(a);
  const t = Array.from(b);
  const d = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++) {
    const row = d[i] as number[];
    const up = d[i - 1] as number[];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let v = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  return (d[s.length] as number[])[t.length] as number;
}

/**
 * The known column name closest to `name` (any case), when it is close enough to be taken for a
 * misspelling: at most a third of its length away (one edit for short names, at most two).
 */
export function closestColumn(name: string, known: readonly string[] = KNOWN_COLUMNS): string | null {
  const word = name.trim().toLowerCase();
  const allowed = Math.min(2, Math.max(1, Math.floor(Array.from(word).length / 3)));
  let best: string | null = null;
  let bestDistance = allowed + 1;
  for (const k of known) {
    const d = editDistance(word, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** The header's columns: where each known column is, and the columns ignored; or the problem. */
interface Columns {
  name: number;
  priority: number | undefined;
  uscc: number | undefined;
  shareholders: number | undefined;
  direct: number | undefined;
  /** How each read column is named in messages: the header's own spelling. */
  label: string[];
  /** Named columns daybook does not read (unnamed ones are found in the rows). */
  unknown: IgnoredColumn[];
}

function readHeader(header: CsvRecord): Columns | string {
  const written = header.fields.map((f) => f.trim());
  const names = written.map((f) => f.toLowerCase());
  const at = (known: readonly string[]) => names.flatMap((n, i) => (known.includes(n) ? [i] : []));
  const nameCols = at(NAME_COLUMNS);
  const priorityCols = at(PRIORITY_COLUMNS);
  const usccCols = at(USCC_COLUMNS);
  const shareholderCols = at(SHAREHOLDER_COLUMNS);
  const directCols = at(DIRECT_COLUMNS);
  const unknown: IgnoredColumn[] = names.flatMap((n, i) => {
    if (n === '' || KNOWN_COLUMNS.includes(n)) return [];
    const suggestion = closestColumn(n);
    const name = written[i] as string;
    return [
      {
        line: header.line,
        position: i + 1,
        name,
        suggestion,
        label: `column ${JSON.stringify(name)}`,
        listed: (LISTED_COLUMNS as readonly string[]).includes(n),
        why: `daybook reads no column of that name${suggestion === null ? '' : `; did you mean ${JSON.stringify(suggestion)}?`}`,
      },
    ];
  });
  if (nameCols.length === 0) {
    const near = unknown.filter((u) => u.suggestion !== null && NAME_COLUMNS.includes(u.suggestion));
    const hint = near.map(
      (u) => `; did you mean ${JSON.stringify(u.suggestion)} for ${JSON.stringify(u.name)}?`,
    );
    const separated =
      written.length === 1 && /[;\t|]/.test(written[0] as string)
        ? ` (the header is one column, ${JSON.stringify(written[0])}: daybook reads comma-separated files)`
        : '';
    return `no name column in the header (expected one of: ${NAME_COLUMNS.join(', ')})${hint.join('')}${separated}`;
  }
  if (nameCols.length > 1)
    return `the header has ${nameCols.length} name columns (${nameCols.map((i) => names[i]).join(', ')}): keep one`;
  if (priorityCols.length > 1) return 'the header has more than one priority column: keep one';
  if (usccCols.length > 1)
    return `the header has ${usccCols.length} code columns (${usccCols.map((i) => names[i]).join(', ')}): keep one`;
  if (shareholderCols.length > 1) return 'the header has more than one with_shareholders column: keep one';
  if (directCols.length > 1) return 'the header has more than one direct column: keep one';
  return {
    name: nameCols[0] as number,
    priority: priorityCols[0],
    uscc: usccCols[0],
    shareholders: shareholderCols[0],
    direct: directCols[0],
    label: written,
    unknown,
  };
}

/** Columns past the header's names, or under an empty header cell, that hold a value somewhere. */
function unnamedColumns(header: CsvRecord, rows: readonly CsvRecord[]): IgnoredColumn[] {
  const firstValue = new Map<number, number>();
  for (const r of rows) {
    if (r.error) continue;
    r.fields.forEach((f, i) => {
      if (f.trim() !== '' && (header.fields[i] ?? '').trim() === '' && !firstValue.has(i))
        firstValue.set(i, r.line);
    });
  }
  return [...firstValue.entries()]
    .sort(([a], [b]) => a - b)
    .map(([i, line]) => ({
      line,
      position: i + 1,
      name: '',
      suggestion: null,
      label: `column ${i + 1}`,
      why: 'the header gives it no name',
      listed: false,
    }));
}

/** The problems of one row, each naming its column, in the order of the columns. */
function checkRow(
  r: CsvRecord,
  cols: Columns,
  seen: Map<string, number>,
): { entry: CsvEntry | null; problems: string[] } {
  const problems: [number, string][] = [];
  const label = (i: number) => cols.label[i] as string;
  let keyword: string | null = null;
  try {
    keyword = checkEntName(r.fields[cols.name] ?? '');
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    problems.push([cols.name, err.message.replace(/^ent_name/, label(cols.name))]);
  }
  let priority = 0;
  if (cols.priority !== undefined) {
    const p = parsePriority(r.fields[cols.priority] ?? '');
    if (typeof p === 'string') problems.push([cols.priority, `${label(cols.priority)} ${p}`]);
    else priority = p;
  }
  let uscc: string | null = null;
  if (cols.uscc !== undefined) {
    const code = normalizeUscc(r.fields[cols.uscc] ?? '');
    const why = code === '' ? null : usccProblem(code);
    if (why !== null) {
      problems.push([
        cols.uscc,
        `${label(cols.uscc)} ${JSON.stringify(code)} is not a valid unified social credit code: ${why}`,
      ]);
    } else if (code !== '') uscc = code;
  }
  let shareholders: number | null = null;
  if (cols.shareholders !== undefined) {
    const text = (r.fields[cols.shareholders] ?? '').trim();
    if (/^[0-3]$/.test(text)) shareholders = Number(text);
    else if (text !== '')
      problems.push([
        cols.shareholders,
        `${label(cols.shareholders)} ${JSON.stringify(text)} is not a number of shareholder levels: give 0, 1, 2 or 3, or leave it empty`,
      ]);
  }
  let direct = true;
  if (cols.direct !== undefined) {
    const text = (r.fields[cols.direct] ?? '').trim().toLowerCase();
    if (NO.includes(text)) direct = false;
    else if (text !== '' && !YES.includes(text))
      problems.push([
        cols.direct,
        `${label(cols.direct)} ${JSON.stringify(text)} is not true or false: give true (the row is an entry of yours), false (watched only as a shareholder of another), or leave it empty`,
      ]);
  }
  if (keyword !== null) {
    const first = seen.get(keywordKey(keyword));
    if (first !== undefined) problems.push([cols.name, `"${keyword}" is a duplicate of line ${first}`]);
  }
  problems.sort(([a], [b]) => a - b);
  if (problems.length > 0 || keyword === null) return { entry: null, problems: problems.map(([, m]) => m) };
  // Only a valid row is one a later row can duplicate.
  seen.set(keywordKey(keyword), r.line);
  return { entry: { line: r.line, keyword, priority, uscc, shareholders, direct }, problems: [] };
}

/** Parses a watchlist CSV into valid entries, per-line problems and ignored columns; see the module comment. */
export function parseWatchlistCsv(input: string): ParsedWatchlist {
  const text = input.startsWith('\uFEFF') ? input.slice(1) : input;
  const rows = readRecords(text).filter((r) => !isBlank(r));
  const entries: CsvEntry[] = [];
  const errors: CsvProblem[] = [];
  const refused = (line: number, message: string): ParsedWatchlist => ({
    entries,
    errors: [{ line, message }],
    invalidRows: 0,
    ignored: [],
  });
  const header = rows.shift();
  if (!header) return refused(1, 'the file is empty: it needs a header row with a name column');
  if (header.error) return refused(header.line, `header: ${header.error}`);
  const cols = readHeader(header);
  if (typeof cols === 'string') return refused(header.line, cols);

  const seen = new Map<string, number>();
  let invalidRows = 0;
  for (const r of rows) {
    const { entry, problems } = r.error ? { entry: null, problems: [r.error] } : checkRow(r, cols, seen);
    if (entry) entries.push(entry);
    if (problems.length > 0) invalidRows++;
    for (const message of problems) errors.push({ line: r.line, message });
  }
  return { entries, errors, invalidRows, ignored: [...cols.unknown, ...unnamedColumns(header, rows)] };
}

/** An empty cell is the default 0; otherwise a whole number in range, or the problem. */
function parsePriority(raw: string): number | string {
  const text = raw.trim();
  if (text === '') return 0;
  const n = Number(text);
  if (!/^[-+]?\d+$/.test(text) || n < PRIORITY_MIN || n > PRIORITY_MAX) {
    return `"${text}" is not a whole number from ${PRIORITY_MIN} to ${PRIORITY_MAX}`;
  }
  return n + 0; // no -0
}

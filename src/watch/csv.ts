/**
 * Reads a watchlist CSV: a header with a name column (`name`, `keyword`, `ent_name`, 企业名称 or
 * 名称, any case), an optional `priority` column and an optional `uscc` column (the unified
 * social credit code the name must resolve to, checked by src/watch/uscc.ts; an empty cell is
 * none). Handles a UTF-8 BOM, CRLF or LF, RFC 4180
 * quoting (quotes, doubled quotes, commas and line breaks inside quotes), blank lines and
 * trailing commas. Every problem is reported with the physical line (1-based, the header is
 * line 1) its row starts on. Pure.
 */
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
}

export interface CsvProblem {
  line: number;
  message: string;
}

export const NAME_COLUMNS: readonly string[] = ['name', 'keyword', 'ent_name', '企业名称', '名称'];
export const PRIORITY_COLUMNS: readonly string[] = ['priority', '优先级'];
export const USCC_COLUMNS: readonly string[] = ['uscc', 'uncid', 'credit_code', '统一社会信用代码'];
export const PRIORITY_MIN = -1000;
export const PRIORITY_MAX = 1000;

interface CsvRecord {
  line: number;
  fields: string[];
  /** Whether any field was quoted: `""` is an empty name written on purpose, not a blank line. */
  quoted: boolean;
  error?: string;
}

/**
 * Splits CSV text into records, each with the physical line it starts on. A record with a
 * quoting problem keeps its fields (so reading goes on) and carries an error.
 */
function readRecords(text: string): CsvRecord[] {
  const out: CsvRecord[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const record: CsvRecord = { line, fields: [], quoted: false };
    const fail = (message: string) => {
      record.error ??= message;
    };
    let field = '';
    for (;;) {
      const ch = text[i];
      if (ch === undefined) {
        record.fields.push(field);
        break;
      }
      if (ch === ',') {
        record.fields.push(field);
        field = '';
        i++;
      } else if (ch === '\r' || ch === '\n') {
        record.fields.push(field);
        i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1;
        line++;
        break;
      } else if (ch === '"' && field.trim() === '') {
        // A quoted field: runs to the next lone quote, across commas and line breaks.
        const opened = line;
        record.quoted = true;
        field = '';
        i++;
        for (;;) {
          const q = text[i];
          if (q === undefined) {
            fail(`a quoted field opened on line ${opened} is never closed`);
            break;
          }
          if (q === '"' && text[i + 1] === '"') {
            field += '"';
            i += 2;
          } else if (q === '"') {
            i++;
            break;
          } else {
            if (q === '\n' || (q === '\r' && text[i + 1] !== '\n')) line++;
            field += q;
            i++;
          }
        }
        // Only spaces may sit between a closing quote and the next comma or line end.
        while (text[i] === ' ' || text[i] === '\t') i++;
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\r' && next !== '\n') {
          fail('a stray character after a closing quote (write a quote inside a quoted field as "")');
          while (text[i] !== undefined && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
            field += text[i];
            i++;
          }
        }
      } else {
        if (ch === '"')
          fail('a stray quote inside an unquoted field (quote the whole field and double the quote)');
        field += ch;
        i++;
      }
    }
    out.push(record);
  }
  return out;
}

const isBlank = (r: CsvRecord) =>
  r.error === undefined && !r.quoted && r.fields.every((f) => f.trim() === '');

/** Parses a watchlist CSV into valid entries and per-line problems; see the module comment. */
export function parseWatchlistCsv(input: string): { entries: CsvEntry[]; errors: CsvProblem[] } {
  const text = input.startsWith('\uFEFF') ? input.slice(1) : input;
  const rows = readRecords(text).filter((r) => !isBlank(r));
  const entries: CsvEntry[] = [];
  const errors: CsvProblem[] = [];
  const header = rows.shift();
  if (!header) {
    errors.push({ line: 1, message: 'the file is empty: it needs a header row with a name column' });
    return { entries, errors };
  }
  if (header.error) {
    errors.push({ line: header.line, message: `header: ${header.error}` });
    return { entries, errors };
  }
  const names = header.fields.map((f) => f.trim().toLowerCase());
  const nameCols = names.flatMap((n, i) => (NAME_COLUMNS.includes(n) ? [i] : []));
  const priorityCols = names.flatMap((n, i) => (PRIORITY_COLUMNS.includes(n) ? [i] : []));
  const usccCols = names.flatMap((n, i) => (USCC_COLUMNS.includes(n) ? [i] : []));
  const problem =
    nameCols.length === 0
      ? `no name column in the header (expected one of: ${NAME_COLUMNS.join(', ')})`
      : nameCols.length > 1
        ? `the header has ${nameCols.length} name columns (${nameCols.map((i) => names[i]).join(', ')}): keep one`
        : priorityCols.length > 1
          ? 'the header has more than one priority column: keep one'
          : usccCols.length > 1
            ? `the header has ${usccCols.length} code columns (${usccCols.map((i) => names[i]).join(', ')}): keep one`
            : undefined;
  if (problem) {
    errors.push({ line: header.line, message: problem });
    return { entries, errors };
  }
  const nameCol = nameCols[0] as number;
  const priorityCol = priorityCols[0];
  const usccCol = usccCols[0];

  const seen = new Map<string, number>();
  for (const r of rows) {
    if (r.error) {
      errors.push({ line: r.line, message: r.error });
      continue;
    }
    let keyword: string;
    try {
      keyword = checkEntName(r.fields[nameCol] ?? '');
    } catch (err) {
      if (!(err instanceof InvalidRequestError)) throw err;
      errors.push({ line: r.line, message: err.message.replace(/^ent_name/, 'name') });
      continue;
    }
    const priority = parsePriority(priorityCol === undefined ? '' : (r.fields[priorityCol] ?? ''));
    if (typeof priority === 'string') {
      errors.push({ line: r.line, message: priority });
      continue;
    }
    const uscc = usccCol === undefined ? '' : normalizeUscc(r.fields[usccCol] ?? '');
    const usccError = uscc === '' ? null : usccProblem(uscc);
    if (usccError !== null) {
      errors.push({
        line: r.line,
        message: `uscc ${JSON.stringify(uscc)} is not a valid unified social credit code: ${usccError}`,
      });
      continue;
    }
    const key = keywordKey(keyword);
    const first = seen.get(key);
    if (first !== undefined) {
      errors.push({ line: r.line, message: `"${keyword}" is a duplicate of line ${first}` });
      continue;
    }
    seen.set(key, r.line);
    entries.push({ line: r.line, keyword, priority, uscc: uscc === '' ? null : uscc });
  }
  return { entries, errors };
}

/** An empty cell is the default 0; otherwise a whole number in range, or the problem. */
function parsePriority(raw: string): number | string {
  const text = raw.trim();
  if (text === '') return 0;
  const n = Number(text);
  if (!/^[-+]?\d+$/.test(text) || n < PRIORITY_MIN || n > PRIORITY_MAX) {
    return `priority "${text}" is not a whole number from ${PRIORITY_MIN} to ${PRIORITY_MAX}`;
  }
  return n + 0; // no -0
}

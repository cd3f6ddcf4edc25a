/**
 * Reads a watchlist CSV: a header with a `name` column (also `keyword`, `ent_name`, 企业名称,
 * 名称) and an optional `priority` column. Handles a UTF-8 BOM, CRLF or LF, RFC 4180 quoting
 * (quotes, doubled quotes, commas and line breaks inside quotes), blank lines and trailing
 * commas. Every problem is reported with its physical line number; pure.
 */
import { InvalidRequestError } from '../upstream/errors.ts';
import { checkEntName } from '../upstream/params.ts';
import { keywordKey } from './keyword.ts';

export interface CsvEntry {
  line: number;
  keyword: string;
  priority: number;
}

export interface CsvProblem {
  line: number;
  message: string;
}

const NAME_COLUMNS = ['name', 'keyword', 'ent_name', '企业名称', '名称'];
export const PRIORITY_RANGE = [-1000, 1000] as const;

/** Splits CSV text into records, each with the physical line it starts on. */
function records(text: string): { line: number; fields: string[]; error?: string }[] {
  const out: { line: number; fields: string[]; error?: string }[] = [];
  let line = 1;
  let i = 0;
  while (i < text.length) {
    const start = line;
    const fields: string[] = [];
    let field = '';
    let quoted = false;
    let error: string | undefined;
    for (;;) {
      if (i >= text.length) {
        if (quoted) error = 'a quoted field is never closed';
        fields.push(field);
        break;
      }
      const ch = text[i] as string;
      if (quoted) {
        if (ch === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
          } else {
            quoted = false;
            i++;
            const next = text[i];
            if (next !== undefined && next !== ',' && next !== '\r' && next !== '\n') {
              error ??= 'a stray character after a closing quote';
            }
          }
        } else {
          if (ch === '\n') line++;
          field += ch;
          i++;
        }
        continue;
      }
      if (ch === '"' && field.trim() !== '') {
        // A quote in the middle of an unquoted field: keep it as text, report the row.
        error ??= 'a stray quote inside an unquoted field';
        field += ch;
        i++;
      } else if (ch === '"') {
        quoted = true;
        field = '';
        i++;
      } else if (ch === ',') {
        fields.push(field);
        field = '';
        i++;
      } else if (ch === '\r' || ch === '\n') {
        fields.push(field);
        i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1;
        line++;
        break;
      } else {
        field += ch;
        i++;
      }
    }
    out.push(error ? { line: start, fields, error } : { line: start, fields });
  }
  return out;
}

export function parseWatchlistCsv(input: string): { entries: CsvEntry[]; errors: CsvProblem[] } {
  const text = input.startsWith('\uFEFF') ? input.slice(1) : input;
  const rows = records(text).filter((r) => r.error !== undefined || r.fields.some((f) => f.trim() !== ''));
  const errors: CsvProblem[] = [];
  const entries: CsvEntry[] = [];
  const header = rows.shift();
  if (!header)
    return {
      entries,
      errors: [{ line: 1, message: 'the file is empty: it needs a header row with a name column' }],
    };
  if (header.error) errors.push({ line: header.line, message: header.error });
  const names = header.fields.map((f) => f.trim().toLowerCase());
  const nameCol = names.findIndex((n) => NAME_COLUMNS.includes(n));
  const priorityCol = names.indexOf('priority');
  if (nameCol < 0) {
    return {
      entries,
      errors: [
        {
          line: header.line,
          message: `no name column in the header (expected one of: ${NAME_COLUMNS.join(', ')})`,
        },
      ],
    };
  }
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
      errors.push({
        line: r.line,
        message: err instanceof InvalidRequestError ? err.message.replace(/^ent_name/, 'name') : String(err),
      });
      continue;
    }
    let priority = 0;
    const rawPriority = priorityCol >= 0 ? (r.fields[priorityCol] ?? '').trim() : '';
    if (rawPriority !== '') {
      if (
        !/^-?\d+$/.test(rawPriority) ||
        Number(rawPriority) < PRIORITY_RANGE[0] ||
        Number(rawPriority) > PRIORITY_RANGE[1]
      ) {
        errors.push({
          line: r.line,
          message: `priority "${rawPriority}" is not a whole number from ${PRIORITY_RANGE[0]} to ${PRIORITY_RANGE[1]}`,
        });
        continue;
      }
      priority = Number(rawPriority);
    }
    const key = keywordKey(keyword);
    const first = seen.get(key);
    if (first !== undefined) {
      errors.push({ line: r.line, message: `"${keyword}" is a duplicate of line ${first}` });
      continue;
    }
    seen.set(key, r.line);
    entries.push({ line: r.line, keyword, priority });
  }
  return { entries, errors };
}

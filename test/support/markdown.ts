/** Reading markdown in the documentation tests: sections, tables, cells, code spans. */
import { expect } from 'vitest';

/** The text without fenced code blocks (their lines become empty, so line numbers stay). */
export function withoutFences(md: string): string {
  let inFence = false;
  return md
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : line;
    })
    .join('\n');
}

/** Sections under the headings of one level: heading text and body (up to the next heading of that level or above). */
export function sections(md: string, level: number): { heading: string; body: string }[] {
  const marker = `${'#'.repeat(level)} `;
  const out: { heading: string; body: string }[] = [];
  let current: { heading: string; lines: string[] } | null = null;
  for (const line of withoutFences(md).split('\n')) {
    const depth = /^(#+) /.exec(line)?.[1]?.length ?? 0;
    if (line.startsWith(marker)) {
      if (current) out.push({ heading: current.heading, body: current.lines.join('\n') });
      current = { heading: line.slice(marker.length).trim(), lines: [] };
    } else if (depth > 0 && depth < level) {
      if (current) out.push({ heading: current.heading, body: current.lines.join('\n') });
      current = null;
    } else current?.lines.push(line);
  }
  if (current) out.push({ heading: current.heading, body: current.lines.join('\n') });
  return out;
}

/** The cells of one table line (`\|` is a pipe inside a cell). */
export function cells(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  const body = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch === '\\' && body[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (ch === '|') {
      out.push(cell.trim());
      cell = '';
    } else cell += ch;
  }
  out.push(cell.trim());
  return out;
}

/** Every table in `text`: its header cells and its rows of cells. */
export function tables(text: string): { header: string[]; rows: string[][] }[] {
  const out: { header: string[]; rows: string[][] }[] = [];
  const lines = text.split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    const head = lines[i] as string;
    const rule = lines[i + 1] as string;
    if (!head.trim().startsWith('|') || !/^\s*\|[\s:|-]+\|\s*$/.test(rule)) continue;
    const rows: string[][] = [];
    let j = i + 2;
    for (; j < lines.length && (lines[j] as string).trim().startsWith('|'); j++)
      rows.push(cells(lines[j] as string));
    out.push({ header: cells(head), rows });
    i = j - 1;
  }
  return out;
}

/** The table whose header starts with `columns`; fails the test when there is none. */
export function tableWith(text: string, columns: string[], where: string): string[][] {
  const found = tables(text).find((t) => columns.every((c, i) => t.header[i] === c));
  expect(found, `${where}: a table with columns ${columns.join(' | ')}`).toBeDefined();
  return found?.rows ?? [];
}

export const unticked = (cell: string) => cell.replaceAll('`', '').trim();
/** The `code` spans of a cell. */
export const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);

/**
 * The lines of the fenced code blocks under the heading `heading` (any level), up to the next
 * heading of that level or above.
 */
export function fencedUnder(md: string, heading: string): string[] {
  const lines = md.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').trim() === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = (/^(#+) /.exec(lines[start] as string)?.[1] ?? '').length;
  const out: string[] = [];
  let inFence = false;
  for (const line of lines.slice(start + 1)) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    else if (inFence) out.push(line);
    else if ((/^(#+) /.exec(line)?.[1]?.length ?? 99) <= level) break;
  }
  return out;
}

/** A shell command line split into words as sh would (single and double quotes; no expansion). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /'([^']*)'|"((?:\\.|[^"\\])*)"|(\\.|[^\s'"#]+)|(\s+)|(#.*$)/gy;
  let word: string | null = null;
  for (let m = re.exec(line); m && m.index < line.length; m = re.exec(line)) {
    if (m[4] !== undefined || m[5] !== undefined) {
      if (word !== null) words.push(word);
      word = null;
      if (m[5] !== undefined) break;
    } else
      word = (word ?? '') + (m[1] ?? m[2]?.replace(/\\(.)/g, '$1') ?? m[3]?.replace(/\\(.)/g, '$1') ?? '');
  }
  if (word !== null) words.push(word);
  return words;
}

/**
 * The console under /ui/, as a Fastify plugin the admin server registers (src/runtime/admin.ts):
 * the admin server's hooks (Host check, token) run first. Every page is read through the
 * ConsoleReader and rendered on the server; answers carry a Content-Security-Policy with no
 * inline script, and are not cached.
 */
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENTERPRISE_CHANGE_CATEGORIES } from '../terms/changes.ts';
import { beijingTime, fieldLabel, tokenLabel } from '../terms/fields.ts';
import type { Html } from './html.ts';
import { chooseLang, type Lang } from './i18n.ts';
import { CONSOLE_CSP, type PageContext, pageContext } from './layout.ts';
import {
  changesPage,
  companiesPage,
  companyPage,
  loginPage,
  messagePage,
  overviewPage,
  productPage,
  productsPage,
  rawPage,
  rowMoney,
  watchlistPage,
} from './pages.ts';
import {
  type ChangeFilter,
  type ChangeRow,
  holderPids,
  listDates,
  readChanges,
  readCompany,
  readHeld,
  readOverview,
  readProduct,
  readRawAnswer,
  readTrending,
  readWatchlist,
  searchCompanies,
} from './queries.ts';
import { type ConsoleReader, ConsoleReaderError } from './reader.ts';
import { type ChangeColumn, changeColumnLabel, changeText, type Held } from './values.ts';

/** Changes on one page of the feed, and per read of the CSV download. */
export const CHANGES_PAGE = 100;
const CSV_BATCH = 5_000;
const WATCH_PAGE = 200;

const STYLESHEET = readFileSync(new URL('./console.css', import.meta.url), 'utf8');

/** Bad input in the address: answered with 400 and a page naming the problem. */
class BadInput extends Error {
  override readonly name = 'BadInput';
}

type Query = Record<string, string | string[] | undefined>;

function one(q: Query, key: string): string | null {
  const v = q[key];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? null : s.trim();
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function day(q: Query, key: string): string | null {
  const v = one(q, key);
  if (v === null) return null;
  const d = new Date(`${v}T00:00:00Z`);
  if (!DAY.test(v) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v)
    throw new BadInput(`${key} must be a date as YYYY-MM-DD, not "${v}"`);
  return v;
}

function whole(q: Query, key: string, min: number): number | null {
  const v = one(q, key);
  if (v === null) return null;
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min)
    throw new BadInput(`${key} must be a whole number of at least ${min}, not "${v}"`);
  return n;
}

function text(q: Query, key: string, max = 200): string | null {
  const v = one(q, key);
  if (v !== null && v.length > max) throw new BadInput(`${key} must be at most ${max} characters`);
  return v;
}

function changeFilter(q: Query): ChangeFilter {
  const severity = one(q, 'severity');
  if (severity !== null && !['high', 'medium', 'low'].includes(severity))
    throw new BadInput(`severity must be high, medium or low, not "${severity}"`);
  const category = one(q, 'category');
  if (category !== null && !(ENTERPRISE_CHANGE_CATEGORIES as readonly string[]).includes(category))
    throw new BadInput(
      `category must be one of ${ENTERPRISE_CHANGE_CATEGORIES.join(', ')}; not "${category}"`,
    );
  return { severity, category, from: day(q, 'from'), to: day(q, 'to'), pid: text(q, 'pid', 100) };
}

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  return new RegExp(`(?:^|;\\s*)${name}=([^;]+)`).exec(request.headers.cookie ?? '')?.[1];
}

/** The page context of a request: its language (see chooseLang) and address. */
export function contextOf(request: FastifyRequest): PageContext {
  const q = request.query as Query | undefined;
  const lang: Lang = chooseLang(
    (q && one(q, 'lang')) ?? undefined,
    cookieOf(request, 'daybook_lang'),
    request.headers['accept-language'],
  );
  return pageContext(lang, request.url);
}

/** The headers of every console answer. */
export function secureHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', CONSOLE_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cache-Control', 'no-store');
}

function sendPage(reply: FastifyReply, page: Html, status = 200): FastifyReply {
  return secureHeaders(reply).code(status).type('text/html; charset=utf-8').send(page.text);
}

/** The 401 answer to a console request without the token: the sign-in page. */
export function sendLoginPage(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendPage(reply, loginPage(contextOf(request)), 401);
}

/** One CSV field (RFC 4180); a cell a spreadsheet would read as a formula is prefixed with '. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = v instanceof Date ? v.toISOString() : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The CSV's columns by default: the view's own names and values, for a program to read. */
const CSV_COLUMNS = [
  'change_id',
  'detected_at',
  'cycle',
  'pid',
  'current_name',
  'category',
  'field',
  'kind',
  'before',
  'after',
  'detail',
  'severity',
  'to_version',
] as const;

/**
 * The CSV's columns for a person (`?lang=zh` or `en`): the catalogue's labels, and each value as
 * the changes page shows it (labels for tokens, money in 万 or millions of its currency, Beijing
 * times, shareholders by name and credit code). The company is its name and credit code.
 */
const HUMAN_CSV_COLUMNS: readonly [ChangeColumn, (r: ChangeRow, lang: Lang, held: Held) => unknown][] = [
  ['detected_at', (r) => beijingTime(r.detected_at)],
  ['cycle', (r) => r.cycle],
  ['ent_name', (r) => r.current_name],
  ['uncid', (r) => r.uncid],
  ['category', (r, lang) => tokenLabel('category', r.category, lang)],
  ['field', (r, lang) => fieldLabel(r.field, lang)],
  ['kind', (r, lang) => tokenLabel('kind', r.kind, lang)],
  ['before', (r, lang, held) => changeText(lang, r.field, r.before, rowMoney(r).before, held)],
  ['after', (r, lang, held) => changeText(lang, r.field, r.after, rowMoney(r).after, held)],
  ['detail', (r, lang) => tokenLabel('detail', r.detail, lang)],
  ['severity', (r, lang) => tokenLabel('severity', r.severity, lang)],
  ['to_version', (r) => r.to_version],
];

/** The header line of the changes CSV. */
export function csvHeader(lang: Lang | null): string {
  const names = lang ? HUMAN_CSV_COLUMNS.map(([c]) => changeColumnLabel(c, lang)) : CSV_COLUMNS;
  return `${names.map(csvField).join(',')}\r\n`;
}

/** One change as a CSV line. */
export function csvLine(r: ChangeRow, lang: Lang | null, held: Held): string {
  const cells = lang
    ? HUMAN_CSV_COLUMNS.map(([, value]) => value(r, lang, held))
    : CSV_COLUMNS.map((c) => r[c]);
  return `${cells.map(csvField).join(',')}\r\n`;
}

/**
 * Every change the filter selects, newest first, read in batches by keyset. The file starts with a
 * byte order mark: without it, Excel on a Chinese Windows reads UTF-8 as the local code page.
 */
async function* changesCsv(
  reader: ConsoleReader,
  f: ChangeFilter,
  lang: Lang | null,
): AsyncGenerator<string> {
  yield `\uFEFF${csvHeader(lang)}`;
  let before: number | null = null;
  for (;;) {
    const cursor: number | null = before;
    const { rows, held } = await reader.read(async (tx) => {
      const rows: ChangeRow[] = await readChanges(tx, f, cursor, CSV_BATCH);
      return { rows, held: lang ? await readHeld(tx, holderPids(rows)) : new Map() };
    });
    if (rows.length === 0) return;
    yield rows.map((r) => csvLine(r, lang, held)).join('');
    if (rows.length < CSV_BATCH) return;
    before = rows[rows.length - 1]?.change_id ?? null;
  }
}

function registerPages(app: FastifyInstance, reader: ConsoleReader): void {
  const q = (r: FastifyRequest) => (r.query ?? {}) as Query;
  app.get('/', async (request, reply) => {
    const o = await reader.read(readOverview);
    return sendPage(reply, overviewPage(contextOf(request), o));
  });
  app.get('/companies', async (request, reply) => {
    const term = text(q(request), 'q');
    const hits = term === null ? null : await reader.read((tx) => searchCompanies(tx, term));
    return sendPage(reply, companiesPage(contextOf(request), term ?? '', hits));
  });
  app.get('/companies/:pid', async (request, reply) => {
    const pid = (request.params as { pid: string }).pid;
    const at = day(q(request), 'at');
    const ctx = contextOf(request);
    const c = await reader.read((tx) => readCompany(tx, pid, at));
    if (!c) return sendPage(reply, messagePage(ctx, ctx.t.notFound, ctx.t.noCompany), 404);
    return sendPage(reply, companyPage(ctx, pid, c, at ?? ''));
  });
  app.get('/changes', async (request, reply) => {
    const f = changeFilter(q(request));
    const before = whole(q(request), 'before', 1);
    const { shown, held, more } = await reader.read(async (tx) => {
      const rows = await readChanges(tx, f, before, CHANGES_PAGE + 1);
      const shown = rows.slice(0, CHANGES_PAGE);
      return { shown, held: await readHeld(tx, holderPids(shown)), more: rows.length > CHANGES_PAGE };
    });
    const next = more ? (shown.at(-1)?.change_id ?? null) : null;
    return sendPage(
      reply,
      changesPage(contextOf(request), f, shown, next, ENTERPRISE_CHANGE_CATEGORIES, held),
    );
  });
  app.get('/changes.csv', async (request, reply) => {
    const f = changeFilter(q(request));
    const asked = one(q(request), 'lang');
    const lang = asked === 'zh' || asked === 'en' ? asked : null;
    return secureHeaders(reply)
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', 'attachment; filename="changes.csv"')
      .send(Readable.from(changesCsv(reader, f, lang)));
  });
  app.get('/watchlist', async (request, reply) => {
    const after = whole(q(request), 'after', 0) ?? 0;
    const rows = await reader.read((tx) => readWatchlist(tx, after, WATCH_PAGE + 1));
    const shown = rows.slice(0, WATCH_PAGE);
    const next = rows.length > WATCH_PAGE ? (shown.at(-1)?.id ?? null) : null;
    return sendPage(reply, watchlistPage(contextOf(request), shown, next));
  });
  app.get('/products', async (request, reply) => {
    const asked = day(q(request), 'date');
    const { date, dates, rows } = await reader.read(async (tx) => {
      const dates = await listDates(tx);
      const date = asked ?? dates[0] ?? null;
      return { date, dates, rows: date ? await readTrending(tx, date) : [] };
    });
    const shown = date && !dates.includes(date) ? [date, ...dates] : dates;
    return sendPage(reply, productsPage(contextOf(request), date, shown, rows));
  });
  app.get('/products/:id', async (request, reply) => {
    const id = (request.params as { id: string }).id;
    const ctx = contextOf(request);
    const p = await reader.read((tx) => readProduct(tx, id));
    if (!p) return sendPage(reply, messagePage(ctx, ctx.t.notFound, ctx.t.noProduct), 404);
    return sendPage(reply, productPage(ctx, p));
  });
  app.get('/raw/:id', async (request, reply) => {
    const raw = (request.params as { id: string }).id;
    const ctx = contextOf(request);
    const id = whole({ id: raw }, 'id', 1) as number;
    const r = await reader.read((tx) => readRawAnswer(tx, id));
    if (!r) return sendPage(reply, messagePage(ctx, ctx.t.notFound, `#${id}`), 404);
    return sendPage(reply, rawPage(ctx, r));
  });
}

/** The console's routes, to register under the prefix /ui. */
export function consoleRoutes(reader: ConsoleReader) {
  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('onRequest', async (request, reply) => {
      const lang = one((request.query ?? {}) as Query, 'lang');
      if (lang === 'zh' || lang === 'en')
        reply.header('Set-Cookie', `daybook_lang=${lang}; Path=/ui; Max-Age=31536000; SameSite=Strict`);
    });
    app.get('/static/console.css', async (_request, reply) =>
      secureHeaders(reply)
        .header('Cache-Control', 'max-age=3600')
        .type('text/css; charset=utf-8')
        .send(STYLESHEET),
    );
    registerPages(app, reader);
    app.setNotFoundHandler(async (request, reply) => {
      const ctx = contextOf(request);
      return sendPage(reply, messagePage(ctx, ctx.t.notFound, request.url.split('?', 1)[0] ?? ''), 404);
    });
    app.setErrorHandler(async (err, request, reply) => {
      const ctx = contextOf(request);
      if (err instanceof BadInput) return sendPage(reply, messagePage(ctx, ctx.t.badInput, err.message), 400);
      const message = err instanceof ConsoleReaderError ? err.message : 'see the server log';
      request.log.error({ err }, 'console page failed');
      return sendPage(reply, messagePage(ctx, ctx.t.unavailable, message), 500);
    });
  };
}

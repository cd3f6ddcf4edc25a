/**
 * The console under /ui/, as a Fastify plugin the admin server registers (src/runtime/admin.ts):
 * the admin server's hooks (Host check, token) run first. Every page is read through the
 * ConsoleReader and rendered on the server; answers carry a Content-Security-Policy with no
 * inline script, and are not cached.
 */
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ENTERPRISE_CHANGE_CATEGORIES } from '../terms/changes.ts';
import { beijingTime, fieldLabel, tokenLabel } from '../terms/fields.ts';
import { type Html, html } from './html.ts';
import { chooseLang, type Lang } from './i18n.ts';
import { CONSOLE_CSP, type PageContext, page, pageContext } from './layout.ts';
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
import { BadParam, param, problemText, readParams, withoutToken } from './params.ts';
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
import type { ConsoleReader } from './reader.ts';
import { type ChangeColumn, changeColumnLabel, changeText, type Held } from './values.ts';

/** Changes on one page of the feed, and per read of the CSV download. */
export const CHANGES_PAGE = 100;
const CSV_BATCH = 5_000;
const WATCH_PAGE = 200;

const STYLESHEET = readFileSync(new URL('./console.css', import.meta.url), 'utf8');

type Query = Record<string, string | string[] | undefined>;

/** The query's one value of `key` (the first when repeated), trimmed; null when absent or blank. */
function one(q: Query, key: string): string | null {
  const v = q[key];
  const s = Array.isArray(v) ? v[0] : v;
  return typeof s !== 'string' || s.trim() === '' ? null : s.trim();
}

/** The change feed's filters, as the changes page and the CSV take them. */
const CHANGE_FILTER = {
  severity: param.oneOf(['high', 'medium', 'low']),
  category: param.oneOf(ENTERPRISE_CHANGE_CATEGORIES),
  from: param.day(),
  to: param.day(),
  pid: param.text(100),
} as const;

/** A company's PID, a product's id: text of at most 100 characters. */
const ID = param.text(100);

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

/** One batch of the CSV: changes before `cursor`, and the companies they name that daybook holds. */
function csvBatch(
  reader: ConsoleReader,
  f: ChangeFilter,
  cursor: number | null,
  lang: Lang | null,
): Promise<{ rows: ChangeRow[]; held: Held }> {
  return reader.read(async (tx) => {
    const rows: ChangeRow[] = await readChanges(tx, f, cursor, CSV_BATCH);
    return { rows, held: lang ? await readHeld(tx, holderPids(rows)) : new Map() };
  });
}

/**
 * Every change the filter selects, newest first, read in batches by keyset, from `first` (the first
 * batch, read before the answer's headers went out: a failure there is still an error page). The
 * file starts with a byte order mark: without it, Excel on a Chinese Windows reads UTF-8 as the
 * local code page. A failure after the headers cuts the file short (the client sees it broken,
 * not complete) and is logged with the request's id.
 */
async function* changesCsv(
  reader: ConsoleReader,
  f: ChangeFilter,
  lang: Lang | null,
  first: { rows: ChangeRow[]; held: Held },
  log: FastifyBaseLogger,
): AsyncGenerator<string> {
  yield `\uFEFF${csvHeader(lang)}`;
  let batch = first;
  try {
    for (;;) {
      const { rows, held } = batch;
      if (rows.length === 0) return;
      yield rows.map((r) => csvLine(r, lang, held)).join('');
      if (rows.length < CSV_BATCH) return;
      batch = await csvBatch(reader, f, rows[rows.length - 1]?.change_id ?? null, lang);
    }
  } catch (err) {
    log.error({ err }, 'the changes CSV was cut short');
    throw err;
  }
}

/** The parameters of each page (path parameters apart), checked before any query runs. */
const PAGE_PARAMS = {
  companies: { q: param.text(200) },
  company: { at: param.day() },
  changes: { ...CHANGE_FILTER, before: param.whole(1) },
  csv: { ...CHANGE_FILTER, lang: param.oneOf(['zh', 'en']) },
  watchlist: { after: param.whole(0) },
  products: { date: param.day() },
} as const;

function registerPages(app: FastifyInstance, reader: ConsoleReader): void {
  app.get('/', async (request, reply) => {
    const o = await reader.read(readOverview);
    return sendPage(reply, overviewPage(contextOf(request), o));
  });
  app.get('/companies', async (request, reply) => {
    const { q: term } = readParams(PAGE_PARAMS.companies, request.query);
    const hits = term === null ? null : await reader.read((tx) => searchCompanies(tx, term));
    return sendPage(reply, companiesPage(contextOf(request), term ?? '', hits));
  });
  app.get('/companies/:pid', async (request, reply) => {
    const { pid } = readParams({ pid: ID }, request.params);
    const { at } = readParams(PAGE_PARAMS.company, request.query);
    const ctx = contextOf(request);
    const c = pid === null ? null : await reader.read((tx) => readCompany(tx, pid, at));
    if (!c || pid === null) return sendPage(reply, messagePage(ctx, ctx.t.notFound, ctx.t.noCompany), 404);
    return sendPage(reply, companyPage(ctx, pid, c, at ?? ''));
  });
  app.get('/changes', async (request, reply) => {
    const { before, ...f } = readParams(PAGE_PARAMS.changes, request.query);
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
    // Checked, and the first batch read, before any header goes out.
    const { lang, ...f } = readParams(PAGE_PARAMS.csv, request.query);
    const first = await csvBatch(reader, f, null, lang);
    return secureHeaders(reply)
      .type('text/csv; charset=utf-8')
      .header('Content-Disposition', 'attachment; filename="changes.csv"')
      .send(Readable.from(changesCsv(reader, f, lang, first, request.log)));
  });
  app.get('/watchlist', async (request, reply) => {
    const after = readParams(PAGE_PARAMS.watchlist, request.query).after ?? 0;
    const rows = await reader.read((tx) => readWatchlist(tx, after, WATCH_PAGE + 1));
    const shown = rows.slice(0, WATCH_PAGE);
    const next = rows.length > WATCH_PAGE ? (shown.at(-1)?.id ?? null) : null;
    return sendPage(reply, watchlistPage(contextOf(request), shown, next));
  });
  app.get('/products', async (request, reply) => {
    const asked = readParams(PAGE_PARAMS.products, request.query).date;
    const { date, dates, rows } = await reader.read(async (tx) => {
      const dates = await listDates(tx);
      const date = asked ?? dates[0] ?? null;
      return { date, dates, rows: date ? await readTrending(tx, date) : [] };
    });
    const shown = date && !dates.includes(date) ? [date, ...dates] : dates;
    return sendPage(reply, productsPage(contextOf(request), date, shown, rows));
  });
  app.get('/products/:id', async (request, reply) => {
    const { id } = readParams({ id: ID }, request.params);
    const ctx = contextOf(request);
    const p = id === null ? null : await reader.read((tx) => readProduct(tx, id));
    if (!p) return sendPage(reply, messagePage(ctx, ctx.t.notFound, ctx.t.noProduct), 404);
    return sendPage(reply, productPage(ctx, p));
  });
  app.get('/raw/:id', async (request, reply) => {
    const { id } = readParams({ id: param.whole(1) }, request.params);
    const ctx = contextOf(request);
    const r = id === null ? null : await reader.read((tx) => readRawAnswer(tx, id));
    if (!r) return sendPage(reply, messagePage(ctx, ctx.t.notFound, `#${id ?? ''}`), 404);
    return sendPage(reply, rawPage(ctx, r));
  });
}

/** The words of the console's error pages (a bad address, a failure of the server). */
const ERROR_WORDS = {
  en: {
    badAddress: 'This address cannot be read.',
    failed: 'Something went wrong',
    failedText: 'This page could not be shown. The server log has the details under this request id:',
  },
  zh: {
    badAddress: '无法读取此地址。',
    failed: '出错了',
    failedText: '此页面无法显示。服务器日志中以此请求编号记录了详情：',
  },
} as const;

/** The status a client's error asks for (Fastify's own 4xx errors), or null for a server's failure. */
export function clientStatus(err: unknown): number | null {
  // decodeURIComponent refusing what a client sent (Bull Board decodes some parameters again).
  if (err instanceof URIError) return 400;
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

/**
 * Logs a failure of the server at error level, with its error and stack, under the request's id
 * (pino binds it to request.log), and the address without any token.
 */
export function logFailure(request: FastifyRequest, err: unknown): void {
  request.log.error(
    { err, method: request.method, url: withoutToken(request.url) },
    'the admin server failed to answer a request',
  );
}

/**
 * The console's answer to an error: a bad parameter, 400 with a page naming it in the page's
 * language; another client error, its status and a page saying the address cannot be read; any
 * other failure, logged, then 500 and a page showing the request id (and nothing of the error).
 */
export function sendConsoleError(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const ctx = contextOf(request);
  const w = ERROR_WORDS[ctx.lang];
  if (err instanceof BadParam)
    return sendPage(
      reply,
      page(
        ctx,
        ctx.t.badInput,
        html`<p><code>${err.param}</code> ${problemText(ctx.lang, err.problem, err.given)}</p>`,
      ),
      400,
    );
  const status = clientStatus(err);
  if (status !== null) return sendPage(reply, messagePage(ctx, ctx.t.badInput, w.badAddress), status);
  logFailure(request, err);
  return sendPage(
    reply,
    page(ctx, w.failed, html`<p>${w.failedText} <code class="request-id">${request.id}</code></p>`),
    500,
  );
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
    app.setErrorHandler(async (err, request, reply) => sendConsoleError(request, reply, err));
  };
}

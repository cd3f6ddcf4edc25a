/**
 * The frame every console page shares (navigation, language switch, the stylesheet) and the small
 * formatting helpers of its pages. Pages carry no script: the Content-Security-Policy
 * (see CONSOLE_CSP) would refuse an inline one anyway.
 */
import { beijingTime, tokenLabel } from '../terms/fields.ts';
import { type Html, html } from './html.ts';
import { type Lang, MESSAGES, type Messages } from './i18n.ts';

/** Scripts and styles from this server only, no inline script, no framing, forms to this server only. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** What a page is rendered for: its language and words, and the request's path and query. */
export interface PageContext {
  lang: Lang;
  t: Messages;
  path: string;
  query: URLSearchParams;
}

export function pageContext(lang: Lang, url: string): PageContext {
  // Read as a path on this server whatever it holds (`//host`, a bad IPv6 literal after `//`).
  let u: URL;
  try {
    u = new URL(`http://console/${url.replace(/^[/\\]+/, '')}`);
  } catch {
    u = new URL('http://console/ui/');
  }
  return { lang, t: MESSAGES[lang], path: u.pathname, query: u.searchParams };
}

const SECTIONS = [
  ['/ui/', 'overview'],
  ['/ui/companies', 'companies'],
  ['/ui/changes', 'changes'],
  ['/ui/watchlist', 'watchlist'],
  ['/ui/products', 'products'],
] as const;

/** The same address with `lang` set: the language switch's links. */
function withLang(ctx: PageContext, lang: Lang): string {
  const q = new URLSearchParams(ctx.query);
  q.set('lang', lang);
  return `${ctx.path}?${q.toString()}`;
}

function section(path: string): string {
  const found = SECTIONS.filter(([p]) => p !== '/ui/' && path.startsWith(p)).at(0);
  return found ? found[0] : '/ui/';
}

/** A whole page: `title` in the head and as the heading, `body` in the main region. */
export function page(ctx: PageContext, title: string, body: Html): Html {
  const { t } = ctx;
  const current = section(ctx.path);
  const nav = SECTIONS.map(
    ([href, key]) =>
      html`<li><a href="${href}"${current === href ? html` aria-current="page"` : ''}>${t[key]}</a></li>`,
  );
  const other: Lang = ctx.lang === 'en' ? 'zh' : 'en';
  return html`<!doctype html>
<html lang="${ctx.lang === 'zh' ? 'zh-CN' : 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${title} · ${t.title}</title>
<link rel="stylesheet" href="/ui/static/console.css">
</head>
<body>
<a class="skip" href="#main">${t.skip}</a>
<header class="top">
<span class="brand">${t.title}</span>
<nav aria-label="${t.nav}"><ul>${nav}</ul></nav>
<p class="lang">${t.language}: <a href="${withLang(ctx, other)}" hreflang="${other}" lang="${other === 'zh' ? 'zh-CN' : 'en'}">${other === 'zh' ? '中文' : 'English'}</a></p>
</header>
<main id="main" tabindex="-1">
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
}

/**
 * An instant as a Beijing date and time (`YYYY-MM-DD HH:mm`, whatever the machine's zone), in a
 * `<time>` element carrying the exact instant; empty for none. A table names the zone in its
 * column header (`zoned`); text elsewhere says it after the time (`whenZoned`).
 */
export function when(d: Date | string | null | undefined): Html {
  if (d === null || d === undefined) return html``;
  const date = d instanceof Date ? d : new Date(d);
  if (Number.isNaN(date.getTime())) return html`${String(d)}`;
  return html`<time datetime="${date.toISOString()}">${beijingTime(date)}</time>`;
}

/** An instant with its zone named: `2026-11-21 10:03 (Beijing time)`. */
export function whenZoned(ctx: PageContext, d: Date | string | null | undefined): Html {
  if (d === null || d === undefined) return html``;
  return html`${when(d)}${zoneNote(ctx)}`;
}

/** The zone after a time, or after a column's label: `（北京时间）`, ` (Beijing time)`. */
export function zoneNote(ctx: PageContext): string {
  return ctx.lang === 'zh' ? `（${ctx.t.beijing}）` : ` (${ctx.t.beijing})`;
}

/** A column header of instants, naming their zone. */
export function zoned(ctx: PageContext, label: string): string {
  return `${label}${zoneNote(ctx)}`;
}

/** A number as a person reads it: 1,234.5. */
export function num(n: number | string | null | undefined, digits = 2): string {
  if (n === null || n === undefined || n === '') return '';
  const v = typeof n === 'number' ? n : Number(n);
  return Number.isFinite(v) ? v.toLocaleString('en-US', { maximumFractionDigits: digits }) : String(n);
}

/** A severity as a labelled badge in the page's language (its colour repeats the word, never replaces it). */
export function severityBadge(ctx: PageContext, s: string): Html {
  const cls = ['high', 'medium', 'low'].includes(s) ? s : 'low';
  return html`<span class="sev sev-${cls}">${tokenLabel('severity', s, ctx.lang)}</span>`;
}

/**
 * A table with a caption (for screen readers: the heading above it says the same to the eye) and
 * column headers; `rows` are already rendered cells.
 */
export function table(caption: string, headers: readonly string[], rows: readonly Html[], cls = ''): Html {
  return html`<div class="scroll" role="region" aria-label="${caption}" tabindex="0"><table${cls ? html` class="${cls}"` : ''}><caption>${caption}</caption><thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;
}

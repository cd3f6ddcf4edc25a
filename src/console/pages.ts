/**
 * The console's pages, rendered on the server from what src/console/queries.ts read. Every value
 * goes through the `html` tag (src/console/html.ts), so upstream text is never markup.
 */
import { barChart, lineChart } from './chart.ts';
import { type Html, html, safeHttpUrl } from './html.ts';
import { num, type PageContext, page, severityBadge, table, when } from './layout.ts';
import type {
  ChangeFilter,
  ChangeRow,
  Company,
  Overview,
  Product,
  RawAnswer,
  Row,
  SearchHit,
  TrendingRow,
  WatchRow,
} from './queries.ts';

/** Cycle fetch states grouped as the overview names them. */
const STATUS_GROUP: Record<string, 'planned' | 'inFlight' | 'bought' | 'failed' | 'deferred' | 'skipped'> = {
  planned: 'planned',
  fetching: 'inFlight',
  retrying: 'inFlight',
  succeeded: 'bought',
  duplicate: 'bought',
  failed: 'failed',
  deferred: 'deferred',
  skipped: 'skipped',
};

function cycleSection(ctx: PageContext, o: Overview): Html {
  const { t } = ctx;
  if (!o.cycle)
    return html`<section aria-labelledby="cycle-h"><h2 id="cycle-h">${t.currentCycle}</h2><p>${t.noCycle}</p></section>`;
  const c = o.cycle;
  const groups = new Map<string, { n: number; why: Map<string, number> }>();
  for (const r of o.counts) {
    const g = STATUS_GROUP[r.status] ?? 'planned';
    const entry = groups.get(g) ?? { n: 0, why: new Map<string, number>() };
    entry.n += r.n;
    if (r.error_code) entry.why.set(r.error_code, (entry.why.get(r.error_code) ?? 0) + r.n);
    groups.set(g, entry);
  }
  const order = ['planned', 'inFlight', 'bought', 'failed', 'deferred', 'skipped'] as const;
  const rows = order.map((g) => {
    const e = groups.get(g);
    const why = e ? [...e.why].map(([code, n]) => `${code} × ${n}`).join(', ') : '';
    return html`<tr><th scope="row">${t[g]}</th><td class="n">${num(e?.n ?? 0)}</td><td>${why}</td></tr>`;
  });
  const paused = c.paused_at
    ? html`<p class="warn"><strong>${t.paused}</strong>: ${t.pausedSince} ${when(c.paused_at)} — ${c.paused_reason ?? ''}</p>`
    : html`<p>${t.notPaused}</p>`;
  return html`<section aria-labelledby="cycle-h"><h2 id="cycle-h">${t.currentCycle}: ${c.cycle}</h2>
<dl class="facts"><dt>${t.budget}</dt><dd>${num(c.budget)}</dd><dt>${t.spent}</dt><dd>${num(c.spent)}</dd><dt>${t.reserved}</dt><dd>${num(c.reserved)}</dd></dl>
${paused}
${table(`${t.cycle} ${c.cycle}`, [t.status, t.entries, t.why], rows)}</section>`;
}

function creditsSection(ctx: PageContext, o: Overview): Html {
  const { t } = ctx;
  if (o.credits.length === 0) return html``;
  const bars = o.credits.map((d) => ({ label: d.day.slice(5), value: d.credits, line: d.budget }));
  const rows = o.credits
    .filter((d) => d.credits > 0 || d.budget !== null)
    .map(
      (d) =>
        html`<tr><td>${d.day}</td><td class="n">${num(d.credits)}</td><td class="n">${num(d.budget)}</td></tr>`,
    );
  return html`<section aria-labelledby="credits-h"><h2 id="credits-h">${t.creditsChart}</h2>
<figure>${barChart('credits', t.creditsChart, t.creditsChartDesc, bars)}<figcaption>${t.creditsChartDesc}</figcaption></figure>
<details><summary>${t.dataTable}</summary>${table(t.creditsChart, [t.day, t.credits, t.budget], rows)}</details></section>`;
}

function operationsSection(ctx: PageContext, o: Overview): Html {
  const { t } = ctx;
  const rates = o.rates.map(
    (r) =>
      html`<tr><td>${r.operation}</td><td class="n">${num(r.calls_in_window)}</td><td>${when(r.blocked_until)}</td><td class="n">${num(r.refusals)}</td></tr>`,
  );
  const answers = o.answers.map(
    (a) =>
      html`<tr${a.outcome === 'success' ? '' : html` class="warn"`}><td>${a.operation}</td><td>${a.outcome}</td><td class="n">${num(a.n)}</td></tr>`,
  );
  const x = o.lastExport;
  const exp = x
    ? html`<p>#${x.load_no} · ${x.kind} · ${x.format} · ${x.state} · ${num(x.rows)} rows · ${when(x.completed_at ?? x.started_at)}</p>`
    : html`<p>${t.noExport}</p>`;
  const subs = o.subscriptions.map(
    (s) =>
      html`<tr><td>#${s.id}</td><td>${s.format}</td><td>${s.state}${s.disabled_reason ? ` (${s.disabled_reason})` : ''}</td><td>${when(s.failing_since)}</td></tr>`,
  );
  const queue = o.queue.map((q) => `${q.state}: ${num(q.n)}`).join(' · ');
  return html`<section aria-labelledby="rate-h"><h2 id="rate-h">${t.rateUse}</h2>
${table(t.rateUse, [t.operation, t.callsInWindow, t.blockedUntil, t.refusalsInRow], rates)}
<h3>${t.upstreamAnswers}</h3>${table(t.upstreamAnswers, [t.operation, t.outcome, t.count], answers)}</section>
<section aria-labelledby="export-h"><h2 id="export-h">${t.lastExport}</h2>${exp}</section>
<section aria-labelledby="deliv-h"><h2 id="deliv-h">${t.deliveries}</h2>
${subs.length === 0 ? html`<p>${t.noSubscriptions}</p>` : table(t.deliveries, [t.subscription, t.format, t.status, t.failingSince], subs)}
${queue ? html`<p>${t.queue}: ${queue}</p>` : ''}</section>`;
}

export function overviewPage(ctx: PageContext, o: Overview): Html {
  return page(
    ctx,
    ctx.t.overview,
    html`${cycleSection(ctx, o)}${creditsSection(ctx, o)}${operationsSection(ctx, o)}`,
  );
}

function searchForm(ctx: PageContext, q: string): Html {
  const { t } = ctx;
  return html`<form method="get" action="/ui/companies" role="search" class="inline">
<label for="q">${t.searchLabel}</label>
<input id="q" name="q" type="search" value="${q}" aria-describedby="q-hint" autocomplete="off">
<button type="submit">${t.search}</button>
<p id="q-hint" class="hint">${t.searchHint}</p></form>`;
}

export function companiesPage(ctx: PageContext, q: string, hits: readonly SearchHit[] | null): Html {
  const { t } = ctx;
  const rows = (hits ?? []).map(
    (h) =>
      html`<tr><td><a href="/ui/companies/${encodeURIComponent(h.pid)}">${h.ent_name}</a></td><td>${h.matched === h.ent_name ? '' : h.matched}</td><td>${h.uncid}</td><td>${h.pid}</td></tr>`,
  );
  const results =
    hits === null
      ? ''
      : hits.length === 0
        ? html`<p>${t.noMatch}</p>`
        : table(`${t.search}: ${q}`, [t.name, t.matchedOn, t.uscc, t.pid], rows);
  return page(ctx, t.companies, html`${searchForm(ctx, q)}${results}`);
}

const RECORD_FIELDS = [
  ['ent_name', 'ENTNAME'],
  ['history_name', 'HISTORYNAME'],
  ['uncid', 'UNCID'],
  ['reg_no', 'REGNO'],
  ['legal_person', 'LEGALPERSON'],
  ['ent_type', 'ENTTYPE'],
  ['ent_status', 'ENTSTATUS'],
  ['reg_cap', 'REGCAP'],
  ['capital_currency', 'currency'],
  ['es_date', 'ESDATE'],
  ['op_loc', 'OPLOC'],
  ['industry_big', 'INDUSTRYBIG'],
  ['op_scope', 'OPSCOPE'],
  ['presence', 'presence'],
] as const;

function recordSection(ctx: PageContext, c: Row): Html {
  const rows = RECORD_FIELDS.map(
    ([col, label]) => html`<tr><th scope="row">${label}</th><td>${c[col] as string | null}</td></tr>`,
  );
  return html`<section aria-labelledby="rec-h"><h2 id="rec-h">${ctx.t.currentRecord}</h2>${table(ctx.t.currentRecord, [ctx.t.field, ctx.t.value], rows, 'record wide')}</section>`;
}

function timelineSection(ctx: PageContext, c: Company): Html {
  const { t } = ctx;
  const byVersion = new Map<number, Row[]>();
  for (const ch of c.changes) {
    const v = Number(ch.to_version);
    byVersion.set(v, [...(byVersion.get(v) ?? []), ch]);
  }
  const items = c.versions.map((v) => {
    const n = Number(v.version);
    const changes = byVersion.get(n) ?? [];
    const raw = v.raw_response_id
      ? html` · <a href="/ui/raw/${String(v.raw_response_id)}">${t.rawAnswer} #${String(v.raw_response_id)}</a>`
      : '';
    const rows = changes.map(
      (ch) =>
        html`<tr><td>${ch.category as string}</td><td>${ch.field as string}</td><td class="before">${ch.before as string | null}</td><td class="after">${ch.after as string | null}</td><td>${severityBadge(String(ch.severity))}</td></tr>`,
    );
    const body =
      changes.length === 0
        ? html`<p>${n === 1 ? t.noChangesVersion : ''}</p>`
        : table(`${t.version} ${n}`, [t.category, t.field, t.before, t.after, t.severity], rows, 'wide');
    return html`<li><h3>${t.version} ${n} · ${t.cycle} ${v.cycle as string}</h3><p class="meta">${t.validFrom} ${when(v.valid_from as Date)}${raw}</p>${body}</li>`;
  });
  return html`<section aria-labelledby="tl-h"><h2 id="tl-h">${t.timeline}</h2><ol class="timeline" reversed>${items}</ol></section>`;
}

function people(caption: string, list: Row[], cols: readonly [string, string][], none: string): Html {
  if (list.length === 0) return html`<h3>${caption}</h3><p>${none}</p>`;
  const rows = list.map((p) => html`<tr>${cols.map(([k]) => html`<td>${p[k] as string | null}</td>`)}</tr>`);
  return html`<h3>${caption}</h3>${table(
    caption,
    cols.map(([, h]) => h),
    rows,
  )}`;
}

function asOfSection(ctx: PageContext, c: Company, pid: string, at: string): Html {
  const { t } = ctx;
  const form = html`<form method="get" action="/ui/companies/${encodeURIComponent(pid)}" class="inline">
<label for="at">${t.asOfLabel}</label>
<input id="at" name="at" type="date" value="${at}">
<button type="submit">${t.show}</button></form>`;
  const a = c.asOf;
  const body = a
    ? html`<p class="meta">${t.version} ${a.version} · ${t.cycle} ${a.cycle}</p>
${people(
  t.persons,
  a.persons,
  [
    ['name', t.name],
    ['position', t.position],
  ],
  t.none,
)}
${people(
  t.shareholders,
  a.shareholders,
  [
    ['name', t.name],
    ['type', t.type],
    ['pid', t.pid],
  ],
  t.none,
)}
${people(
  t.clearingMembers,
  a.clearing_members,
  [
    ['name', t.name],
    ['position', t.position],
  ],
  t.none,
)}`
    : html`<p>${t.asOfNone}</p>`;
  return html`<section aria-labelledby="asof-h"><h2 id="asof-h">${t.asOf} ${at || a?.cycle || ''}</h2>${form}${body}</section>`;
}

function eventsAndPlanner(ctx: PageContext, c: Company): Html {
  const { t } = ctx;
  const events = c.events.map(
    (e) =>
      html`<tr><td>${e.kind as string}</td><td>${e.cycle as string}</td><td>${e.keyword as string | null}</td><td>${e.detail as string | null}</td><td>${when(e.observed_at as Date)}</td></tr>`,
  );
  const watch = c.watch.map(
    (w) =>
      html`<tr><td>${w.keyword as string}</td><td class="n">${num(w.change_rate as number | null, 4)}</td><td>${when(w.due_at as Date | null)}</td><td>${when(w.last_refreshed_at as Date | null)}</td></tr>`,
  );
  return html`<section aria-labelledby="ev-h"><h2 id="ev-h">${t.events}</h2>${
    events.length === 0
      ? html`<p>${t.none}</p>`
      : table(t.events, [t.kind, t.cycle, t.keyword, t.detail, t.observedAt], events)
  }</section>
<section aria-labelledby="pl-h"><h2 id="pl-h">${t.planner}</h2>${
    watch.length === 0
      ? html`<p>${t.notWatched}</p>`
      : table(t.planner, [t.keyword, t.rate, t.nextRefresh, t.lastRefreshed], watch)
  }</section>`;
}

export function companyPage(ctx: PageContext, pid: string, c: Company, at: string): Html {
  const name = String(c.current.ent_name);
  const nav = html`<p><a href="/ui/changes?pid=${encodeURIComponent(pid)}">${ctx.t.changes}</a></p>`;
  return page(
    ctx,
    name,
    html`<p class="meta">${ctx.t.pid} ${pid}</p>${nav}${recordSection(ctx, c.current)}${timelineSection(ctx, c)}${asOfSection(ctx, c, pid, at)}${eventsAndPlanner(ctx, c)}`,
  );
}

/** The query string of a change filter (empty values left out), with more pairs after. */
export function filterQuery(f: ChangeFilter, more: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  for (const [k, v] of Object.entries(more)) q.set(k, v);
  return q.toString();
}

function changeFilterForm(ctx: PageContext, f: ChangeFilter, categories: readonly string[]): Html {
  const { t } = ctx;
  const opt = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="/ui/changes" class="filters" aria-label="${t.filters}">
<div><label for="severity">${t.severity}</label><select id="severity" name="severity">${opt('', t.any, !f.severity)}${['high', 'medium', 'low'].map((s) => opt(s, s, f.severity === s))}</select></div>
<div><label for="category">${t.category}</label><select id="category" name="category">${opt('', t.any, !f.category)}${categories.map((c) => opt(c, c, f.category === c))}</select></div>
<div><label for="from">${t.from}</label><input id="from" name="from" type="date" value="${f.from ?? ''}"></div>
<div><label for="to">${t.to}</label><input id="to" name="to" type="date" value="${f.to ?? ''}"></div>
<div><label for="pid">${t.pid}</label><input id="pid" name="pid" type="text" value="${f.pid ?? ''}"></div>
<div><button type="submit">${t.filter}</button></div></form>`;
}

export function changesPage(
  ctx: PageContext,
  f: ChangeFilter,
  rows: readonly ChangeRow[],
  next: number | null,
  categories: readonly string[],
): Html {
  const { t } = ctx;
  const body = rows.map(
    (r) =>
      html`<tr id="change-${r.change_id}"><td>${when(r.detected_at)}</td><td>${r.cycle}</td><td><a href="/ui/companies/${encodeURIComponent(r.pid)}">${r.current_name}</a></td><td>${r.category}</td><td>${r.field}</td><td class="before">${r.before}</td><td class="after">${r.after}</td><td>${severityBadge(r.severity)}</td></tr>`,
  );
  const pager = html`<nav class="pager" aria-label="${t.next}">${
    ctx.query.get('before') ? html`<a href="/ui/changes?${filterQuery(f)}">${t.first}</a>` : ''
  }${next !== null ? html` <a href="/ui/changes?${filterQuery(f, { before: String(next) })}" rel="next">${t.next}</a>` : ''}</nav>`;
  return page(
    ctx,
    t.changes,
    html`${changeFilterForm(ctx, f, categories)}<p><a href="/ui/changes.csv?${filterQuery(f)}" download>${t.downloadCsv}</a></p>${
      rows.length === 0
        ? html`<p>${t.noChanges}</p>`
        : table(
            t.changes,
            [t.detected, t.cycle, t.company, t.category, t.field, t.before, t.after, t.severity],
            body,
            'wide',
          )
    }${pager}`,
  );
}

function matchLevel(ctx: PageContext, w: WatchRow): string {
  if (w.resolution_mismatch) return `${ctx.t.mismatch}: ${w.resolution_mismatch}`;
  if (w.uscc) return `${ctx.t.matchUscc} (${w.uscc})`;
  return w.pin_uscc ? ctx.t.matchPin : ctx.t.matchName;
}

export function watchlistPage(ctx: PageContext, rows: readonly WatchRow[], next: number | null): Html {
  const { t } = ctx;
  const body = rows.map((w) => {
    const failure =
      w.last_outcome && w.last_outcome !== 'success'
        ? `${w.last_outcome}: ${w.last_error ?? ''} (${w.last_cycle ?? ''})`
        : '';
    const name = w.pid
      ? html`<a href="/ui/companies/${encodeURIComponent(w.pid)}">${w.ent_name ?? w.pid}</a>`
      : '';
    return html`<tr><td>${w.keyword}</td><td>${name}</td><td class="n">${w.priority}</td><td>${when(w.last_refreshed_at)}</td><td class="n">${w.days_stale ?? ''}</td><td class="n">${num(w.change_rate, 4)}</td><td>${when(w.due_at)}</td><td>${failure}</td><td>${matchLevel(ctx, w)}</td></tr>`;
  });
  const pager =
    next !== null
      ? html`<nav class="pager" aria-label="${t.next}"><a href="/ui/watchlist?after=${next}" rel="next">${t.next}</a></nav>`
      : '';
  return page(
    ctx,
    t.watchlist,
    html`<p class="hint">${t.readOnly}</p>${table(
      t.watchlist,
      [
        t.keyword,
        t.company,
        t.priority,
        t.lastRefreshed,
        t.daysStale,
        t.rate,
        t.nextDue,
        t.lastFailure,
        t.matchLevel,
      ],
      body,
      'wide',
    )}${pager}`,
  );
}

export function productsPage(
  ctx: PageContext,
  date: string | null,
  dates: readonly string[],
  rows: readonly TrendingRow[],
): Html {
  const { t } = ctx;
  const form = html`<form method="get" action="/ui/products" class="inline"><label for="date">${t.pickDay}</label>
<select id="date" name="date">${dates.map((d) => html`<option value="${d}"${d === date ? html` selected` : ''}>${d}</option>`)}</select>
<button type="submit">${t.show}</button></form>`;
  const body = rows.map(
    (r) =>
      html`<tr><td class="n">${r.position}</td><td><a href="/ui/products/${encodeURIComponent(r.product_id)}">${r.name}</a></td><td>${r.tagline}</td><td class="n">${num(r.votes_count)}</td><td class="n">${num(r.comments_count)}</td></tr>`,
  );
  return page(
    ctx,
    t.products,
    html`${form}<h2>${t.trending} ${date ?? ''}</h2>${
      rows.length === 0
        ? html`<p>${t.noList}</p>`
        : table(`${t.trending} ${date ?? ''}`, [t.rank, t.name, t.tagline, t.votes, t.comments], body)
    }`,
  );
}

export function productPage(ctx: PageContext, p: Product): Html {
  const { t } = ctx;
  const c = p.current;
  // A pull is named by its list's day and its place among that day's pulls: 11-19 #2.
  const seen = new Map<string, number>();
  const labels = p.pulls.map((x) => {
    const k = (seen.get(x.list_date) ?? 0) + 1;
    seen.set(x.list_date, k);
    return `${x.list_date.slice(5)} #${k}`;
  });
  const votes = lineChart(
    'votes',
    `${t.votes}: ${String(c.name)}`,
    t.trajectoryDesc,
    p.pulls.map((x, i) => ({ label: labels[i] as string, value: x.votes_count })),
  );
  const rank = lineChart(
    'rank',
    `${t.rank}: ${String(c.name)}`,
    t.trajectoryDesc,
    p.pulls.map((x, i) => ({ label: labels[i] as string, value: x.position })),
    true,
  );
  const pulls = p.pulls.map(
    (x) =>
      html`<tr><td>${x.list_date}</td><td>${when(x.fetched_at)}</td><td class="n">${x.position}</td><td class="n">${num(x.votes_count)}</td></tr>`,
  );
  const url = safeHttpUrl(c.url as string | null);
  const topics = (c.topics as string[] | null) ?? [];
  const comments = p.comments.map(
    (x) =>
      html`<li><p>${x.body}</p><p class="meta">${x.created_at ? when(x.created_at) : (x.created_at_text ?? '')}</p></li>`,
  );
  return page(
    ctx,
    String(c.name),
    html`<p class="tagline">${c.tagline as string | null}</p>
<dl class="facts"><dt>${t.link}</dt><dd>${url ? html`<a href="${url}" rel="noopener noreferrer nofollow">${url}</a>` : (c.url as string | null)}</dd>
<dt>${t.votes}</dt><dd>${num(c.latest_votes as number | null)}</dd><dt>${t.comments}</dt><dd>${num(c.latest_comments as number | null)}</dd>
<dt>${t.topics}</dt><dd>${topics.length === 0 ? t.none : html`<ul class="tags">${topics.map((x) => html`<li>${x}</li>`)}</ul>`}</dd></dl>
<p>${c.description as string | null}</p>
<section aria-labelledby="traj-h"><h2 id="traj-h">${t.trajectory}</h2>
<figure>${votes}<figcaption>${t.votes}</figcaption></figure>
<figure>${rank}<figcaption>${t.rank}</figcaption></figure>
<details><summary>${t.dataTable}</summary>${table(t.trajectory, [t.listDate, t.pulledAt, t.rank, t.votes], pulls)}</details></section>
<section aria-labelledby="com-h"><h2 id="com-h">${t.comments}</h2>${comments.length === 0 ? html`<p>${t.none}</p>` : html`<ul class="comments">${comments}</ul>`}</section>`,
  );
}

export function rawPage(ctx: PageContext, r: RawAnswer): Html {
  const { t } = ctx;
  return page(
    ctx,
    `${t.rawTitle} #${r.id}`,
    html`<dl class="facts"><dt>${t.operation}</dt><dd>${r.operation}</dd><dt>${t.outcome}</dt><dd>${r.outcome}</dd><dt>${t.httpStatus}</dt><dd>${r.http_status ?? ''}</dd><dt>${t.cycle}</dt><dd>${r.cycle ?? ''}</dd><dt>${t.observedAt}</dt><dd>${when(r.landed_at)}</dd></dl>
<h2>${t.params}</h2><pre tabindex="0">${r.params}</pre><h2>${t.body}</h2><pre tabindex="0">${r.body ?? (r.has_bytes ? '(bytes)' : '')}</pre>`,
  );
}

/** A page saying what went wrong: not found, bad input. */
export function messagePage(ctx: PageContext, title: string, text: string): Html {
  return page(ctx, title, html`<p>${text}</p>`);
}

/** The sign-in page answered with 401: a form sending the token as `?token=`, which sets the cookie. */
export function loginPage(ctx: PageContext): Html {
  const { t } = ctx;
  const back = ctx.path.startsWith('/ui') ? ctx.path : '/ui/';
  return page(
    ctx,
    t.loginTitle,
    html`<p>${t.loginText}</p><form method="get" action="${back}" class="inline"><label for="token">${t.token}</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">${t.signIn}</button></form>`,
  );
}

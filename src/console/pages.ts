/**
 * The console's pages, rendered on the server from what src/console/queries.ts read. Every value
 * goes through the `html` tag (src/console/html.ts), so upstream text is never markup.
 */

import { isBadStatus } from '../terms/changes.ts';
import { formatField, operationWord, reasonWord, tokenLabel } from '../terms/fields.ts';
import { barChart, type GraphEdge, type GraphNode, lineChart, relationGraph } from './chart.ts';
import { type Html, html, safeHttpUrl } from './html.ts';
import { num, type PageContext, page, severityBadge, table, when, whenZoned, zoned } from './layout.ts';
import type {
  ChangeFilter,
  ChangeRow,
  Company,
  Overview,
  Product,
  RawAnswer,
  RelatedCompany,
  Row,
  SearchHit,
  TrendingRow,
  WatchRow,
} from './queries.ts';
import {
  capital,
  changeItem,
  changeLabel,
  changeValue,
  companyLink,
  fill,
  type Held,
  label,
  listOf,
  type MoneyOf,
  observationDetail,
  observationLabel,
  productLabel,
  severityCell,
  shareholderCells,
} from './values.ts';

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
    ? html`<p class="warn"><strong>${t.paused}</strong>: ${t.pausedSince} ${whenZoned(ctx, c.paused_at)} — ${c.paused_reason ?? ''}</p>`
    : html`<p>${t.notPaused}</p>`;
  return html`<section aria-labelledby="cycle-h"><h2 id="cycle-h">${t.currentCycle}: ${c.cycle}</h2>
<dl class="facts"><dt>${t.budget}</dt><dd>${num(c.budget)} ${t.creditsUnit}</dd><dt>${t.spent}</dt><dd>${num(c.spent)} ${t.creditsUnit}</dd>${ledgerFacts(ctx, o)}<dt>${t.reserved}</dt><dd>${num(c.reserved)} ${t.creditsUnit}</dd></dl>
${ledgerNotes(ctx, o)}${paused}
${table(`${t.cycle} ${c.cycle}`, [t.status, t.entries, t.why], rows)}</section>`;
}

/**
 * The credits spent told apart: confirmed (booked) and unconfirmed (calls sent and not answered,
 * or cut off by a process that died), and product calls booked without an amount.
 */
function ledgerFacts(ctx: PageContext, o: Overview): Html {
  const { t } = ctx;
  const l = o.ledger;
  if (!l) return html``;
  const unpriced =
    l.unpriced_calls > 0
      ? html`<dt>${t.unpricedCalls}</dt><dd>${num(l.unpriced_calls)} ${t.callsUnit}</dd>`
      : html``;
  return html`<dt>${t.confirmedCredits}</dt><dd>${num(l.confirmed)} ${t.creditsUnit}</dd><dt>${t.unconfirmedCredits}</dt><dd>${num(l.unconfirmed)} ${t.creditsUnit}</dd>${unpriced}`;
}

/** What unconfirmed credits and unpriced calls are, when the cycle has any. */
function ledgerNotes(ctx: PageContext, o: Overview): Html {
  const { t } = ctx;
  const l = o.ledger;
  if (!l) return html``;
  return html`${l.unconfirmed > 0 ? html`<p class="warn">${t.unconfirmedNote}</p>` : ''}${l.unpriced_calls > 0 ? html`<p>${t.unpricedNote}</p>` : ''}`;
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
      html`<tr><td>${operationWord('operation', r.operation, ctx.lang)}</td><td class="n">${num(r.calls_in_window)}</td><td>${when(r.blocked_until)}</td><td class="n">${num(r.refusals)}</td></tr>`,
  );
  const answers = o.answers.map(
    (a) =>
      html`<tr${a.outcome === 'success' ? '' : html` class="warn"`}><td>${operationWord('operation', a.operation, ctx.lang)}</td><td>${reasonWord(a.outcome, ctx.lang)}</td><td class="n">${num(a.n)}</td></tr>`,
  );
  const x = o.lastExport;
  const exp = x
    ? html`<p>#${x.load_no} · ${x.kind} · ${x.format} · ${x.state} · ${num(x.rows)} rows · ${whenZoned(ctx, x.completed_at ?? x.started_at)}</p>`
    : html`<p>${t.noExport}</p>`;
  const subs = o.subscriptions.map(
    (s) =>
      html`<tr><td>#${s.id}</td><td>${s.format}</td><td>${s.state}${s.disabled_reason ? ` (${s.disabled_reason})` : ''}</td><td>${when(s.failing_since)}</td></tr>`,
  );
  const queue = o.queue.map((q) => `${q.state}: ${num(q.n)}`).join(' · ');
  return html`<section aria-labelledby="rate-h"><h2 id="rate-h">${t.rateUse}</h2>
${table(t.rateUse, [t.operation, t.callsInWindow, zoned(ctx, t.blockedUntil), t.refusalsInRow], rates)}
<h3>${t.upstreamAnswers}</h3>${table(t.upstreamAnswers, [t.operation, t.outcome, t.count], answers)}</section>
<section aria-labelledby="export-h"><h2 id="export-h">${t.lastExport}</h2>${exp}</section>
<section aria-labelledby="deliv-h"><h2 id="deliv-h">${t.deliveries}</h2>
${subs.length === 0 ? html`<p>${t.noSubscriptions}</p>` : table(t.deliveries, [t.subscription, t.format, t.status, zoned(ctx, t.failingSince)], subs)}
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
  const what = listOf(
    ctx,
    ['ent_name', 'history_name', 'uncid', 'pid'].map((c) => label(ctx, c)),
  );
  return html`<form method="get" action="/ui/companies" role="search" class="inline">
<label for="q">${what}</label>
<input id="q" name="q" type="search" value="${q}" aria-describedby="q-hint" autocomplete="off">
<button type="submit">${t.search}</button>
<p id="q-hint" class="hint">${t.searchHint}</p></form>`;
}

export function companiesPage(ctx: PageContext, q: string, hits: readonly SearchHit[] | null): Html {
  const { t } = ctx;
  // Name and credit code say which company it is; its PID is in the link, not in the text.
  const rows = (hits ?? []).map(
    (h) =>
      html`<tr><td>${companyLink(h.pid, h.ent_name)}</td><td>${h.matched === h.ent_name ? '' : h.matched}</td><td>${h.uncid}</td></tr>`,
  );
  const results =
    hits === null
      ? ''
      : hits.length === 0
        ? html`<p>${t.noMatch}</p>`
        : table(`${t.search}: ${q}`, [label(ctx, 'ent_name'), t.matchedOn, label(ctx, 'uncid')], rows);
  return page(ctx, t.companies, html`${searchForm(ctx, q)}${results}`);
}

/** The rows of the current record, in the order a registry page gives them, by column. */
const RECORD_COLUMNS = [
  'ent_name',
  'uncid',
  'legal_person',
  'ent_status',
  'capital_amount',
  'es_date',
  'ent_type',
  'reg_no',
  'reg_org',
  'op_from',
  'operating_to',
  'province',
  'industry_phy',
  'industry_big',
  'op_loc',
  'history_name',
  'op_scope',
  'presence',
] as const;

function recordValue(ctx: PageContext, c: Row, col: (typeof RECORD_COLUMNS)[number]): Html | string {
  const v = (k: string) => (c[k] === null || c[k] === undefined ? null : String(c[k]));
  switch (col) {
    case 'capital_amount':
      return capital(ctx.lang, ctx.t, {
        capital_amount: v('capital_amount'),
        capital_currency: v('capital_currency'),
        reg_cap: v('reg_cap'),
        capital_text: v('capital_text'),
      });
    case 'operating_to':
      return c.operating_perpetual
        ? formatField('OPTO', 'perpetual', ctx.lang)
        : formatField('OPTO', v('operating_to') ?? v('operating_to_text'), ctx.lang);
    case 'presence':
      return tokenLabel('presence', v('presence'), ctx.lang);
    default:
      return formatField(col, v(col), ctx.lang);
  }
}

function recordSection(ctx: PageContext, c: Row): Html {
  const rows = RECORD_COLUMNS.map(
    (col) => html`<tr><th scope="row">${label(ctx, col)}</th><td>${recordValue(ctx, c, col)}</td></tr>`,
  );
  const seen = html`<tr><th scope="row">${label(ctx, 'last_seen_at')}</th><td>${whenZoned(ctx, c.last_seen_at as Date | null)}</td></tr>`;
  return html`<section aria-labelledby="rec-h"><h2 id="rec-h">${ctx.t.currentRecord}</h2>${table(ctx.t.currentRecord, [ctx.t.field, ctx.t.value], [...rows, seen], 'record wide')}</section>`;
}

/** `版本 3 · 周期 2026-11-20`, the words of a version everywhere on the page. */
function versionTitle(ctx: PageContext, version: unknown, cycle: unknown): string {
  return `${label(ctx, 'version')} ${String(version)} · ${label(ctx, 'cycle')} ${String(cycle)}`;
}

function timelineSection(ctx: PageContext, c: Company): Html {
  const { t } = ctx;
  const byVersion = new Map<number, Row[]>();
  for (const ch of c.changes) {
    const v = Number(ch.to_version);
    byVersion.set(v, [...(byVersion.get(v) ?? []), ch]);
  }
  // Each version's capital currency: a capital change reads in the scale of the record above.
  const money = new Map<number, MoneyOf>(
    c.versions.map((v) => [
      Number(v.version),
      { currency: (v.capital_currency as string | null) ?? null, known: v.capital_amount !== null },
    ]),
  );
  const items = c.versions.map((v) => {
    const n = Number(v.version);
    const changes = byVersion.get(n) ?? [];
    const raw = v.raw_response_id
      ? html` · <a href="/ui/raw/${String(v.raw_response_id)}">${t.rawAnswer} #${String(v.raw_response_id)}</a>`
      : '';
    const rows = changes.map((ch) => {
      const field = String(ch.field);
      const isCapital = field === 'REGCAP';
      const before = isCapital ? money.get(Number(ch.from_version)) : undefined;
      const after = isCapital ? money.get(n) : undefined;
      return html`<tr><td class="nowrap">${ch.cycle as string}</td><td class="nowrap">${changeItem(ctx, field, String(ch.kind))}</td><td class="before">${changeValue(ctx, field, ch.before as string | null, before, c.held)}</td><td class="after">${changeValue(ctx, field, ch.after as string | null, after, c.held)}</td><td class="nowrap">${severityCell(ctx, severityBadge(ctx, String(ch.severity)), ch.detail as string | null)}</td></tr>`;
    });
    const body =
      changes.length === 0
        ? html`<p>${n === 1 ? t.noChangesVersion : ''}</p>`
        : table(
            `${t.timeline} · ${versionTitle(ctx, n, v.cycle)}`,
            [
              changeLabel(ctx, 'cycle'),
              changeLabel(ctx, 'field'),
              changeLabel(ctx, 'before'),
              changeLabel(ctx, 'after'),
              changeLabel(ctx, 'severity'),
            ],
            rows,
            'wide changes',
          );
    // The version is valid from its cycle's day; when daybook saw it is secondary.
    const valid = html`${label(ctx, 'valid_from')} ${v.cycle as string} · <span class="observed">${t.observedAt} ${whenZoned(ctx, v.valid_from as Date)}</span>`;
    return html`<li id="v${n}"><h3>${versionTitle(ctx, n, v.cycle)}</h3><p class="meta">${valid}${raw}</p>${body}</li>`;
  });
  return html`<section aria-labelledby="tl-h"><h2 id="tl-h">${t.timeline}</h2><ol class="timeline" reversed>${items}</ol></section>`;
}

/** A list of persons (name, position) of a version, under its heading: `name` and `position` label its columns. */
function people(
  ctx: PageContext,
  list: Row[],
  [caption, name, position]: readonly [string, string, string],
): Html {
  if (list.length === 0) return html`<h3>${caption}</h3><p>${ctx.t.none}</p>`;
  const rows = list.map(
    (p) => html`<tr><td>${p.name as string | null}</td><td>${p.position as string | null}</td></tr>`,
  );
  return html`<h3>${caption}</h3>${table(caption, [name, position], rows)}`;
}

function shareholders(ctx: PageContext, list: Row[], held: Held): Html {
  const caption = label(ctx, 'BE_INVEST');
  if (list.length === 0) return html`<h3>${caption}</h3><p>${ctx.t.none}</p>`;
  const rows = list.map(
    (s) =>
      html`<tr>${shareholderCells(
        {
          name: (s.name as string | null) ?? null,
          type: (s.type as string | null) ?? null,
          pid: (s.pid as string | null) ?? null,
        },
        held,
      )}</tr>`,
  );
  return html`<h3>${caption}</h3>${table(caption, [label(ctx, 'INV'), label(ctx, 'INVTYPE'), label(ctx, 'UNCID')], rows)}`;
}

function asOfSection(ctx: PageContext, c: Company, pid: string, at: string): Html {
  const { t } = ctx;
  const form = html`<form method="get" action="/ui/companies/${encodeURIComponent(pid)}" class="inline">
<label for="at">${t.asOfLabel}</label>
<input id="at" name="at" type="date" value="${at}">
<button type="submit">${t.show}</button></form>`;
  const a = c.asOf;
  const body = a
    ? html`<p class="meta">${versionTitle(ctx, a.version, a.cycle)}</p>
${people(ctx, a.persons, [label(ctx, 'PERSONS'), label(ctx, 'NAME'), label(ctx, 'POSITION')])}
${shareholders(ctx, a.shareholders, c.held)}
${people(ctx, a.clearing_members, [label(ctx, 'CLEARINGINFO.member'), label(ctx, 'liqMem'), label(ctx, 'ligpriSign')])}`
    : html`<p>${t.asOfNone}</p>`;
  return html`<section aria-labelledby="asof-h"><h2 id="asof-h">${t.asOf} ${at || a?.cycle || ''}</h2>${form}${body}</section>`;
}

/** At most this many companies one link away, and two links away, are drawn (the tables list all). */
const GRAPH_INNER = 12;
const GRAPH_OUTER = 24;

/** A related company's name: a link to its page when daybook holds its record. */
function relatedName(ctx: PageContext, r: RelatedCompany, held: Held): Html | string {
  const name = r.related_name ?? ctx.t.unnamed;
  if (!held.has(r.related_pid)) return name;
  // A shareholder renamed since its holder's record was written: both names, the record's second.
  const listed = r.link === 'shareholder' ? r.path.at(-1)?.name : null;
  const also =
    listed && listed !== name ? html` <span class="muted">${fill(ctx.t.listedAs, listed)}</span>` : '';
  return html`${companyLink(r.related_pid, name)}${also}`;
}

/** What the last hop to a related company is, in words. */
function linkWords(ctx: PageContext, r: RelatedCompany): Html | string {
  const { t } = ctx;
  if (r.link === 'shareholder') return t.linkShareholder;
  if (r.link === 'holds') return t.linkHolds;
  return fill(t.linkSameName, r.path.at(-1)?.name ?? '');
}

function statusCell(ctx: PageContext, status: string | null): Html {
  if (status === null) return html`<span class="muted">${ctx.t.notOnRecord}</span>`;
  return isBadStatus(status) ? html`<strong class="sev-high">${status}</strong>` : html`${status}`;
}

/** The graph of the companies around this one: it, the first ring, and the second. */
function relatedGraph(
  ctx: PageContext,
  name: string,
  status: string | null,
  list: readonly RelatedCompany[],
): Html {
  const { t } = ctx;
  const tone = (s: string | null): GraphNode['tone'] =>
    s === null ? 'unknown' : isBadStatus(s) ? 'bad' : 'ok';
  const inner = list.filter((r) => r.hops === 1).slice(0, GRAPH_INNER);
  const shown = new Set(inner.map((r) => r.related_pid));
  const outer = list.filter((r) => r.hops === 2 && shown.has(r.path[0]?.to ?? '')).slice(0, GRAPH_OUTER);
  const self = '\u0000self';
  const nodes: GraphNode[] = [
    { id: self, name, status: status ?? t.notOnRecord, tone: tone(status), hop: 0 },
    ...[...inner, ...outer].map(
      (r): GraphNode => ({
        id: r.related_pid,
        name: r.related_name ?? t.unnamed,
        status: r.related_status ?? t.notOnRecord,
        tone: tone(r.related_status),
        hop: r.hops === 1 ? 1 : 2,
        ...(r.hops === 2 ? { parent: r.path[0]?.to as string } : {}),
      }),
    ),
  ];
  const edges: GraphEdge[] = [...inner, ...outer].map((r) => ({
    from: r.hops === 1 ? self : (r.path[0]?.to as string),
    to: r.related_pid,
    dashed: r.link === 'same_name',
  }));
  const hidden = list.length - inner.length - outer.length;
  const words = [...inner, ...outer].map(
    (r) => `${r.related_name ?? t.unnamed} (${r.related_status ?? t.notOnRecord})`,
  );
  const desc = `${t.relatedGraphDesc} ${words.join('; ')}.${hidden > 0 ? ` ${fill(t.andMore, String(hidden))}` : ''}`;
  return relationGraph('related-graph', t.relatedGraph, desc, nodes, edges);
}

/** 关联关系: shareholdings both ways, same-name persons, and what lies two links away, on the day shown. */
function relatedSection(ctx: PageContext, c: Company, at: string): Html {
  const { t } = ctx;
  const heading = html`<h2 id="rel-h">${t.related}${at ? ` · ${t.asOf} ${at}` : ''}</h2>`;
  if (c.related.length === 0)
    return html`<section aria-labelledby="rel-h">${heading}<p>${t.relatedNone}</p></section>`;
  const first = c.related.filter((r) => r.hops === 1);
  const holdings = first
    .filter((r) => r.link !== 'same_name')
    .map(
      (r) =>
        html`<tr><td>${relatedName(ctx, r, c.held)}</td><td>${linkWords(ctx, r)}</td><td>${r.path.at(-1)?.position ?? ''}</td><td>${statusCell(ctx, r.related_status)}</td><td class="nowrap">${c.held.get(r.related_pid)?.uncid ?? ''}</td></tr>`,
    );
  const same = first
    .filter((r) => r.link === 'same_name')
    .map(
      (r) =>
        html`<tr><td>${r.path.at(-1)?.name ?? ''} <span class="tag">${t.sameNameTag}</span></td><td>${relatedName(ctx, r, c.held)}</td><td>${r.path.at(-1)?.position ?? ''}</td><td>${statusCell(ctx, r.related_status)}</td></tr>`,
    );
  const byPid = new Map(first.map((r) => [r.related_pid, r]));
  const far = c.related
    .filter((r) => r.hops === 2)
    .map((r) => {
      const via = byPid.get(r.path[0]?.to ?? '');
      return html`<tr><td>${relatedName(ctx, r, c.held)}</td><td>${statusCell(ctx, r.related_status)}</td><td>${via ? relatedName(ctx, via, c.held) : ''}</td><td>${linkWords(ctx, r)}</td></tr>`;
    });
  const stateOf = String(c.current.ent_status ?? '') || null;
  return html`<section aria-labelledby="rel-h">${heading}
${relatedGraph(ctx, String(c.current.ent_name), stateOf, c.related)}
<h3>${t.shareholdings}</h3>${
    holdings.length === 0
      ? html`<p>${t.none}</p>`
      : table(
          t.shareholdings,
          [t.company, t.relation, label(ctx, 'INVTYPE'), t.status, label(ctx, 'UNCID')],
          holdings,
        )
  }
<h3>${t.sameName}</h3><p class="meta">${t.sameNameNote}</p>${
    same.length === 0
      ? html`<p>${t.none}</p>`
      : table(t.sameName, [t.person, t.company, t.positionThere, t.status], same)
  }
<h3>${t.twoLinks}</h3>${
    far.length === 0
      ? html`<p>${t.none}</p>`
      : table(t.twoLinks, [t.company, t.status, t.through, t.relation], far)
  }</section>`;
}

function eventsAndPlanner(ctx: PageContext, c: Company): Html {
  const { t } = ctx;
  const events = c.events.map(
    (e) =>
      html`<tr><td>${observationLabel(ctx, String(e.kind))}</td><td>${e.cycle as string}</td><td>${e.keyword as string | null}</td><td>${observationDetail(ctx, String(e.kind), e.detail as string | null, c.held)}</td><td>${when(e.observed_at as Date)}</td></tr>`,
  );
  const watch = c.watch.map(
    (w) =>
      html`<tr><td>${w.keyword as string}</td><td class="n">${num(w.change_rate as number | null, 4)}</td><td>${when(w.due_at as Date | null)}</td><td>${when(w.last_refreshed_at as Date | null)}</td></tr>`,
  );
  return html`<section aria-labelledby="ev-h"><h2 id="ev-h">${t.events}</h2>${
    events.length === 0
      ? html`<p>${t.none}</p>`
      : table(t.events, [t.event, label(ctx, 'cycle'), t.keyword, t.detail, zoned(ctx, t.observedAt)], events)
  }</section>
<section aria-labelledby="pl-h"><h2 id="pl-h">${t.planner}</h2>${
    watch.length === 0
      ? html`<p>${t.notWatched}</p>`
      : table(t.planner, [t.keyword, t.rate, zoned(ctx, t.nextRefresh), zoned(ctx, t.lastRefreshed)], watch)
  }</section>`;
}

export function companyPage(ctx: PageContext, pid: string, c: Company, at: string): Html {
  const name = String(c.current.ent_name);
  const uncid = c.current.uncid as string | null;
  const code = uncid ? html`<p class="meta">${label(ctx, 'uncid')} ${uncid}</p>` : '';
  const nav = html`<p><a href="/ui/changes?pid=${encodeURIComponent(pid)}">${ctx.t.companyChanges}</a></p>`;
  return page(
    ctx,
    name,
    html`${code}${nav}${recordSection(ctx, c.current)}${timelineSection(ctx, c)}${asOfSection(ctx, c, pid, at)}${relatedSection(ctx, c, at)}${eventsAndPlanner(ctx, c)}`,
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
  const company = listOf(ctx, [label(ctx, 'uncid'), label(ctx, 'pid')]);
  return html`<form method="get" action="/ui/changes" class="filters" aria-label="${t.filters}">
<div><label for="severity">${changeLabel(ctx, 'severity')}</label><select id="severity" name="severity">${opt('', t.any, !f.severity)}${['high', 'medium', 'low'].map((s) => opt(s, tokenLabel('severity', s, ctx.lang), f.severity === s))}</select></div>
<div><label for="category">${changeLabel(ctx, 'category')}</label><select id="category" name="category">${opt('', t.any, !f.category)}${categories.map((c) => opt(c, tokenLabel('category', c, ctx.lang), f.category === c))}</select></div>
<div><label for="from">${t.from}</label><input id="from" name="from" type="date" value="${f.from ?? ''}"></div>
<div><label for="to">${t.to}</label><input id="to" name="to" type="date" value="${f.to ?? ''}"></div>
<div><label for="pid">${company}</label><input id="pid" name="pid" type="text" value="${f.pid ?? ''}"></div>
<div><button type="submit">${t.filter}</button></div></form>`;
}

/** The currency context of a change row's before and after (a REGCAP row only). */
export function rowMoney(r: ChangeRow): { before: MoneyOf | undefined; after: MoneyOf | undefined } {
  if (r.field !== 'REGCAP') return { before: undefined, after: undefined };
  return {
    before: { currency: r.before_currency, known: r.before_known === true },
    after: { currency: r.after_currency, known: r.after_known === true },
  };
}

export function changesPage(
  ctx: PageContext,
  f: ChangeFilter,
  rows: readonly ChangeRow[],
  next: number | null,
  categories: readonly string[],
  held: Held,
): Html {
  const { t } = ctx;
  const body = rows.map((r) => {
    const money = rowMoney(r);
    // The version the change made, on the company's page: its anchor is v<n>.
    const at = `/ui/companies/${encodeURIComponent(r.pid)}?at=${r.cycle}#v${r.to_version}`;
    return html`<tr id="change-${r.change_id}"><td class="nowrap">${when(r.detected_at)}</td><td class="nowrap"><a href="${at}">${r.cycle}</a></td><td>${companyLink(r.pid, r.current_name)}</td><td class="nowrap">${r.uncid}</td><td class="nowrap">${changeItem(ctx, r.field, r.kind)}</td><td class="before">${changeValue(ctx, r.field, r.before, money.before, held)}</td><td class="after">${changeValue(ctx, r.field, r.after, money.after, held)}</td><td class="nowrap">${severityCell(ctx, severityBadge(ctx, r.severity), r.detail)}</td></tr>`;
  });
  const pager = html`<nav class="pager" aria-label="${t.next}">${
    ctx.query.get('before') ? html`<a href="/ui/changes?${filterQuery(f)}">${t.first}</a>` : ''
  }${next !== null ? html` <a href="/ui/changes?${filterQuery(f, { before: String(next) })}" rel="next">${t.next}</a>` : ''}</nav>`;
  return page(
    ctx,
    t.changes,
    html`${changeFilterForm(ctx, f, categories)}<p><a href="/ui/changes.csv?${filterQuery(f, { lang: ctx.lang })}" download>${t.downloadCsv}</a></p>${
      rows.length === 0
        ? html`<p>${t.noChanges}</p>`
        : table(
            t.changes,
            [
              zoned(ctx, changeLabel(ctx, 'detected_at')),
              changeLabel(ctx, 'cycle'),
              changeLabel(ctx, 'ent_name'),
              changeLabel(ctx, 'uncid'),
              changeLabel(ctx, 'field'),
              changeLabel(ctx, 'before'),
              changeLabel(ctx, 'after'),
              changeLabel(ctx, 'severity'),
            ],
            body,
            'wide changes',
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
        ? `${reasonWord(w.last_outcome, ctx.lang)}: ${w.last_error ?? ''} (${w.last_cycle ?? ''})`
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
        zoned(ctx, t.lastRefreshed),
        t.daysStale,
        t.rate,
        zoned(ctx, t.nextDue),
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
        : table(
            `${t.trending} ${date ?? ''}`,
            [
              productLabel(ctx, 'position'),
              productLabel(ctx, 'name'),
              productLabel(ctx, 'tagline'),
              productLabel(ctx, 'votes_count'),
              productLabel(ctx, 'comments_count'),
            ],
            body,
          )
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
    `${productLabel(ctx, 'votes_count')}: ${String(c.name)}`,
    t.trajectoryDesc,
    p.pulls.map((x, i) => ({ label: labels[i] as string, value: x.votes_count })),
  );
  const rank = lineChart(
    'rank',
    `${productLabel(ctx, 'position')}: ${String(c.name)}`,
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
      html`<li><p>${x.body}</p><p class="meta">${x.created_at ? whenZoned(ctx, x.created_at) : (x.created_at_text ?? '')}</p></li>`,
  );
  return page(
    ctx,
    String(c.name),
    html`<p class="tagline">${c.tagline as string | null}</p>
<dl class="facts"><dt>${productLabel(ctx, 'url')}</dt><dd>${url ? html`<a href="${url}" rel="noopener noreferrer nofollow">${url}</a>` : (c.url as string | null)}</dd>
<dt>${productLabel(ctx, 'votes_count')}</dt><dd>${num(c.latest_votes as number | null)}</dd><dt>${productLabel(ctx, 'comments_count')}</dt><dd>${num(c.latest_comments as number | null)}</dd>
<dt>${productLabel(ctx, 'topics')}</dt><dd>${topics.length === 0 ? t.none : html`<ul class="tags">${topics.map((x) => html`<li>${x}</li>`)}</ul>`}</dd></dl>
<p>${c.description as string | null}</p>
<section aria-labelledby="traj-h"><h2 id="traj-h">${t.trajectory}</h2>
<figure>${votes}<figcaption>${productLabel(ctx, 'votes_count')}</figcaption></figure>
<figure>${rank}<figcaption>${productLabel(ctx, 'position')}</figcaption></figure>
<details><summary>${t.dataTable}</summary>${table(
      t.trajectory,
      [
        productLabel(ctx, 'list_date'),
        zoned(ctx, productLabel(ctx, 'fetched_at')),
        productLabel(ctx, 'position'),
        productLabel(ctx, 'votes_count'),
      ],
      pulls,
    )}</details></section>
<section aria-labelledby="com-h"><h2 id="com-h">${productLabel(ctx, 'comments')}</h2>${comments.length === 0 ? html`<p>${t.none}</p>` : html`<ul class="comments">${comments}</ul>`}</section>`,
  );
}

export function rawPage(ctx: PageContext, r: RawAnswer): Html {
  const { t } = ctx;
  return page(
    ctx,
    `${t.rawTitle} #${r.id}`,
    html`<dl class="facts"><dt>${t.operation}</dt><dd>${operationWord('operation', r.operation, ctx.lang)}</dd><dt>${t.outcome}</dt><dd>${reasonWord(r.outcome, ctx.lang)}</dd><dt>${t.httpStatus}</dt><dd>${r.http_status ?? ''}</dd><dt>${t.cycle}</dt><dd>${r.cycle ?? ''}</dd><dt>${t.observedAt}</dt><dd>${whenZoned(ctx, r.landed_at)}</dd></dl>
<h2>${t.params}</h2><pre tabindex="0">${r.params}</pre><h2>${t.body}</h2><pre tabindex="0">${r.body ?? (r.has_bytes ? '(bytes)' : '')}</pre>`,
  );
}

/** A page saying what went wrong: not found, bad input. */
export function messagePage(ctx: PageContext, title: string, text: string): Html {
  return page(ctx, title, html`<p>${text}</p>`);
}

/**
 * The sign-in page answered with 401: a form sending the token as `?token=`, which sets the cookie
 * and comes back to the address asked for. On a console page the form has no action, so it goes
 * to this very address, `#v3` and all (a chat message's link to a version lands there once signed
 * in); the address's own query (`?at=`) goes along as hidden fields, since a GET form replaces it.
 */
export function loginPage(ctx: PageContext): Html {
  const { t } = ctx;
  const here = ctx.path.startsWith('/ui');
  const kept = here
    ? [...ctx.query]
        .filter(([k]) => k !== 'token')
        .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)
    : [];
  return page(
    ctx,
    t.loginTitle,
    html`<p>${t.loginText}</p><form method="get"${here ? '' : html` action="/ui/"`} class="inline">${kept}<label for="token">${t.token}</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">${t.signIn}</button></form>`,
  );
}

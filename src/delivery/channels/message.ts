/**
 * What a chat or mail message says, before any format, in the words of the field catalogue
 * (src/terms/fields.ts): never a field code, a token or an internal id.
 *
 * - A company's changes of one cycle are one message: the company by name and 统一社会信用代码,
 *   each change as `label: before → after` (a rename is one line), its severity the highest of
 *   them, a link to the company's page in the console at the version that changed.
 * - The digest lists the cycle's companies, each with its changes under it, and links to the
 *   cycle's changes in the console.
 * - A burst folds by company: every company is an item, none is dropped.
 * - An operator event (a cycle, an entry, an endpoint) says what happened, in words.
 *
 * Text from the upstream stays raw here; each renderer makes it inert for its format (inert.ts).
 * Pure.
 */
import type { Envelope } from '../../events/feed.ts';
import type { Severity } from '../../terms/changes.ts';
import {
  eventTypeLabel,
  fieldLabel,
  formatChangeValue,
  holderPid,
  type Lang,
  reasonWord,
  tokenLabel,
} from '../../terms/fields.ts';
import { WORDS } from './words.ts';

/** A piece of text: ours (safe as is) or the upstream's (made inert by the renderer). */
export type Part = { ours: string } | { theirs: string };

/** One line of a message, with the lines under it (a company, and its changes). */
export interface Line {
  /** Shown first, in words, when the line has one. */
  severity: Severity | null;
  parts: Part[];
  sub: Part[][];
}

export interface Message {
  lang: Lang;
  severity: Severity;
  /** The title: ours, with the company's name (theirs) in it when there is one. */
  title: Part[];
  /** Label and value lines. */
  facts: { label: string; value: Part[] }[];
  /** A sentence before the items (the digest's counts). */
  intro: string | null;
  items: Line[];
  link: string | null;
}

/** What daybook knows of the companies a message names, read when it is sent. */
export interface Known {
  /** The company's 统一社会信用代码, when daybook holds one. */
  uscc(pid: string): string | null;
  /** The company's name now, when the event has none. */
  name(pid: string): string | null;
  /** The currency of a version's registered capital (ISO code). */
  currency(pid: string, version: number | null): string | null;
}

/** Nothing known: names and codes from the events alone. */
export const NOTHING_KNOWN: Known = { uscc: () => null, name: () => null, currency: () => null };

const RANK: Record<Severity, number> = { high: 0, medium: 1, low: 2 };

const str = (v: unknown): string | null => (v === undefined || v === null ? null : String(v));
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The most severe of `xs`. */
export function worst(xs: readonly Severity[]): Severity {
  return xs.reduce<Severity>((s, x) => (RANK[x] < RANK[s] ? x : s), 'low');
}

function base(publicUrl: string | undefined): string | null {
  return publicUrl ? publicUrl.replace(/\/+$/, '') : null;
}

/** The company's page in the console, at the cycle and version that changed. */
export function companyLink(
  publicUrl: string | undefined,
  pid: string,
  cycle: string | null,
  version: number | null,
): string | null {
  const b = base(publicUrl);
  if (!b) return null;
  const at = cycle ? `?at=${encodeURIComponent(cycle)}` : '';
  return `${b}/ui/companies/${encodeURIComponent(pid)}${at}${version ? `#v${version}` : ''}`;
}

/** The cycle's changes in the console. */
export function changesLink(publicUrl: string | undefined, cycle: string): string | null {
  const b = base(publicUrl);
  const c = encodeURIComponent(cycle);
  return b ? `${b}/ui/changes?from=${c}&to=${c}` : null;
}

/** The company as a person names it: its name and 统一社会信用代码 (the PID only when nothing else is known). */
export function companyParts(pid: string, name: string | null, known: Known, lang: Lang): Part[] {
  const n = name ?? known.name(pid);
  const uscc = known.uscc(pid);
  const w = WORDS[lang];
  const parts: Part[] = [];
  if (n) parts.push({ theirs: n });
  if (uscc) parts.push({ ours: n ? w.usccOpen : '' }, { theirs: uscc }, { ours: n ? w.usccClose : '' });
  else if (!n) parts.push({ ours: `${w.companyId} ` }, { theirs: pid });
  return parts;
}

/** One change of a company event as parts: `label: before → after`, or what happened. */
function changeLine(e: Envelope, known: Known, lang: Lang): Part[] {
  const w = WORDS[lang];
  const d = e.data;
  if (e.type.startsWith('related.')) return relatedLine(e, known, lang);
  const field = str(d.field);
  if (field === null) return observationLine(e, lang);
  const before = str(d.previous);
  const after = str(d.current);
  const pid = e.pid ?? '';
  const usccOf = (p: string) => known.uscc(p);
  const value = (v: string, version: number | null): Part => ({
    theirs: formatChangeValue(field, v, lang, { currency: known.currency(pid, version), usccOf }),
  });
  const label = field === 'CLEARINGINFO' ? eventTypeLabel(e.type, lang) : fieldLabel(field, lang);
  const parts: Part[] = [{ ours: `${label}${w.colon}` }];
  if (field === 'CLEARINGINFO') {
    parts.pop();
    parts.push({ ours: label });
    return parts;
  }
  const from = num(d.from_version);
  const to = num(d.to_version);
  if (before !== null && after !== null) parts.push(value(before, from), { ours: ' → ' }, value(after, to));
  else if (after !== null) parts.push({ ours: `${tokenLabel('kind', 'added', lang)} ` }, value(after, to));
  else if (before !== null)
    parts.push({ ours: `${tokenLabel('kind', 'removed', lang)} ` }, value(before, from));
  else parts.push({ ours: w.empty });
  return parts;
}

/**
 * A related company's event as a line: the shareholder by name and code, its change as its own
 * message says it, and the chain of holdings to the company (`C → B → A`: C holds B, which holds A).
 */
function relatedLine(e: Envelope, known: Known, lang: Lang): Part[] {
  const w = WORDS[lang];
  const related = (e.data.related ?? {}) as { pid?: unknown; name?: unknown; uscc?: unknown };
  const pid = str(related.pid) ?? '';
  const code = str(related.uscc);
  const withCode: Known = { ...known, uscc: (p) => (p === pid && code ? code : known.uscc(p)) };
  const change = (e.data.change ?? {}) as Record<string, unknown>;
  // The change as the related company's own event says it.
  const own = changeLine({ ...e, type: companyTypeOf(e.type), pid, data: change }, withCode, lang);
  const path = Array.isArray(e.data.path) ? (e.data.path as { pid?: unknown; name?: unknown }[]) : [];
  const who = companyParts(pid, str(related.name), withCode, lang);
  // In Chinese a closing bracket needs no space after it.
  const closed = lang === 'zh' && withCode.uscc(pid) !== null && str(related.name) !== null;
  const parts: Part[] = [
    { ours: w.shareholder },
    ...who,
    { ours: lang === 'zh' ? (closed ? '' : ' ') : ': ' },
    ...own,
  ];
  if (path.length <= 2) return [...parts, { ours: ` · ${w.directShareholder}` }];
  parts.push({ ours: ` · ${w.heldThrough}${w.colon}` });
  [...path].reverse().forEach((p, i) => {
    if (i > 0) parts.push({ ours: ' → ' });
    const name = str(p.name);
    parts.push(name ? { theirs: name } : { ours: `${w.companyId} ${str(p.pid) ?? ''}` });
  });
  return parts;
}

/** The company event type a related event repeats (`related.revoked` → `company.revoked`). */
function companyTypeOf(type: string): Envelope['type'] {
  return type.replace(/^related\./, 'company.') as Envelope['type'];
}

/** A non-field company event (disappeared, resolution changed …) as a line. */
function observationLine(e: Envelope, lang: Lang): Part[] {
  const parts: Part[] = [{ ours: eventTypeLabel(e.type, lang) }];
  const keyword = str(e.data.keyword);
  if (keyword) parts.push({ ours: ` · ${WORDS[lang].keyword}${WORDS[lang].colon}` }, { theirs: keyword });
  return parts;
}

/**
 * The change lines of one company's events, in a stable order: the most severe first, then by
 * label. A rename is one line: the former-name change that only records the old name is left
 * out when the name itself changed.
 */
export function companyLines(
  events: readonly Envelope[],
  known: Known,
  lang: Lang,
): { severity: Severity; parts: Part[] }[] {
  const renamed = events.find((e) => e.data.field === 'ENTNAME' && e.data.previous != null);
  const oldName = renamed ? str(renamed.data.previous) : null;
  const kept = events.filter(
    (e) =>
      !(oldName !== null && e.data.field === 'HISTORYNAME' && (str(e.data.current) ?? '').includes(oldName)),
  );
  const lines = kept.map((e) => ({
    severity: e.severity,
    parts: changeLine(e, known, lang),
    seq: e.sequence,
  }));
  const text = (ps: Part[]) => ps.map((p) => ('ours' in p ? p.ours : p.theirs)).join('');
  lines.sort(
    (a, b) =>
      RANK[a.severity] - RANK[b.severity] || text(a.parts).localeCompare(text(b.parts)) || a.seq - b.seq,
  );
  return lines.map(({ severity, parts }) => ({ severity, parts }));
}

/** The name the latest of `events` gives its company. */
function latestName(events: readonly Envelope[]): string | null {
  return [...events].reverse().find((e) => e.name)?.name ?? null;
}

/** The highest `to_version` of the events: the version a link opens. */
function lastVersion(events: readonly Envelope[]): number | null {
  const vs = events.map((e) => num(e.data.to_version)).filter((v): v is number => v !== null);
  return vs.length ? Math.max(...vs) : null;
}

/**
 * What makes a message of the events of one send: in `lang`, with what daybook knows (`known`) of the
 * companies they name, its link into the console at `publicUrl` when there is one.
 */
type MessageMaker = (events: readonly Envelope[], lang: Lang, known: Known, publicUrl?: string) => Message;

/** The message of one company's events of one cycle. */
export const companyMessage: MessageMaker = (events, lang, known, publicUrl) => {
  const first = events[0];
  if (!first?.pid) throw new Error('a company message needs the events of one company');
  const w = WORDS[lang];
  const pid = first.pid;
  const name = latestName(events);
  const lines = companyLines(events, known, lang);
  const severity = worst(lines.map((l) => l.severity));
  const company = companyParts(pid, name, known, lang);
  const head = lines[0];
  const what = head
    ? eventTypeLabel(events.find((e) => e.severity === severity)?.type ?? first.type, lang)
    : '';
  const title: Part[] = [
    { ours: `[${tokenLabel('severity', severity, lang)}] ` },
    ...(name ? [{ theirs: name } as Part] : company),
    { ours: ` · ${what}${lines.length > 1 ? w.andMore(lines.length) : ''}` },
  ];
  const cycle = first.cycle ?? str(first.data.cycle);
  const facts: Message['facts'] = [{ label: w.company, value: company }];
  if (cycle) facts.push({ label: w.cycle, value: [{ ours: cycle }] });
  facts.push({ label: w.severity, value: [{ ours: tokenLabel('severity', severity, lang) }] });
  return {
    lang,
    severity,
    title,
    facts,
    intro: null,
    items: lines.map((l) => ({ severity: lines.length > 1 ? l.severity : null, parts: l.parts, sub: [] })),
    link: companyLink(publicUrl, pid, cycle, lastVersion(events)),
  };
};

/** The message of an operator event: a cycle, an entry or an endpoint. */
export function operatorMessage(e: Envelope, lang: Lang): Message {
  const w = WORDS[lang];
  const sev = tokenLabel('severity', e.severity, lang);
  const title: Part[] = [{ ours: `[${sev}] ${eventTypeLabel(e.type, lang)}` }];
  const facts: Message['facts'] = [];
  const cycle = e.cycle ?? str(e.data.cycle);
  if (cycle) facts.push({ label: w.cycle, value: [{ ours: cycle }] });
  const keyword = str(e.data.keyword);
  if (keyword) facts.push({ label: w.keyword, value: [{ theirs: keyword }] });
  const reason =
    str(e.data.message) ?? (str(e.data.reason) === null ? null : reasonWord(str(e.data.reason), lang));
  if (reason) facts.push({ label: w.reason, value: [{ theirs: reason }] });
  const credits = num(e.data.credits);
  if (credits !== null) facts.push({ label: w.credits, value: [{ ours: w.creditCount(credits) }] });
  const url = str(e.data.url);
  if (url && e.type.startsWith('endpoint.')) facts.push({ label: w.endpoint, value: [{ theirs: url }] });
  facts.push({ label: w.severity, value: [{ ours: sev }] });
  return { lang, severity: e.severity, title, facts, intro: null, items: [], link: null };
}

/** A company of a cycle's digest, as the message needs it. */
interface DigestCompanyData {
  pid: string;
  name: string | null;
  changes: {
    type: string;
    severity: Severity;
    field: string | null;
    previous: string | null;
    current: string | null;
    related?: unknown;
    path?: unknown;
  }[];
}

/** A digest's change as the envelope of an event, so one function writes every change line. */
function digestEnvelope(
  c: DigestCompanyData,
  x: DigestCompanyData['changes'][number],
  cycle: string,
  i: number,
): Envelope {
  return {
    id: '',
    type: x.type as Envelope['type'],
    sequence: i,
    company_sequence: null,
    severity: x.severity,
    pid: c.pid,
    name: c.name,
    cycle,
    detected_at: '',
    effective_date: null,
    raw_response_id: null,
    data: x.type.startsWith('related.')
      ? {
          related: x.related,
          path: x.path,
          change: { field: x.field, previous: x.previous, current: x.current },
        }
      : { field: x.field, previous: x.previous, current: x.current, to_version: null, from_version: null },
  };
}

/** The name a group of events is ordered by: its company's name, else its type's words. */
function groupName(g: readonly Envelope[], known: Known, lang: Lang): string {
  const first = g[0];
  if (!first) return '';
  if (!first.pid) return eventTypeLabel(first.type, lang);
  return latestName(g) ?? known.name(first.pid) ?? first.pid;
}

/** Groups of events (one company's, or one operator event) in the order messages go: severity, then company. */
export function inSendOrder<T>(
  groups: readonly T[],
  events: (g: T) => readonly Envelope[],
  known: Known,
  lang: Lang,
): T[] {
  const keyed = groups.map((g) => {
    const es = events(g);
    return {
      g,
      severity: worst(es.map((e) => e.severity)),
      name: groupName(es, known, lang),
      seq: es[0]?.sequence ?? 0,
    };
  });
  // A digest goes after the changes it sums up.
  const digest = (x: (typeof keyed)[number]) => (events(x.g)[0]?.type === 'digest.daily' ? 1 : 0);
  keyed.sort(
    (a, b) =>
      digest(a) - digest(b) ||
      RANK[a.severity] - RANK[b.severity] ||
      a.name.localeCompare(b.name, 'zh') ||
      a.seq - b.seq,
  );
  return keyed.map((x) => x.g);
}

/** A group as one item: a company with its changes under it, or an operator event in words. */
function groupItem(g: readonly Envelope[], known: Known, lang: Lang): Line {
  const first = g[0] as Envelope;
  if (!first.pid)
    return { severity: first.severity, parts: [{ ours: eventTypeLabel(first.type, lang) }], sub: [] };
  const lines = companyLines(g, known, lang);
  const name = latestName(g);
  return {
    severity: worst(lines.map((l) => l.severity)),
    parts: companyParts(first.pid, name, known, lang),
    sub: lines.map((l) =>
      lines.length > 1 ? [{ ours: `[${tokenLabel('severity', l.severity, lang)}] ` }, ...l.parts] : l.parts,
    ),
  };
}

/** The message of a `digest.daily`: the counts, then each company with its changes under it. */
export function digestMessage(
  e: Envelope,
  lang: Lang,
  known: Known = NOTHING_KNOWN,
  publicUrl?: string,
): Message {
  const w = WORDS[lang];
  const cycle = str(e.data.cycle) ?? e.cycle ?? '';
  const companies = (Array.isArray(e.data.companies) ? e.data.companies : []) as DigestCompanyData[];
  const groups = companies
    .map((c) => (c.changes ?? []).map((x, i) => digestEnvelope(c, x, cycle, i)))
    .filter((g) => g.length > 0);
  const items = inSendOrder(groups, (g) => g, known, lang).map((g) => groupItem(g, known, lang));
  const counts = { high: 0, medium: 0, low: 0 };
  for (const c of companies)
    for (const x of c.changes ?? []) counts[x.severity] = (counts[x.severity] ?? 0) + 1;
  return {
    lang,
    severity: items[0]?.severity ?? 'low',
    title: [{ ours: w.digestTitle(cycle) }],
    facts: [{ label: w.cycle, value: [{ ours: cycle }] }],
    intro:
      companies.length === 0
        ? w.noChanges
        : w.digestSummary(companies.length, counts.high, counts.medium, counts.low),
    items,
    link: changesLink(publicUrl, cycle),
  };
}

/**
 * `items` by company and cycle (one message each), every item without a company (a digest, an
 * operator event) alone, in the order of their first item.
 */
export function groupedBy<T>(items: readonly T[], event: (x: T) => Envelope): T[][] {
  const groups = new Map<string, T[]>();
  for (const x of items) {
    const e = event(x);
    const key = e.pid ? `${e.pid}|${e.cycle ?? ''}` : `#${e.sequence}|${e.id}`;
    groups.set(key, [...(groups.get(key) ?? []), x]);
  }
  return [...groups.values()];
}

/**
 * Several groups of events in one message (each one company's, or an operator event), for a
 * channel that would otherwise be sent more than its rate limit allows: every group is an item,
 * in the order given, a company's changes under it; nothing is dropped.
 */
export function foldedMessage(
  groups: readonly (readonly Envelope[])[],
  lang: Lang,
  known: Known = NOTHING_KNOWN,
  publicUrl?: string,
): Message {
  const nonEmpty = groups.filter((g) => g.length > 0);
  const items = nonEmpty.map((g) => groupItem(g, known, lang));
  const events = nonEmpty.flat();
  const severity = worst(events.map((e) => e.severity));
  const cycles = [...new Set(events.map((e) => e.cycle).filter((c): c is string => !!c))];
  return {
    lang,
    severity,
    title: [{ ours: WORDS[lang].foldedTitle(nonEmpty.filter((g) => g[0]?.pid).length) }],
    facts: [
      ...(cycles.length === 1 ? [{ label: WORDS[lang].cycle, value: [{ ours: cycles[0] as string }] }] : []),
      { label: WORDS[lang].severity, value: [{ ours: tokenLabel('severity', severity, lang) }] },
    ],
    intro: null,
    items,
    link: cycles.length === 1 ? changesLink(publicUrl, cycles[0] as string) : null,
  };
}

/** The message of the events of one send: one company's, a digest, or an operator event. */
export const messageOf: MessageMaker = (events, lang, known, publicUrl) => {
  const first = events[0];
  if (!first) throw new Error('a message needs at least one event');
  const groups = groupedBy(events, (e) => e);
  if (groups.length > 1) return foldedMessage(groups, lang, known, publicUrl);
  if (first.type === 'digest.daily') return digestMessage(first, lang, known, publicUrl);
  if (!first.pid) return operatorMessage(first, lang);
  return companyMessage(events, lang, known, publicUrl);
};

/** Every PID a set of events names: the companies, and the shareholders their changes name. */
export function pidsNamed(events: readonly Envelope[]): string[] {
  const pids = new Set<string>();
  for (const e of events) {
    if (e.pid) pids.add(e.pid);
    const changes =
      e.type === 'digest.daily' && Array.isArray(e.data.companies)
        ? (e.data.companies as DigestCompanyData[]).flatMap((c) => {
            pids.add(c.pid);
            return c.changes ?? [];
          })
        : [{ field: str(e.data.field), previous: str(e.data.previous), current: str(e.data.current) }];
    for (const c of changes)
      if (c.field === 'BE_INVEST')
        for (const v of [c.previous, c.current]) {
          const p = holderPid(v);
          if (p) pids.add(p);
        }
  }
  return [...pids];
}

/**
 * What a chat or mail message says, before any format: a title, the facts (company, what changed
 * from what to what, the severity, the cycle), the items of a digest or of folded events, and a
 * link when DAYBOOK_PUBLIC_URL is set. Text from the upstream stays raw here; each renderer
 * escapes it for its format (inert.ts). Pure.
 */
import type { DigestCompany } from '../../events/digest.ts';
import type { Envelope } from '../../events/feed.ts';
import { type Lang, severityLabel, typeLabel, WORDS } from './words.ts';

/** A piece of text: ours (safe as is) or the upstream's (escaped by the renderer). */
export type Part = { ours: string } | { theirs: string };

/** One line of a digest or a folded message: a change at one company. */
export interface Item {
  severity: Envelope['severity'];
  company: string | null;
  pid: string | null;
  what: string;
  field: string | null;
  before: string | null;
  after: string | null;
  cycle: string | null;
}

export interface Message {
  lang: Lang;
  severity: Envelope['severity'];
  /** The title: ours, with the company's name (theirs) in it when there is one. */
  title: Part[];
  /** Label and value lines. */
  facts: { label: string; value: Part[] }[];
  /** A sentence before the items (the digest's counts). */
  intro: string | null;
  items: Item[];
  link: string | null;
}

const str = (v: unknown): string | null => (v === undefined || v === null ? null : String(v));

/** The link to an event in the pull feed of the admin server at `publicUrl`. */
export function eventLink(publicUrl: string | undefined, e: Envelope): string | null {
  if (!publicUrl) return null;
  return `${publicUrl.replace(/\/+$/, '')}/events?after=${Math.max(0, e.sequence - 1)}&limit=1`;
}

/** `before → after` of an item or an event, as parts. */
export function changeParts(x: Pick<Item, 'field' | 'before' | 'after'>, lang: Lang): Part[] {
  const parts: Part[] = [];
  if (x.field) parts.push({ theirs: x.field }, { ours: ': ' });
  if (x.before !== null || x.after !== null)
    parts.push(
      { theirs: x.before ?? WORDS[lang].empty },
      { ours: ' → ' },
      { theirs: x.after ?? WORDS[lang].empty },
    );
  return parts;
}

/** The message of one event. */
export function eventMessage(e: Envelope, lang: Lang, publicUrl?: string): Message {
  if (e.type === 'digest.daily') return digestMessage(e, lang, publicUrl);
  const w = WORDS[lang];
  const sev = severityLabel(e.severity, lang);
  const what = typeLabel(e.type, lang);
  const company = e.name ?? e.pid;
  const title: Part[] = [{ ours: `[${sev}] ${what}` }];
  if (company) title.push({ ours: ' · ' }, { theirs: company });
  const facts: Message['facts'] = [];
  if (e.pid)
    facts.push({
      label: w.company,
      value: [{ theirs: e.name ?? '' }, { ours: ' (' }, { theirs: e.pid }, { ours: ')' }],
    });
  const change = changeParts(
    { field: str(e.data.field), before: str(e.data.previous), after: str(e.data.current) },
    lang,
  );
  facts.push({
    label: w.change,
    value: [{ ours: what }, ...(change.length ? [{ ours: ' · ' }, ...change] : [])],
  });
  const reason = str(e.data.reason) ?? str(e.data.message) ?? str(e.data.detail) ?? str(e.data.keyword);
  if (reason) facts.push({ label: w.reason, value: [{ theirs: reason }] });
  const url = str(e.data.url);
  if (url && e.type.startsWith('endpoint.')) facts.push({ label: 'URL', value: [{ theirs: url }] });
  facts.push({ label: w.severity, value: [{ ours: sev }] });
  const cycle = e.cycle ?? str(e.data.cycle);
  if (cycle) facts.push({ label: w.cycle, value: [{ ours: cycle }] });
  return { lang, severity: e.severity, title, facts, intro: null, items: [], link: eventLink(publicUrl, e) };
}

/** A company of a cycle's digest, as the message needs it (the events' ids are not shown). */
type DigestCompanyData = Omit<DigestCompany, 'changes'> & {
  changes: Omit<DigestCompany['changes'][number], 'event_id'>[];
};

/** The message of a `digest.daily`: the counts, then one item per change, the most severe first. */
export function digestMessage(e: Envelope, lang: Lang, publicUrl?: string): Message {
  const w = WORDS[lang];
  const cycle = str(e.data.cycle) ?? e.cycle ?? '';
  const companies = (Array.isArray(e.data.companies) ? e.data.companies : []) as DigestCompanyData[];
  const items: Item[] = [];
  const counts = { high: 0, medium: 0, low: 0 };
  for (const c of companies)
    for (const x of c.changes ?? []) {
      counts[x.severity] = (counts[x.severity] ?? 0) + 1;
      items.push({
        severity: x.severity,
        company: c.name,
        pid: c.pid,
        what: typeLabel(x.type, lang),
        field: x.field,
        before: x.previous,
        after: x.current,
        cycle,
      });
    }
  const rank = { high: 0, medium: 1, low: 2 } as const;
  items.sort((a, b) => rank[a.severity] - rank[b.severity]);
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
    link: eventLink(publicUrl, e),
  };
}

/** The item an event makes in a folded message. */
export function eventItem(e: Envelope, lang: Lang): Item {
  return {
    severity: e.severity,
    company: e.name,
    pid: e.pid,
    what: typeLabel(e.type, lang),
    field: str(e.data.field),
    before: str(e.data.previous),
    after: str(e.data.current),
    cycle: e.cycle,
  };
}

/**
 * Several events in one message, for a channel that would otherwise be sent more than its rate
 * limit allows: every event is an item, and nothing is dropped.
 */
export function foldedMessage(events: readonly Envelope[], lang: Lang, publicUrl?: string): Message {
  const rank = { high: 0, medium: 1, low: 2 } as const;
  const worst = events.reduce<Envelope['severity']>(
    (s, e) => (rank[e.severity] < rank[s] ? e.severity : s),
    'low',
  );
  const first = events[0];
  return {
    lang,
    severity: worst,
    title: [{ ours: WORDS[lang].foldedTitle(events.length) }],
    facts: [{ label: WORDS[lang].severity, value: [{ ours: severityLabel(worst, lang) }] }],
    intro: null,
    items: events.map((e) => eventItem(e, lang)),
    link: first ? eventLink(publicUrl, first) : null,
  };
}

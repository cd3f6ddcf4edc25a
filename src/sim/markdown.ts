/**
 * The Markdown texts the upstream sends next to its JSON, rendered from the simulator's records
 * in the layouts of docs/upstream.md. Renderers never throw: records may have been drifted by a
 * fault spec, so every value is read defensively and anything unusable is written `Unknown`.
 */
import type { SimEnterprise, SimProduct } from './types.ts';

/** How a missing or unusable value is written. */
export const UNKNOWN = 'Unknown';
/** Longest comment shown in a product's Markdown, in user-perceived characters. */
export const COMMENT_PREVIEW_LENGTH = 120;
/** Ends a comment that was cut short. */
export const ELLIPSIS = '...';

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/** A scalar as text; Unknown for null, undefined, empty strings, non-finite numbers and objects. */
function text(value: unknown): string {
  if (typeof value === 'string') return value.trim() === '' ? UNKNOWN : value.trim();
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : UNKNOWN;
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return UNKNOWN;
}

/** The YYYY-MM-DD part of a date or datetime string, as written (no zone conversion); other text as is. */
function plainDate(value: unknown): string {
  const s = text(value);
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ]|$)/.exec(s);
  return m ? (m[1] as string) : s;
}

/** A datetime as YYYY-MM-DD HH:MM:SS, as written (no zone conversion); other text as is. */
function plainDateTime(value: unknown): string {
  const s = text(value);
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})/.exec(s);
  return m ? `${m[1]} ${m[2]}` : s;
}

function array(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function field(item: unknown, key: string): unknown {
  return typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[key] : undefined;
}

/** Bullets of an array, or the single word Unknown when the array is empty or missing. */
function bullets(items: unknown, line: (item: unknown) => string): string {
  const lines = array(items).map((item) => `- ${line(item)}`);
  return lines.length > 0 ? lines.join('\n') : UNKNOWN;
}

function listed(value: unknown): string {
  if (value === 1 || value === '1') return 'Yes';
  if (value === 0 || value === '0') return 'No';
  return UNKNOWN;
}

function registeredCapital(e: SimEnterprise): string {
  const amount = text(e.REGCAP);
  if (amount === UNKNOWN) return UNKNOWN;
  const unit = text(e.REGCAPCUR);
  return unit === UNKNOWN ? amount : `${amount}${unit}`;
}

/** The enterprise-search `markdown` text for one record. */
export function renderEnterpriseMarkdown(e: SimEnterprise): string {
  const basic = [
    ['Listed', listed(e.IS_LISTED)],
    ['Legal Representative', text(e.LEGALPERSON)],
    ['Establishment Date', plainDate(e.ESDATE)],
    ['Registration Number', text(e.REGNO)],
    ['Unified Social Credit Code', text(e.UNCID)],
    ['Enterprise Type', text(e.ENTTYPE)],
    ['Registered Capital', registeredCapital(e)],
    ['Operating Period', `${plainDate(e.OPFROM)} to ${plainDate(e.OPTO)}`],
    ['Registration Authority', text(e.REGORG)],
    ['Approval Date', plainDate(e.APPRDATE)],
    ['Operating Status', text(e.ENTSTATUS)],
    ['Address', text(e.OPLOC)],
  ];
  const industry = [
    ['Industry Category', text(e.INDUSTRYPHY)],
    ['Industry Class', text(e.INDUSTRYBIG)],
    ['Industry Subclass', text(e.industry_middle)],
  ];
  const labelled = (rows: string[][]) => rows.map(([label, value]) => `- **${label}**: ${value}`).join('\n');
  return [
    `# ${text(e.ENTNAME)}`,
    '## Basic Information',
    labelled(basic),
    '## Business Scope',
    text(e.OPSCOPE),
    '## Key Personnel',
    bullets(e.PERSONS, (p) => `${text(field(p, 'NAME'))}: ${text(field(p, 'POSITION'))}`),
    '## Shareholder Information',
    bullets(e.BE_INVEST, (s) => `${text(field(s, 'INV'))}: ${text(field(s, 'INVTYPE'))}`),
    '## Industry Information',
    labelled(industry),
    '## Number of Insured Employees',
    text(e.participants),
  ].join('\n\n');
}

/** A comment flattened to one line and cut to COMMENT_PREVIEW_LENGTH characters, with an ellipsis when cut. */
export function commentPreview(body: unknown): string {
  const flat = text(body).replace(/\s+/g, ' ');
  const chars = Array.from(graphemes.segment(flat), (s) => s.segment);
  if (chars.length <= COMMENT_PREVIEW_LENGTH) return flat;
  return `${chars.slice(0, COMMENT_PREVIEW_LENGTH).join('').trimEnd()}${ELLIPSIS}`;
}

/** The product-listing `markdown` text for one product. */
export function renderProductMarkdown(p: SimProduct): string {
  const topics = array(p.topics)
    .map((t) => text(t))
    .filter((t) => t !== UNKNOWN);
  return [
    `# ${text(p.name)}`,
    `**${text(p.tagline)}**`,
    text(p.description),
    [
      `- **Votes**: ${text(p.votes_count)}`,
      `- **Comments**: ${text(p.comments_count)}`,
      `- **Created at**: ${plainDateTime(p.created_at)}`,
      `- **Featured at**: ${plainDateTime(p.featured_at)}`,
    ].join('\n'),
    '## Topics',
    topics.length > 0 ? topics.join(', ') : UNKNOWN,
    '## Comments',
    bullets(p.comments, (c) => commentPreview(field(c, 'body'))),
    `Last updated: ${plainDateTime(p.updated_at)}`,
  ].join('\n\n');
}

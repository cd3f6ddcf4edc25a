/**
 * How the console shows a company's values: every label and every format comes from the field
 * catalogue (src/terms/fields.ts), so a page says what a chat message or the digest says. The
 * console adds only what a page can do and a message cannot: a link to a company daybook holds,
 * and a time's zone said once per column.
 */
import {
  CHANGE_COLUMNS,
  eventTypeLabel,
  type FieldSpec,
  fieldLabel,
  formatChangeValue,
  formatMoney,
  holderPid,
  type Lang,
  tokenLabel,
} from '../terms/fields.ts';
import { type Html, html } from './html.ts';
import { type PageContext, whenZoned } from './layout.ts';

/** A company daybook holds, as a shareholder row or an event names it by PID. */
export interface HeldCompany {
  pid: string;
  ent_name: string;
  uncid: string | null;
}

/** The companies daybook holds, by PID. */
export type Held = ReadonlyMap<string, HeldCompany>;

/** The change columns the console shows. */
export type ChangeColumn =
  | 'detected_at'
  | 'cycle'
  | 'ent_name'
  | 'uncid'
  | 'category'
  | 'field'
  | 'kind'
  | 'before'
  | 'after'
  | 'severity'
  | 'detail'
  | 'to_version';

/** The label of a change column (变更日期, 变更项目 …) in `lang`. */
export function changeColumnLabel(col: ChangeColumn, lang: Lang): string {
  return (CHANGE_COLUMNS[col] as FieldSpec)[lang];
}

/** The label of a change column in the page's language. */
export function changeLabel(ctx: PageContext, col: ChangeColumn): string {
  return changeColumnLabel(col, ctx.lang);
}

/** The label of an enterprise field or column, by upstream name or column name. */
export function label(ctx: PageContext, name: string): string {
  return fieldLabel(name, ctx.lang);
}

/** The label of a product field. */
export function productLabel(ctx: PageContext, col: string): string {
  return fieldLabel(col, ctx.lang, 'product');
}

/** Words joined as a list: `a、b或c`, `a, b or c`. */
export function listOf(ctx: PageContext, words: readonly string[]): string {
  // Labels start with a capital; inside an English sentence the later ones do not.
  const inner = words.map((w, i) =>
    i > 0 && ctx.lang === 'en' && /^[A-Z][a-z]/.test(w) ? w[0]?.toLowerCase() + w.slice(1) : w,
  );
  if (inner.length < 2) return inner.join('');
  const head = inner.slice(0, -1).join(ctx.lang === 'zh' ? '、' : ', ');
  return `${head}${ctx.t.or}${inner.at(-1)}`;
}

/** A link to a company's page. */
export function companyLink(pid: string, name: string): Html {
  return html`<a href="/ui/companies/${encodeURIComponent(pid)}">${name}</a>`;
}

/** What the record of a version says of its registered capital. */
export interface CapitalFields {
  capital_amount: string | null;
  capital_currency: string | null;
  reg_cap: string | null;
  capital_text: string | null;
}

/**
 * Registered capital, one way on every page: the amount in 万 of its currency (zh) or in millions
 * (en). When the registry's figure has no readable unit, it is shown as registered and says so.
 */
export function capital(lang: Lang, t: { asRegistered: string }, c: CapitalFields): string {
  if (c.capital_amount !== null && c.capital_amount !== '')
    return formatMoney(c.capital_amount, c.capital_currency, lang);
  if (c.reg_cap === null || c.reg_cap === '') return '';
  const as = lang === 'zh' ? `（${t.asRegistered}）` : ` (${t.asRegistered})`;
  return `${[c.reg_cap, c.capital_text].filter((x) => x).join(' ')}${as}`;
}

/** The capital context of one version: its currency, and whether its amount is known. */
export interface MoneyOf {
  currency: string | null;
  known: boolean;
}

/**
 * The before or after of a change as text: a capital amount in the scale of the current record
 * (the currency of the version it belongs to), a date, a code as its name, a shareholder with its
 * credit code when daybook holds it, never an internal id.
 */
export function changeText(
  lang: Lang,
  field: string | null,
  value: string | null,
  money: MoneyOf | undefined,
  held: Held,
): string {
  if (value === null) return '';
  // An amount whose unit the registry left unreadable is no amount of currency units: as written.
  if (field === 'REGCAP' && money && !money.known) return value;
  return formatChangeValue(field, value, lang, {
    currency: money?.currency ?? null,
    usccOf: (pid) => held.get(pid)?.uncid ?? null,
  });
}

/** The name a shareholder row (`某某有限公司 [企业法人] PID …`) starts with. */
function holderName(value: string): string {
  return /^(.*?)(?: \[[^\]]*\])?(?: PID \S+)?(?: \{.*\})?$/s.exec(value)?.[1] ?? '';
}

/** A change's before or after, its shareholder's name linked when daybook holds that company. */
export function changeValue(
  ctx: PageContext,
  field: string | null,
  value: string | null,
  money: MoneyOf | undefined,
  held: Held,
): Html {
  const text = changeText(ctx.lang, field, value, money, held);
  if (field !== 'BE_INVEST' || value === null) return html`${text}`;
  const pid = holderPid(value);
  const company = pid ? held.get(pid) : undefined;
  const name = holderName(value);
  if (!company || !name || !text.startsWith(name)) return html`${text}`;
  return html`${companyLink(company.pid, name)}${text.slice(name.length)}`;
}

/** A shareholder's name, linked when daybook holds it; and its credit code, when held. */
export function shareholderCells(
  s: { name: string | null; type: string | null; pid: string | null },
  held: Held,
): Html {
  const company = s.pid ? held.get(s.pid) : undefined;
  const name = s.name ?? company?.ent_name ?? '';
  return html`<td>${company ? companyLink(company.pid, name) : name}</td><td>${s.type}</td><td>${company?.uncid ?? ''}</td>`;
}

/** 变更项目: the field's label, and whether the item was added or removed. */
export function changeItem(ctx: PageContext, field: string, kind: string): string {
  const item = fieldLabel(field, ctx.lang);
  if (kind !== 'added' && kind !== 'removed') return item;
  const k = tokenLabel('kind', kind, ctx.lang);
  return ctx.lang === 'zh' ? `${item}（${k}）` : `${item} (${k})`;
}

/** A change's severity in words, with the reason when the classifier gave one. */
export function severityCell(ctx: PageContext, badge: Html, detail: string | null): Html {
  if (!detail) return badge;
  return html`${badge} <span class="reason">${tokenLabel('detail', detail, ctx.lang)}</span>`;
}

/** The event type of each observation kind (as src/events/catalogue.ts observationEventType). */
export const OBSERVATION_TYPES: Readonly<Record<string, string>> = {
  initial: 'company.first_seen',
  disappeared: 'company.disappeared',
  reappeared: 'company.reappeared',
  stale_ignored: 'company.stale_answer.ignored',
  resolution_changed: 'company.resolution.changed',
  resolution_mismatch: 'company.resolution.mismatch',
};

/** What an observation of `kind` is called: its event type's words. */
export function observationLabel(ctx: PageContext, kind: string): string {
  return eventTypeLabel(OBSERVATION_TYPES[kind] ?? kind, ctx.lang);
}

const STALE = /^fetched (\S+), before (\S+)$/;
const RESOLVED = /^keyword resolved to (\S+) before$/;
const MISMATCH = /^expected UNCID (\S+); the answer names (.*) \((?:no UNCID|UNCID (\S+))\)$/s;
/** A watched shareholder's answer about another company (src/history/resolution-mismatches.ts). */
const MISMATCH_PID =
  /^expected (?:UNCID \S+ and )?PID \S+; the answer names (.*) \((?:no UNCID|UNCID (\S+)), PID \S+\)$/s;

/** The company an observation's detail names by PID (a keyword's former company). */
export function observationPid(kind: string, detail: string | null): string | null {
  return kind === 'resolution_changed' && detail ? (RESOLVED.exec(detail)?.[1] ?? null) : null;
}

/** A template of the console's words with `{0}`, `{1}` filled by text or markup. */
export function fill(template: string, ...parts: (Html | string)[]): Html {
  const out = template
    .split(/\{(\d)\}/)
    .map((piece, i) => (i % 2 === 0 ? piece : (parts[Number(piece)] ?? '')));
  return html`${out}`;
}

/** A credit code with its label: `统一社会信用代码 9111…`. */
function uscc(ctx: PageContext, code: string | null): string {
  return code ? `${fieldLabel('UNCID', ctx.lang)} ${code}` : ctx.t.noCode;
}

/**
 * An observation's detail in words: its times in Beijing time, the company a keyword found before
 * by name and credit code (never its PID), the credit codes of a refused answer. A detail of
 * another shape is shown as written.
 */
export function observationDetail(ctx: PageContext, kind: string, detail: string | null, held: Held): Html {
  if (!detail) return html``;
  const stale = kind === 'stale_ignored' ? STALE.exec(detail) : null;
  if (stale) return fill(ctx.t.staleDetail, whenZoned(ctx, stale[1]), whenZoned(ctx, stale[2]));
  const resolved = kind === 'resolution_changed' ? RESOLVED.exec(detail) : null;
  if (resolved) {
    const company = held.get(resolved[1] as string);
    const who = company
      ? html`${companyLink(company.pid, company.ent_name)}${ctx.lang === 'zh' ? '（' : ' ('}${uscc(ctx, company.uncid)}${ctx.lang === 'zh' ? '）' : ')'}`
      : html`${ctx.t.anotherCompany}`;
    return fill(ctx.t.resolvedBefore, who);
  }
  const other = kind === 'resolution_mismatch' ? MISMATCH_PID.exec(detail) : null;
  if (other) {
    const open = ctx.lang === 'zh' ? '（' : ' (';
    const close = ctx.lang === 'zh' ? '）' : ')';
    return fill(ctx.t.mismatchShareholder, `${other[1]}${open}${uscc(ctx, other[2] ?? null)}${close}`);
  }
  const mismatch = kind === 'resolution_mismatch' ? MISMATCH.exec(detail) : null;
  if (mismatch) {
    const open = ctx.lang === 'zh' ? '（' : ' (';
    const close = ctx.lang === 'zh' ? '）' : ')';
    return fill(
      ctx.t.mismatchDetail,
      uscc(ctx, mismatch[1] as string),
      `${mismatch[2]}${open}${uscc(ctx, mismatch[3] ?? null)}${close}`,
    );
  }
  return html`${detail}`;
}

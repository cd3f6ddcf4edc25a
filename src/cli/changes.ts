/**
 * `daybook changes`: the change log, newest first. As text, grouped by company: each company by
 * its name and unified social credit code, then each change as a person reads it (the date, the
 * item's name, before → after with units and currency, the severity in words), in --lang. With
 * --json, the rows as they are: codes and raw values, for machines.
 *
 * The human form of one change (`changeLines`) and of a company (`companyName`) are shared with
 * `daybook digest`.
 */

import type { Command } from 'commander';
import type { Sql } from '../db/connect.ts';
import { changeFacts } from '../terms/changes.ts';
import {
  CHANGE_COLUMNS,
  ENTERPRISE_FIELDS,
  fieldLabel,
  formatChangeValue,
  grouped,
  holderPid,
  type Lang,
  tokenLabel,
} from '../terms/fields.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { forTerminal, jsonLines } from './terminal.ts';
import { choiceArg, dateOption, intArg, langOption, UsageError } from './usage.ts';

/** What names a company for a person: its name and credit code (or registration number); the PID only when neither is known. */
export interface CompanyIdentity {
  pid: string;
  name: string | null;
  uncid: string | null;
  regNo: string | null;
}

/** `某某有限公司（统一社会信用代码 9131…）` / `某某有限公司 (USCC 9131…)`, escaped for a terminal. */
export function companyName(c: CompanyIdentity, lang: Lang): string {
  const code = c.uncid
    ? `${lang === 'zh' ? '统一社会信用代码' : 'USCC'} ${c.uncid}`
    : c.regNo
      ? `${lang === 'zh' ? '注册号' : 'registration number'} ${c.regNo}`
      : null;
  if (!c.name) {
    // Nothing names it but the upstream's id.
    const id = `${fieldLabel('PID', lang)} ${c.pid}`;
    return forTerminal(code ? `${code}${lang === 'zh' ? `（${id}）` : ` (${id})`}` : id);
  }
  if (!code) return forTerminal(c.name);
  return forTerminal(lang === 'zh' ? `${c.name}（${code}）` : `${c.name} (${code})`);
}

/** One change as a person reads it; the values as `analytics.enterprise_changes` holds them. */
export interface HumanChange {
  field: string | null;
  kind: string | null;
  before: string | null;
  after: string | null;
  detail: string | null;
  severity: string;
  /** The capital currency of the version before and of the version after. */
  beforeCurrency?: string | null;
  afterCurrency?: string | null;
}

/** A change whose values are longer than this together (in characters) shows them on lines of their own. */
const LONG = 72;

/**
 * The lines of one change: `item: before → after (detail; severity: …)`, each value in its unit;
 * an added or removed value says so; long values (a business scope) go under the item, one per
 * line. Every line escaped for a terminal; `lead` starts the first line (a date), `indent` the rest.
 */
export function changeLines(
  ch: HumanChange,
  lang: Lang,
  o: { usccOf?: (pid: string) => string | null; lead?: string; indent?: string } = {},
): string[] {
  const zh = lang === 'zh';
  const colon = zh ? '：' : ': ';
  const label = ch.field ? fieldLabel(ch.field, lang) : tokenLabel('category', 'other', lang);
  const value = (v: string | null, currency: string | null | undefined) =>
    v === null || v === ''
      ? zh
        ? '（空）'
        : '(none)'
      : formatChangeValue(ch.field, v, lang, { currency: currency ?? null, usccOf: o.usccOf });
  const before = value(ch.before, ch.beforeCurrency);
  const after = value(ch.after, ch.afterCurrency);
  const notes = [
    ch.detail ? tokenLabel('detail', ch.detail, lang) : null,
    severityWords(ch.severity, lang),
  ].filter((x): x is string => !!x);
  const suffix = zh ? `（${notes.join('；')}）` : ` (${notes.join('; ')})`;
  const lead = o.lead ?? '';
  const indent = o.indent ?? '';
  const kindWord = (k: 'added' | 'removed') => tokenLabel('kind', k, lang);
  const shown =
    ch.kind === 'added'
      ? [...after].length
      : ch.kind === 'removed'
        ? [...before].length
        : [...before, ...after].length;
  const long = shown > LONG;
  let lines: string[];
  if (ch.kind === 'added' || ch.kind === 'removed') {
    const v = ch.kind === 'added' ? after : before;
    lines = long
      ? [`${lead}${label}${suffix}`, `${indent}  ${capital(kindWord(ch.kind), lang)}${colon}${v}`]
      : [`${lead}${label}${colon}${kindWord(ch.kind)} ${v}${suffix}`];
  } else {
    lines = long
      ? [
          `${lead}${label}${suffix}`,
          `${indent}  ${CHANGE_COLUMNS.before?.[lang]}${colon}${before}`,
          `${indent}  ${CHANGE_COLUMNS.after?.[lang]}${colon}${after}`,
        ]
      : [`${lead}${label}${colon}${before} → ${after}${suffix}`];
  }
  return lines.map((l) => forTerminal(l));
}

/** `严重程度：中` / `severity: medium`. */
export function severityWords(severity: string, lang: Lang): string {
  const word = tokenLabel('severity', severity, lang);
  return lang === 'zh' ? `${CHANGE_COLUMNS.severity?.zh}：${word}` : `severity: ${word}`;
}

const capital = (s: string, lang: Lang) => (lang === 'en' ? `${s[0]?.toUpperCase() ?? ''}${s.slice(1)}` : s);

/**
 * The current credit code of each of `pids` that daybook has a version of (a company, or a
 * shareholder that is itself watched), with the current name and registration number.
 */
export async function identities(sql: Sql, pids: readonly string[]): Promise<Map<string, CompanyIdentity>> {
  if (pids.length === 0) return new Map();
  const rows = await sql<CompanyIdentity[]>`
    select c.pid, c.ent_name as name, c.uncid, c.reg_no as "regNo"
    from analytics.enterprise_current c where c.pid = any(${[...new Set(pids)]}::text[])`;
  return new Map(rows.map((r) => [r.pid, r]));
}

/** The PIDs of the shareholders `values` name (BE_INVEST rows), to look their credit codes up. */
export function holderPids(
  rows: readonly { field: string | null; before: string | null; after: string | null }[],
) {
  return rows
    .filter((r) => r.field === 'BE_INVEST')
    .flatMap((r) => [holderPid(r.before), holderPid(r.after)])
    .filter((p): p is string => p !== null);
}

interface ChangeRow {
  cycle: string;
  detected_at: Date;
  pid: string;
  name: string | null;
  category: string;
  field: string;
  kind: string;
  before: string | null;
  after: string | null;
  severity: string;
}

interface ChangeRowMore extends ChangeRow {
  detail: string | null;
  uncid: string | null;
  reg_no: string | null;
  before_currency: string | null;
  after_currency: string | null;
}

/** The text of the change log: companies in the order of their newest change, each change dated. */
export function changesText(
  rows: readonly ChangeRowMore[],
  lang: Lang,
  usccOf: (pid: string) => string | null,
): string {
  const zh = lang === 'zh';
  if (rows.length === 0) return zh ? '没有符合条件的变更。\n' : 'No changes match.\n';
  const byPid = new Map<string, ChangeRowMore[]>();
  for (const r of rows) byPid.set(r.pid, [...(byPid.get(r.pid) ?? []), r]);
  const n = grouped(String(rows.length));
  const m = grouped(String(byPid.size));
  const out: string[] = [
    zh
      ? `${m} 家企业的 ${n} 项变更，按发现时间由新到旧：`
      : `${n} ${rows.length === 1 ? 'change' : 'changes'} at ${m} ${byPid.size === 1 ? 'company' : 'companies'}, newest first:`,
  ];
  for (const [pid, changes] of byPid) {
    const first = changes[0] as ChangeRowMore;
    out.push('', companyName({ pid, name: first.name, uncid: first.uncid, regNo: first.reg_no }, lang));
    for (const c of changes)
      out.push(
        ...changeLines(
          { ...changeFacts(c), beforeCurrency: c.before_currency, afterCurrency: c.after_currency },
          lang,
          { usccOf, lead: `  ${c.cycle}  `, indent: `  ${' '.repeat(c.cycle.length)}  ` },
        ),
      );
  }
  return `${out.join('\n')}\n`;
}

/** The fields whose value is an amount of the version's currency. */
const MONEY_FIELDS = Object.entries(ENTERPRISE_FIELDS)
  .filter(([, spec]) => spec.kind === 'money')
  .map(([name]) => name);

/** Which changes the log shows: the newest `limit` at `severity` or above, in a window of cycles or of detection, of one company. */
export interface ChangeFilter {
  limit: number;
  severity?: 'high' | 'medium' | 'low';
  since?: string;
  until?: string;
  detectedSince?: string;
  pid?: string;
}

/** The changes of the log, newest first, with what their words need (the company's codes, the currencies). */
export async function changeRows(sql: Sql, f: ChangeFilter): Promise<ChangeRowMore[]> {
  const levels = { high: ['high'], medium: ['high', 'medium'], low: ['high', 'medium', 'low'] };
  const severities = levels[f.severity ?? 'low'];
  return sql<ChangeRowMore[]>`
    select c.cycle::text, c.detected_at, c.pid, c.current_name as name, c.category, c.field, c.kind,
           c.before, c.after, c.severity, c.detail, cur.uncid, cur.reg_no,
           case when c.field = any(${MONEY_FIELDS}::text[]) then fv.capital_currency end as before_currency,
           case when c.field = any(${MONEY_FIELDS}::text[]) then tv.capital_currency end as after_currency
    from analytics.enterprise_changes c
    left join analytics.enterprise_current cur on cur.pid = c.pid
    left join analytics.enterprise_history fv on fv.pid = c.pid and fv.version = c.from_version
    left join analytics.enterprise_history tv on tv.pid = c.pid and tv.version = c.to_version
    where c.severity = any(${severities})
      ${f.since ? sql`and c.cycle >= ${f.since}::date` : sql``}
      ${f.until ? sql`and c.cycle <= ${f.until}::date` : sql``}
      ${f.detectedSince ? sql`and c.detected_at >= ${`${f.detectedSince}T00:00:00Z`}::timestamptz` : sql``}
      ${f.pid ? sql`and c.pid = ${f.pid}` : sql``}
    order by c.detected_at desc, c.change_id desc limit ${f.limit}`;
}

/** The change log of `rows` in words (`daybook changes`), a shareholder that is a company named by its credit code. */
export async function changeLogText(sql: Sql, rows: readonly ChangeRowMore[], lang: Lang): Promise<string> {
  const holders = await identities(sql, holderPids(rows));
  return changesText(rows, lang, (pid) => holders.get(pid)?.uncid ?? null);
}

export function changesCommand(): Command {
  return command('changes')
    .addOption(dateOption('--since', 'changes of this cycle or later (YYYY-MM-DD)'))
    .addOption(dateOption('--until', 'changes of this cycle or earlier (YYYY-MM-DD)'))
    .addOption(
      dateOption('--detected-since', 'changes daybook found on or after this date, UTC (YYYY-MM-DD)'),
    )
    .option(
      '--severity <level>',
      'high, medium or low (and above)',
      choiceArg('--severity', ['high', 'medium', 'low'] as const),
    )
    .option('--pid <pid>', 'only this enterprise')
    .option('--limit <n>', 'at most this many rows', intArg('--limit', 1, 100_000), 100)
    .option('--json', 'print as JSON lines')
    .addOption(langOption())
    .action(
      async (opts: {
        since?: string;
        until?: string;
        detectedSince?: string;
        severity?: 'high' | 'medium' | 'low';
        pid?: string;
        limit: number;
        json?: boolean;
        lang?: Lang;
      }) => {
        if (opts.since && opts.until && opts.since > opts.until)
          throw new UsageError(`--since ${opts.since} is after --until ${opts.until}`);
        const config = configOrExit();
        const lang = opts.lang ?? config.DAYBOOK_LANG ?? 'en';
        await withStore(config, async ({ sql }) => {
          const rows = await changeRows(sql, opts);
          if (opts.json) {
            // For machines: the codes and the values as stored, as they always were.
            const plain = rows.map(
              ({ detail: _d, uncid: _u, reg_no: _r, before_currency: _b, after_currency: _a, ...row }) =>
                row satisfies ChangeRow,
            );
            process.stdout.write(jsonLines(plain));
            return;
          }
          process.stdout.write(await changeLogText(sql, rows, lang));
        });
      },
    );
}

/**
 * `daybook digest`: a cycle's digest. As text, for a person in --lang: the companies that changed,
 * the most severe first, each by its name and unified social credit code, then its changes as
 * `item: before → after`. With --json, the digest as `digest.daily` carries it (its Markdown, and
 * the structured list with the codes).
 */
import type { Command } from 'commander';
import type { Sql } from '../db/connect.ts';
import { eventTypeLabel } from '../events/catalogue.ts';
import {
  type ChangeExtra,
  changeExtras,
  cycleDigest,
  type Digest,
  type DigestCompany,
} from '../events/digest.ts';
import { CHANGE_COLUMNS, ENTERPRISE_FIELDS, grouped, type Lang, tokenLabel } from '../terms/fields.ts';
import { cycleOf } from '../time/cycles.ts';
import { command } from './about.ts';
import {
  type CompanyIdentity,
  changeLines,
  companyName,
  holderPids,
  identities,
  severityWords,
} from './changes.ts';
import { configOrExit, withStore } from './context.ts';
import { forTerminal } from './terminal.ts';
import { cycleOption, langOption } from './usage.ts';

/** A version's capital currency: a row of the `analytics.enterprise_history` view, a computed shape. */
interface VersionCurrency {
  pid: string;
  version: number;
  capital_currency: string | null;
}

/** What a person reads a digest with, beside the digest: names, codes, currencies. */
export interface DigestContext {
  /** Each change event's detail and versions, by event id. */
  extra: ReadonlyMap<string, ChangeExtra>;
  /** Each company (and each shareholder daybook knows) by PID. */
  companies: ReadonlyMap<string, CompanyIdentity>;
  /** The capital currency of each version, by `pid:version`. */
  currencies: ReadonlyMap<string, string | null>;
}

const RANK = { high: 0, medium: 1, low: 2 } as const;

/** The digest as text for a person, in `lang`. Pure. */
export function digestText(digest: Digest, ctx: DigestContext, lang: Lang): string {
  const zh = lang === 'zh';
  const out: string[] = [zh ? `每日摘要，周期 ${digest.cycle}` : `Daily digest, cycle ${digest.cycle}`, ''];
  const companies = digest.companies;
  if (companies.length === 0) {
    out.push(zh ? '本周期监控的企业没有变更。' : 'No changes at the watched companies in this cycle.');
    return `${out.join('\n')}\n`;
  }
  const counts = { high: 0, medium: 0, low: 0 };
  for (const c of companies) for (const x of c.changes) counts[x.severity]++;
  const n = grouped(String(companies.length));
  const sev = (s: keyof typeof counts) => tokenLabel('severity', s, lang);
  out.push(
    zh
      ? `${n} 家企业有变更：${sev('high')} ${counts.high} 项，${sev('medium')} ${counts.medium} 项，${sev('low')} ${counts.low} 项（按严重程度）。`
      : `${n} ${companies.length === 1 ? 'company' : 'companies'} changed: ${counts.high} high, ${counts.medium} medium and ${counts.low} low severity ${counts.high + counts.medium + counts.low === 1 ? 'change' : 'changes'}.`,
  );
  const usccOf = (pid: string) => ctx.companies.get(pid)?.uncid ?? null;
  const worst = (c: DigestCompany) => Math.min(...c.changes.map((x) => RANK[x.severity]));
  for (const severity of ['high', 'medium', 'low'] as const) {
    const group = companies.filter((c) => worst(c) === RANK[severity]);
    if (group.length === 0) continue;
    out.push(
      '',
      zh
        ? `【${CHANGE_COLUMNS.severity?.zh}：${sev(severity)}】`
        : `${sev(severity)[0]?.toUpperCase()}${sev(severity).slice(1)} severity`,
    );
    for (const c of group) {
      const known = ctx.companies.get(c.pid);
      out.push(
        '',
        companyName(
          {
            pid: c.pid,
            name: c.name ?? known?.name ?? null,
            uncid: known?.uncid ?? null,
            regNo: known?.regNo ?? null,
          },
          lang,
        ),
      );
      for (const x of c.changes) {
        const extra = ctx.extra.get(x.event_id);
        if (!x.field) {
          // A company event, not a field's change (it disappeared, came back …).
          const severity = severityWords(x.severity, lang);
          const words = `${eventTypeLabel(x.type, lang)}${zh ? `（${severity}）` : ` (${severity})`}`;
          out.push(forTerminal(`  ${words}`));
          continue;
        }
        const money = ENTERPRISE_FIELDS[x.field]?.kind === 'money';
        const currency = (v: number | null | undefined) =>
          money && v !== null && v !== undefined ? (ctx.currencies.get(`${c.pid}:${v}`) ?? null) : null;
        out.push(
          ...changeLines(
            {
              field: x.field,
              kind: extra?.kind ?? kindOf(x.previous, x.current),
              before: x.previous,
              after: x.current,
              detail: extra?.detail ?? null,
              severity: x.severity,
              beforeCurrency: currency(extra?.from_version),
              afterCurrency: currency(extra?.to_version),
            },
            lang,
            { usccOf, lead: '  ', indent: '  ' },
          ),
        );
      }
    }
  }
  return `${out.join('\n')}\n`;
}

/** added, removed or modified, as the values say (when the event's own kind is not at hand). */
function kindOf(previous: string | null, current: string | null): 'added' | 'removed' | 'modified' {
  if (previous === null && current !== null) return 'added';
  if (previous !== null && current === null) return 'removed';
  return 'modified';
}

/** Reads what `digestText` needs beside the digest. */
export async function digestContext(sql: Sql, digest: Digest): Promise<DigestContext> {
  const ids = digest.companies.flatMap((c) => c.changes.map((x) => x.event_id));
  const extraRows = ids.length ? await changeExtras(sql, ids) : [];
  const extra = new Map(extraRows.map((r) => [r.id, r]));
  const changes = digest.companies.flatMap((c) => c.changes.map((x) => ({ ...x, pid: c.pid })));
  const companies = await identities(sql, [
    ...digest.companies.map((c) => c.pid),
    ...holderPids(changes.map((x) => ({ field: x.field, before: x.previous, after: x.current }))),
  ]);
  // The currency of the two versions of each capital change.
  const versions = changes
    .filter((x) => x.field && ENTERPRISE_FIELDS[x.field]?.kind === 'money')
    .flatMap((x) => {
      const e = extra.get(x.event_id);
      return [e?.from_version, e?.to_version]
        .filter((v): v is number => typeof v === 'number')
        .map((v) => ({ pid: x.pid, version: v }));
    });
  const currencies = new Map<string, string | null>();
  if (versions.length) {
    const rows = await sql<VersionCurrency[]>`
      select h.pid, h.version, h.capital_currency
      from analytics.enterprise_history h
      join unnest(${versions.map((v) => v.pid)}::text[], ${versions.map((v) => v.version)}::int[]) as w(pid, version)
        on h.pid = w.pid and h.version = w.version`;
    for (const r of rows) currencies.set(`${r.pid}:${r.version}`, r.capital_currency);
  }
  return { extra, companies, currencies };
}

export function digestCommand(): Command {
  return command('digest')
    .addOption(cycleOption())
    .option(
      '--json',
      'print the digest as JSON: cycle, markdown and companies, with the codes (as digest.daily)',
    )
    .addOption(langOption())
    .addHelpText(
      'after',
      '\nAs text, the companies that changed, the most severe first, each with its name and unified social credit code, then its changes as "item: before → after", in --lang. The Markdown that digest.daily carries is in --json.',
    )
    .action(async (opts: { cycle?: string; json?: boolean; lang?: Lang }) => {
      const config = configOrExit();
      const lang = opts.lang ?? config.DAYBOOK_LANG ?? 'en';
      await withStore(config, async ({ sql }) => {
        const digest = await cycleDigest(sql, opts.cycle ?? cycleOf(new Date()));
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(digest)}\n`);
          return;
        }
        process.stdout.write(digestText(digest, await digestContext(sql, digest), lang));
      });
    });
}

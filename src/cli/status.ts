/** `daybook status`: the current cycle at a glance. */
import type { Command } from 'commander';
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import { eventTypeLabel } from '../events/catalogue.ts';
import { lastExports } from '../export/package.ts';
import { driftReport, driftTotals } from '../history/drift-store.ts';
import { failedProductPulls, recentFailedRuns } from '../landing/runs.ts';
import { deferredEntries } from '../plan/decide.ts';
import { budgetOf, ledgerCredits } from '../purchase/credits.ts';
import { claimCounts, failedClaims } from '../purchase/fetches.ts';
import { pauseCause } from '../runtime/ops-metrics.ts';
import { Queues, redisConnection } from '../runtime/queues.ts';
import { redisLabel } from '../runtime/redis.ts';
import {
  beijingTime,
  CREDIT_LABELS,
  enterpriseField,
  fieldLabel,
  grouped,
  type Lang,
  OPERATION_WORDS,
  operationWord,
  PRODUCT_FIELDS,
  reasonWord,
  STATUS_COLUMNS,
  TOKENS,
  tokenLabel,
} from '../terms/fields.ts';
import { cycleOf } from '../time/cycles.ts';
import { countWatches, entryCodes } from '../watch/store.ts';
import { command } from './about.ts';
import { configOrExit, withStore } from './context.ts';
import { formatTable, forTerminal } from './terminal.ts';
import { cycleOption, langOption } from './usage.ts';

/**
 * The queue counts, asked of Redis once: a Redis that does not answer within 2 s is said in
 * one line naming REDIS_URL, with no retries and no reconnect stack dumps.
 */
async function queueCounts(
  config: Config,
): Promise<{ counts: Record<string, Record<string, number>> | null; error: string | null }> {
  let lastError: Error | null = null;
  const redis = redisConnection(config, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', (err: Error) => {
    lastError = err;
  });
  let q: Queues | null = null;
  try {
    // Connected first: a BullMQ queue made on a lazy connection starts connecting it itself.
    await redis.connect();
    q = new Queues(redis, config.DAYBOOK_REDIS_PREFIX);
    for (const queue of q.all()) queue.on('error', () => {});
    return { counts: await q.counts(), error: null };
  } catch (err) {
    const why = (lastError ?? (err instanceof Error ? err : new Error(String(err)))).message;
    return {
      counts: null,
      error: `${redisLabel(config)} is unreachable: ${why}`,
    };
  } finally {
    await q?.close().catch(() => {});
    redis.disconnect();
  }
}

/** What status reads of a cycle, in the database and (unless `withQueues` is false) in Redis. */
async function readStatus(sql: postgres.Sql, config: Config, cycle: string, withQueues: boolean) {
  const progress = await claimCounts(sql, cycle);
  const budget = await budgetOf(sql, cycle);
  // Confirmed and unconfirmed credits (calls sent and not answered, or cut off by a process that
  // died: counted as spent), and product calls booked without an amount.
  const ledger = await ledgerCredits(sql, cycle);
  const presumed = { credits: ledger.presumed };
  // Deferred entries: rows, and the active entries the cycle's plan did not reach (no row).
  // Entries added after the cycle's plan are told apart by what a top-up would do with them now.
  const deferred = await deferredEntries(sql, cycle, 20, { config, now: () => new Date() });
  const byStatus = new Map(progress.map((p) => [p.status, p.n]));
  if (deferred.total > 0) byStatus.set('deferred', deferred.total);
  const failures = await recentFailedRuns(sql);
  // Watch entries that failed for good in this cycle: permanent errors, or retries used up.
  const failedEntries = await failedClaims(sql, cycle);
  // Product pulls whose latest run failed (a later success clears it), and jobs refused as bad data.
  const failedPulls = await failedProductPulls(sql);
  const drift = await driftReport(sql, { limit: 10 });
  const driftTotal = await driftTotals(sql);
  const watch = await countWatches(sql);
  const exports = await lastExports(sql);
  // The credit code of each entry listed: of the company it resolved to, else the one it expects.
  const listed = [...deferred.first.map((d) => d.watch_id), ...failedEntries.map((f) => Number(f.watch_id))];
  const codeRows = listed.length ? await entryCodes(sql, listed) : [];
  const codes = new Map(codeRows.map((r) => [r.id, r.uscc]));
  let queues: Record<string, Record<string, number>> | null = null;
  let queueError: string | null = null;
  if (withQueues) {
    const counted = await queueCounts(config);
    queues = counted.counts;
    queueError = counted.error;
  }
  return {
    cycle,
    byStatus,
    budget,
    presumed,
    ledger,
    deferred,
    failures,
    failedEntries,
    failedPulls,
    drift,
    driftTotals: driftTotal,
    watch,
    exports,
    codes,
    queues,
    queueError,
  };
}

type Status = Awaited<ReturnType<typeof readStatus>>;

/** The status as `--json` prints it. */
function statusJson(s: Status) {
  return {
    cycle: s.cycle,
    watchlist: s.watch,
    progress: Object.fromEntries([...s.byStatus].sort(([a], [b]) => a.localeCompare(b))),
    credits: s.budget
      ? {
          ...s.budget,
          presumed: s.presumed.credits,
          confirmed: s.ledger.confirmed,
          unconfirmed: s.ledger.unconfirmed,
          unconfirmedCalls: s.ledger.unconfirmedCalls,
          unpricedCalls: s.ledger.unpricedCalls,
        }
      : null,
    deferred: s.deferred.first.map(({ watch_id: _w, ...rest }) => rest),
    deferredCount: s.deferred.total,
    deferredByReason: s.deferred.byReason,
    failed: {
      enterprises: s.failedEntries,
      productPulls: s.failedPulls.map(({ outcome: _o, kind: _k, ...rest }) => rest),
    },
    recentFailures: s.failures,
    formatDrift: { ...s.driftTotals, latest: s.drift },
    queues: s.queues,
    ...(s.queueError ? { queueError: s.queueError } : {}),
    exports: s.exports,
  };
}

/** A count with its unit: `27 积分` / `27 credits`, `1 entry` / `3 entries`. */
function count(n: number, unit: { zh: string; en: string; one?: string }, lang: Lang): string {
  const v = grouped(String(n));
  if (lang === 'zh') return `${v} ${unit.zh}`;
  return `${v} ${n === 1 && unit.one ? unit.one : unit.en}`;
}

const ENTRIES = { zh: '条', en: 'entries', one: 'entry' };
const CREDITS = { zh: '积分', en: 'credits', one: 'credit' };
const JOBS = { zh: '个', en: 'jobs', one: 'job' };
const ROWS = { zh: '行', en: 'rows', one: 'row' };
const TIMES = { zh: '次', en: 'tries', one: 'try' };
const ANSWERS = { zh: '条应答', en: 'answers', one: 'answer' };
const FIELDS = { zh: '个', en: 'fields', one: 'field' };

/** A product pull (`d1` the day after, `d2` the first re-pull …, `backfill`) as words. */
function pullWords(pull: string | null, lang: Lang): string {
  if (!pull) return '';
  const d = /^d(\d+)$/.exec(pull);
  if (d) return lang === 'zh' ? `第 ${d[1]} 次拉取` : `pull ${d[1]}`;
  if (pull === 'backfill') return lang === 'zh' ? '补录' : 'backfill';
  return pull;
}

/** A time, as a Beijing date and time. */
function at(t: Date | string | null, lang: Lang): string {
  if (!t) return '';
  return `${beijingTime(t)}${lang === 'zh' ? '（北京时间）' : ' Beijing time'}`;
}

/**
 * Why enterprise work of the cycle is paused, in words: the cause, then what was said (the
 * upstream's message for credits; daybook's own sentence, in Chinese rebuilt from its figures).
 */
function pausedWords(reason: string | null, lang: Lang): string {
  const r = reason ?? '';
  const zh = lang === 'zh';
  switch (pauseCause(r)) {
    case 'credits':
      return detailWords(r, 'insufficient_credits', lang);
    case 'refusing': {
      if (!zh) return r;
      const n = /refused (\d+) calls/.exec(r)?.[1];
      return n
        ? `上游连续拒绝 ${n} 次调用（可能是每日调用上限），本周期停止`
        : eventTypeLabel('upstream.refusing', lang);
    }
    case 'retry_after': {
      if (!zh) return r;
      const s = /wait (\d+) s/.exec(r)?.[1];
      return `上游要求等待${s ? ` ${s} 秒` : ''}（Retry-After），超过 daybook 的等待上限，本周期停止`;
    }
    default:
      return r;
  }
}

/**
 * The detail of an entry or a run in `lang`: a pause for credits (`insufficient_credits at <time>:
 * <message>`) as words, the time and the message; other messages as `messageWords` frames them.
 */
function detailWords(detail: string | null, code: string | null, lang: Lang): string {
  const m = /^insufficient_credits(?: at (\S+))?:(?:\s+(.*))?$/s.exec(detail ?? '');
  if (!m) return messageWords(detail, code, lang);
  const zh = lang === 'zh';
  const [, time, rest = ''] = m;
  const when = time
    ? zh
      ? `（${beijingTime(time)}，北京时间）`
      : ` (${beijingTime(time)} Beijing time)`
    : '';
  const said = rest ? `${zh ? '：' : ': '}${messageWords(rest, 'insufficient_credits', lang)}` : '';
  return `${tokenLabel('reason', 'insufficient_credits', lang)}${when}${said}`;
}

/**
 * What an entry added after the plan of its cycle waits for, by the constraint that holds it, in
 * `lang` (the reason column says the constraint; a table cell holds 60 columns).
 */
const ADDED_WAITS: Record<string, { zh: string; en: string }> = {
  credit_budget: { zh: '计划后加入；等待积分', en: 'added after the plan; waits for credits' },
  rate_window: {
    zh: '计划后加入；等待调用频率余量',
    en: 'added after the plan; waits for room in the rate limit',
  },
  max_entries: {
    zh: '计划后加入；等待每周期条目上限腾出名额',
    en: 'added after the plan; waits for room under the entry cap',
  },
  related_share: {
    zh: '计划后加入；等待股东份额腾出名额',
    en: "added after the plan; waits for room in the shareholders' share",
  },
};

/** A deferral's detail in `lang`: the planner's own notes in words; anything else as written. */
function deferredDetail(detail: string | null, reason: string | null, lang: Lang): string {
  const d = detail ?? '';
  // Added after the plan and due: the next top-up plans it in this cycle (src/plan/topup.ts).
  if (reason === 'added_after_plan')
    return lang === 'zh'
      ? '本周期可排：下一次补充计划即排上（daybook enqueue 或 run）'
      : 'due today: the next top-up plans it (daybook enqueue or run)';
  if (d.startsWith('added after the plan of this cycle: waits for')) {
    const words = ADDED_WAITS[reason ?? ''];
    if (words) return words[lang];
  }
  if (d.startsWith('added after the plan of this cycle: '))
    return lang === 'zh' ? `计划后加入；${reasonWord(reason, lang)}` : d.replace(' of this cycle: ', '; ');
  if (d.startsWith('deferred by the planner')) {
    const reached = !d.endsWith('(not reached)');
    if (lang === 'en') return reached ? 'deferred by the planner' : 'not reached by the plan';
    return reached ? '由计划推迟' : '计划未排到';
  }
  return detailWords(detail, reason, lang);
}

/**
 * An error message in `lang`'s frame: `enterprise-search (HTTP 404): not_found: No matching …`
 * names the operation in words and leaves out the code the reason column already says; what the
 * upstream said stays as it said it.
 */
function messageWords(message: string | null, code: string | null, lang: Lang): string {
  const m = /^([a-z]+-[a-z]+) \(HTTP (\d+)\): (.*)$/s.exec(message ?? '');
  if (!m) return message ?? '';
  const [, op = '', status = '', rest = ''] = m;
  const said = code && rest.startsWith(`${code}: `) ? rest.slice(code.length + 2) : rest;
  const where = `${operationWord('operation', op, lang)}${lang === 'zh' ? `（HTTP ${status}）：` : ` (HTTP ${status}): `}`;
  return `${where}${said}`;
}

/** A drift path (`$.BE_INVEST[].PID`) with each documented field by its name. */
function driftField(path: string, operation: string, lang: Lang): string {
  if (path === '$body') return lang === 'zh' ? '应答正文' : 'answer body';
  const catalogue = operation === 'product-listing' ? 'product' : 'enterprise';
  const known = (name: string) =>
    catalogue === 'product' ? Object.hasOwn(PRODUCT_FIELDS, name) : enterpriseField(name) !== undefined;
  return path
    .split('.')
    .filter((seg) => seg !== '$')
    .map((seg) => {
      const list = seg.endsWith('[]');
      const name = list ? seg.slice(0, -2) : seg;
      return known(name) ? fieldLabel(name, lang, catalogue) : name;
    })
    .join(' › ');
}

/**
 * A shape format drift names (`integer`, `string or null`, `string YYYY-MM-DD…`, `string
 * outside a/b` …), its JSON types in words; formats and values as written.
 */
function shapeWords(shape: string, lang: Lang): string {
  const zh = lang === 'zh';
  const word = (t: string) => operationWord('json_type', t, lang);
  if (Object.hasOwn(OPERATION_WORDS.json_type, shape)) return word(shape);
  const orNull = /^(\S+) or null$/.exec(shape);
  if (orNull) return `${word(orNull[1] as string)}${zh ? '或空值' : ' or null'}`;
  const outside = /^(\S+) outside (.+)$/s.exec(shape);
  if (outside) return zh ? `${word(outside[1] as string)}，不在 ${outside[2]} 之列` : shape;
  const typed = /^(\S+) (.+)$/s.exec(shape);
  if (typed && Object.hasOwn(OPERATION_WORDS.json_type, typed[1] as string))
    return `${word(typed[1] as string)} ${typed[2]}`;
  return shape;
}

/** The header of each column of a status table, in `lang`. */
function headers(columns: readonly string[], lang: Lang): Record<string, string> {
  return Object.fromEntries(columns.map((c) => [c, STATUS_COLUMNS[c]?.[lang] ?? c]));
}

/** Rows as a table whose headers are in `lang` (formatTable escapes every cell). */
function table(rows: readonly Record<string, unknown>[], columns: readonly string[], lang: Lang): string {
  const h = headers(columns, lang);
  return formatTable(
    rows.map((r) => Object.fromEntries(columns.map((c) => [h[c] as string, r[c]]))),
    columns.map((c) => h[c] as string),
  );
}

/**
 * After the credits spent, when some are unconfirmed: how many are confirmed, how many not, and
 * what unconfirmed means (src/terms/fields.ts CREDIT_LABELS). Empty when every credit is confirmed.
 */
function creditsNote(l: Status['ledger'], lang: Lang): string {
  if (l.unconfirmed === 0) return '';
  const w = CREDIT_LABELS;
  return lang === 'zh'
    ? `（其中${w.confirmed.zh} ${count(l.confirmed, CREDITS, lang)}，${w.unconfirmed.zh} ${count(l.unconfirmed, CREDITS, lang)}：${w.unconfirmedNote.zh}）`
    : ` (${grouped(String(l.confirmed))} ${w.confirmed.en}, ${grouped(String(l.unconfirmed))} ${w.unconfirmed.en}: ${w.unconfirmedNote.en})`;
}

/** The line after the credits, when product calls were booked without an amount: how many. */
function unpricedLine(l: Status['ledger'], lang: Lang): string | null {
  if (l.unpricedCalls === 0) return null;
  const w = CREDIT_LABELS;
  const n = grouped(String(l.unpricedCalls));
  return lang === 'zh'
    ? `  ${w.unpriced.zh}：${n} 次（${w.unpricedNote.zh}）`
    : `  ${w.unpriced.en[0]?.toUpperCase()}${w.unpriced.en.slice(1)}: ${n} (${w.unpricedNote.en})`;
}

/** The summary lines at the head of the text status. */
function statusLines(s: Status, config: Config, lang: Lang): string[] {
  const { cycle, byStatus, budget, ledger, watch, queues, queueError, exports } = s;
  const zh = lang === 'zh';
  const colon = zh ? '：' : ': ';
  const list = (items: string[]) => items.join(zh ? '；' : '; ');
  const out: string[] = [];
  out.push(`${zh ? '周期' : 'Cycle'} ${cycle}`);
  const active = watch.active;
  const total = watch.total;
  out.push(
    zh
      ? `  监控名单：启用 ${count(active, ENTRIES, lang)}，共 ${count(total, ENTRIES, lang)}`
      : `  Watchlist: ${grouped(String(active))} of ${count(total, ENTRIES, lang)} active`,
  );
  const progress = [...byStatus]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) =>
      zh
        ? `${tokenLabel('fetch_status', status, lang)} ${count(n, ENTRIES, lang)}`
        : `${count(n, ENTRIES, lang)} ${Object.hasOwn(TOKENS.fetch_status, status) ? tokenLabel('fetch_status', status, lang) : forTerminal(status)}`,
    );
  out.push(
    `  ${zh ? '进度' : 'Progress'}${colon}${progress.length ? list(progress) : zh ? '尚未计划' : 'nothing planned yet'}`,
  );
  if (budget) {
    const ledgerNote = creditsNote(ledger, lang);
    const left = Math.max(0, budget.budget - budget.spent - budget.reserved);
    const line = zh
      ? `  积分：已用 ${count(budget.spent, CREDITS, lang)}${ledgerNote}，预留 ${count(budget.reserved, CREDITS, lang)}，预算 ${count(budget.budget, CREDITS, lang)}，剩余 ${count(left, CREDITS, lang)}`
      : `  Credits: ${count(budget.spent, CREDITS, lang)} spent${ledgerNote} + ${count(budget.reserved, CREDITS, lang)} reserved of a budget of ${count(budget.budget, CREDITS, lang)} (${count(left, CREDITS, lang)} left)`;
    const paused = budget.pausedAt
      ? zh
        ? `；已暂停：${forTerminal(pausedWords(budget.pausedReason, lang))}（daybook resume 继续）`
        : `; PAUSED: ${forTerminal(pausedWords(budget.pausedReason, lang))} (daybook resume continues)`
      : '';
    out.push(`${line}${paused}`);
    const unpriced = unpricedLine(ledger, lang);
    if (unpriced) out.push(unpriced);
  }
  if (queues) {
    const states = ['waiting', 'active', 'delayed', 'failed'] as const;
    out.push(
      `  ${zh ? '队列' : 'Queues'}${colon}${list(
        Object.entries(queues).map(
          ([k, c]) =>
            `${operationWord('job', k, lang)}${zh ? ' ' : ': '}${states
              .map((st) =>
                zh
                  ? `${operationWord('job_state', st, lang)} ${count(c[st] ?? 0, JOBS, lang)}`
                  : `${count(c[st] ?? 0, JOBS, lang)} ${operationWord('job_state', st, lang)}`,
              )
              .join(zh ? '、' : ', ')}`,
        ),
      )}`,
    );
  } else if (queueError)
    out.push(`  ${zh ? '队列：无法读取' : 'Queues: unavailable'} (${forTerminal(queueError)})`);
  if (exports.length === 0 && config.DAYBOOK_EXPORT_DIR)
    out.push(
      zh
        ? `  导出：尚未向 ${forTerminal(config.DAYBOOK_EXPORT_DIR)} 写入`
        : `  Export: none written yet to ${forTerminal(config.DAYBOOK_EXPORT_DIR)}`,
    );
  for (const e of exports) {
    const what = [
      operationWord('export_kind', e.kind, lang),
      e.format.toUpperCase(),
      count(e.rows, ROWS, lang),
    ];
    out.push(
      zh
        ? `  导出：批次 ${e.load_id}（${what.join('，')}），${at(e.completed_at, lang)}写入 ${forTerminal(e.destination)}`
        : `  Export: load ${e.load_id} (${what.join(', ')}) at ${at(e.completed_at, lang)} in ${forTerminal(e.destination)}`,
    );
  }
  return out;
}

/** The tables after the summary: deferred and failed entries, failed pulls, recent failures, drift. */
function writeStatusTables(s: Status, lang: Lang): void {
  const { cycle, deferred, failedEntries, failedPulls, failures, drift, driftTotals } = s;
  const zh = lang === 'zh';
  const write = (text: string) => process.stdout.write(text);
  if (deferred.total > 0) {
    const reasons = Object.entries(deferred.byReason)
      .map(([r, n]) => `${reasonWord(r, lang)}${zh ? ' ' : ': '}${count(n, ENTRIES, lang)}`)
      .join(zh ? '，' : ', ');
    const rows = deferred.first.map((d) => ({
      keyword: d.keyword,
      uscc: s.codes.get(d.watch_id) ?? '',
      reason: reasonWord(d.reason, lang),
      detail: deferredDetail(d.detail, d.reason, lang),
    }));
    write(
      zh
        ? `\n推迟：${count(deferred.total, ENTRIES, lang)}（${reasons}）；前 ${count(deferred.first.length, ENTRIES, lang)}：\n`
        : `\nDeferred: ${count(deferred.total, ENTRIES, lang)} (${reasons}); the first ${deferred.first.length}:\n`,
    );
    write(table(rows, ['keyword', 'uscc', 'reason', 'detail'], lang));
  }
  if (failedEntries.length > 0) {
    const rows = failedEntries.map((f) => ({
      keyword: f.keyword,
      uscc: s.codes.get(Number(f.watch_id)) ?? '',
      reason: reasonWord(f.reason, lang),
      detail: detailWords(f.detail, f.reason, lang),
      attempts: count(Number(f.attempts), TIMES, lang),
    }));
    write(
      zh
        ? `\n周期 ${cycle} 失败 ${count(failedEntries.length, ENTRIES, lang)}（本周期不再重试）：\n`
        : `\nFailed in cycle ${cycle} (${count(failedEntries.length, ENTRIES, lang)}; not retried this cycle):\n`,
    );
    write(table(rows, ['keyword', 'uscc', 'reason', 'detail', 'attempts'], lang));
  }
  if (failedPulls.length > 0) {
    const rows = failedPulls.map((p) => ({
      date: p.date,
      pull: pullWords(p.pull, lang),
      reason: reasonWord(p.reason, lang),
      detail: detailWords(p.detail, p.reason, lang),
    }));
    write(zh ? '\n产品榜单拉取失败（近 7 天）：\n' : '\nProduct list pulls failed (last 7 days):\n');
    write(table(rows, ['date', 'pull', 'reason', 'detail'], lang));
  }
  if (failures.length > 0) {
    const rows = failures.map((f) => ({
      kind: operationWord('job', f.kind, lang),
      entity: f.kind === 'products' ? pullWords(f.entity, lang) : f.entity,
      reason: reasonWord(f.error_code, lang),
      detail: detailWords(f.error_message, f.error_code, lang),
      finished_at: f.finished_at ? beijingTime(f.finished_at) : '',
    }));
    write(zh ? '\n近期失败：\n' : '\nRecent failures:\n');
    write(table(rows, ['kind', 'entity', 'reason', 'detail', 'finished_at'], lang));
  }
  if (drift.length > 0 && driftTotals) {
    const rows = drift.map((d) => ({
      operation: operationWord('operation', d.operation, lang),
      field: driftField(d.field, d.operation, lang),
      drift: tokenLabel('drift_kind', d.kind, lang),
      seen: shapeWords(d.seen, lang),
      expected: shapeWords(d.expected, lang),
      responses: count(d.responses, ANSWERS, lang),
      first_seen_at: beijingTime(d.first_seen_at),
      last_seen_at: beijingTime(d.last_seen_at),
    }));
    write(
      zh
        ? `\n格式漂移：未列明字段 ${count(driftTotals.unknown, FIELDS, lang)}，缺失字段 ${count(driftTotals.missing, FIELDS, lang)}，类型或格式不符 ${count(driftTotals.variants, FIELDS, lang)}（最新在前；完整列表见 daybook drift）：\n`
        : `\nFormat drift: ${driftTotals.unknown} unknown fields, ${driftTotals.missing} missing fields, ${driftTotals.variants} type variants (latest first; all in daybook drift):\n`,
    );
    write(
      table(
        rows,
        ['operation', 'field', 'drift', 'seen', 'expected', 'responses', 'first_seen_at', 'last_seen_at'],
        lang,
      ),
    );
  }
}

export function statusCommand(): Command {
  return command('status')
    .addOption(cycleOption('the cycle to show'))
    .option('--json', 'print as JSON (the codes and raw values, for machines)')
    .option('--no-queues', 'do not ask Redis for queue counts')
    .addOption(langOption())
    .action(async (opts: { cycle?: string; json?: boolean; queues: boolean; lang?: Lang }) => {
      const config = configOrExit();
      const lang = opts.lang ?? config.DAYBOOK_LANG ?? 'en';
      await withStore(config, async ({ sql }) => {
        const status = await readStatus(sql, config, opts.cycle ?? cycleOf(new Date()), opts.queues);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(statusJson(status))}\n`);
          return;
        }
        process.stdout.write(`${statusLines(status, config, lang).join('\n')}\n`);
        writeStatusTables(status, lang);
      });
    });
}

/**
 * `npm run bench -- console`: the server time of each web console page (src/console) on a large
 * database. The database is written directly in SQL, shaped like a year of daybook: N watched
 * companies with 1 to 4 versions each (three changes per new version, two persons and two
 * shareholders per version), one refresh per company every ten days booked in the credit ledger
 * (kept forever), the claims of the last 30 cycles (older ones are compacted), a product list of
 * 20 pulled three times a day, and comments. Each page is asked for through the admin server
 * (Fastify's inject: no socket, the whole request path otherwise), as the sql reader, 5 times
 * after one warm-up; the median is the figure. Target: every page under 300 ms.
 *
 * Measured at the soak's size (20,000 companies, 30 cycles) and at 100,000 companies over a year.
 */
import { openConsoleReader } from '../src/console/reader.ts';
import { buildAdminApp } from '../src/runtime/admin.ts';
import { type BenchDatabase, freshDatabase, round } from './support.ts';

export interface ConsoleSize {
  companies: number;
  days: number;
}

export interface ConsoleRun extends ConsoleSize {
  versions: number;
  changes: number;
  ledgerRows: number;
  buildSeconds: number;
  /** Median server time per page, in ms. */
  pagesMs: Record<string, number>;
  /** Median time of each related-party query (analytics.enterprise_links, related_companies), in ms. */
  linksMs: Record<string, number>;
  slowest: string;
  met: boolean;
}

export interface ConsoleResult {
  runs: ConsoleRun[];
  targetMs: number;
  linksTargetMs: number;
  repeats: number;
  met: boolean;
}

const TARGET_MS = 300;
/** The related-party queries' target: one company's links, and its depth-3 neighbourhood. */
const LINKS_TARGET_MS = 100;
const DAY0 = '2025-01-01';

/** The year of data, written in a few statements (generate_series), as the owner. */
async function fill(db: BenchDatabase, { companies: n, days }: ConsoleSize): Promise<void> {
  const sql = db.sql;
  await sql.unsafe('set synchronous_commit = off');
  const last = `('${DAY0}'::date + ${days - 1})`;
  await sql.unsafe(`
    insert into enterprises (pid, first_seen_at, last_seen_at)
    select 'p' || lpad(i::text, 8, '0'), '${DAY0}'::timestamptz, ${last}::timestamptz from generate_series(1, ${n}) i`);
  await sql.unsafe(`
    insert into enterprise_versions (pid, version, valid_from, valid_to, is_current, content_hash, cycle, ent_name,
      history_name, uncid, legal_person, ent_status, reg_cap, operating_perpetual, normalized, op_loc)
    select pid, v, vf, lead(vf) over w, lead(vf) over w is null, md5(pid || v), vf::date,
      name, case when v > 1 then lag(name) over w end, uncid, '张' || (i % 97), case when v = 4 then '注销' else '存续' end,
      (100 + v * 10)::numeric, true, '{}'::jsonb, '上海市浦东新区' || (i % 500) || '号'
    from (
      select i, 'p' || lpad(i::text, 8, '0') as pid, v,
        ('${DAY0}'::date + ((v - 1) * ${days} / (1 + i % 4)) + (i % 7))::timestamptz as vf,
        (array['北京','上海','深圳','杭州','成都','武汉','南京','西安'])[1 + i % 8] || '星河' || i || '科技' || v || '号有限公司' as name,
        '91310000' || lpad(i::text, 10, '0') as uncid
      from generate_series(1, ${n}) i, generate_series(1, 4) v
      where v <= 1 + i % 4
    ) s
    window w as (partition by pid order by v)`);
  await sql.unsafe(`
    update enterprises e set current_version_id = v.id from enterprise_versions v where v.pid = e.pid and v.is_current`);
  await sql.unsafe(`
    insert into enterprise_persons (version_id, ordinal, name, position)
    select id, o, '李' || (id % 991) || o, case o when 0 then '执行董事' else '监事' end
    from enterprise_versions, generate_series(0, 1) o`);
  await sql.unsafe(`
    insert into enterprise_shareholders (version_id, ordinal, name, type)
    select id, o, '王' || ((id + version) % 887) || o, '自然人股东' from enterprise_versions, generate_series(0, 1) o`);
  // One enterprise shareholder per version, a company of the same database: company i is held by
  // company i/3 + v (so most hold about three, and the holder moves with each version). Chains
  // reach depth 3 and beyond, for the related-party queries.
  await sql.unsafe(`
    insert into enterprise_shareholders (version_id, ordinal, name, type, shareholder_pid)
    select id, 2, '控股' || h || '号有限公司', '企业法人', 'p' || lpad(h::text, 8, '0')
    from (select id, 1 + (substr(pid, 2)::int / 3 + version - 1) % ${n} as h from enterprise_versions) v`);
  await sql.unsafe(`
    insert into enterprise_changes (pid, cycle, version_id, previous_version_id, category, field, kind, before, after, severity, detected_at)
    select v.pid, v.cycle, v.id, p.id, c.category, c.field, 'modified', 'before ' || p.version, 'after ' || v.version, c.severity, v.valid_from
    from enterprise_versions v join enterprise_versions p on p.pid = v.pid and p.version = v.version - 1,
      (values ('name', 'ENTNAME', 'medium'), ('status', 'ENTSTATUS', 'high'), ('shareholders', 'BE_INVEST', 'low')) c(category, field, severity)
    order by v.valid_from`);
  await sql.unsafe(`
    insert into enterprise_observations (pid, kind, cycle, keyword, observed_at)
    select pid, 'initial', cycle, ent_name, valid_from from enterprise_versions where version = 1`);
  await sql.unsafe(`
    insert into watchlist (keyword, keyword_key, pid, last_refreshed_at, refreshed_cycle, last_cycle, last_outcome, due_at, change_rate)
    select v.ent_name, lower(v.ent_name), v.pid, ${last}::timestamptz - ((i % 10) || ' days')::interval, ${last} - i % 10,
      ${last} - i % 10, case when i % 50 = 0 then 'server_error' else 'success' end,
      ${last}::timestamptz + ((i % 10) || ' days')::interval, 0.01 + (i % 30) / 100.0
    from generate_series(1, ${n}) i join enterprise_versions v on v.pid = 'p' || lpad(i::text, 8, '0') and v.version = 1`);
  await sql.unsafe(`
    insert into cycle_budgets (cycle, budget, spent) select d::date, ${(n * 3 * 2) / 10}, ${(n * 3) / 10}
    from generate_series('${DAY0}'::date, ${last}, interval '1 day') d`);
  // One refresh of each company every ten days, booked (3 credits each): kept forever.
  await sql.unsafe(`
    insert into ledger_entries (cycle, subject_id, credits, billed_at, watch_id, call_fence)
    select '${DAY0}'::date + d, daybook_ledger_subject('enterprise-search', w.pid, null, null), 3,
      ('${DAY0}'::date + d)::timestamptz, w.id, 1
    from generate_series(0, ${days - 1}) d join watchlist w on w.id % 10 = d % 10`);
  await sql.unsafe(`
    insert into cycle_fetches (cycle, watch_id, status, pid, attempts, credits_billed, error_code)
    select '${DAY0}'::date + d, w.id, case when w.id % 50 = 0 then 'failed' else 'succeeded' end, w.pid, 1, 3,
      case when w.id % 50 = 0 then 'server_error' end
    from generate_series(greatest(0, ${days} - 30), ${days - 1}) d join watchlist w on w.id % 10 = d % 10`);
  await fillProducts(db, days);
  await sql.unsafe('analyze');
}

/** Eight new products a day, each listed the day it launched, in three pulls of 20. */
async function fillProducts(db: BenchDatabase, days: number): Promise<void> {
  const sql = db.sql;
  await sql.unsafe(`
    insert into raw_responses (operation, params_id, outcome, fetched_at)
    select 'product-listing', daybook_raw_params(jsonb_build_object('date', ('${DAY0}'::date + d)::text)), 'success',
      ('${DAY0}'::date + d)::timestamptz + (k || ' hours')::interval
    from generate_series(0, ${days - 1}) d, generate_series(1, 3) k`);
  await sql.unsafe(`
    insert into products (product_id, first_seen_at, last_seen_at)
    select (600000 + i)::text, now(), now() from generate_series(0, ${days * 20 - 1}) i`);
  await sql.unsafe(`
    insert into product_versions (product_id, version, valid_from, is_current, content_hash, record_id, name, tagline, url, normalized)
    select (600000 + i)::text, 1, now(), true, md5(i::text), gen_random_uuid()::text, 'Product ' || i, 'Tagline ' || i,
      'https://example.com/p/' || i, '{}'::jsonb
    from generate_series(0, ${days * 20 - 1}) i`);
  await sql.unsafe(
    `update products p set current_version_id = v.id from product_versions v where v.product_id = p.product_id`,
  );
  await sql.unsafe(`
    insert into trending_snapshots (list_date, position, product_id, votes_count, comments_count, fetched_at, raw_response_id)
    select (r.params->>'date')::date, pos, (600000 + ((r.params->>'date')::date - '${DAY0}'::date) * 20 + pos - 1)::text,
      (400 - pos * 15) + (r.id % 3) * 20, 10, r.fetched_at, r.id
    from raw_answers r, generate_series(1, 20) pos where r.operation = 'product-listing'`);
  await sql.unsafe(`
    insert into product_comments (product_id, dedup_key, body, created_at, first_seen_at)
    select product_id, product_id || ':' || k, 'Comment ' || k || ' on ' || product_id, now(), now()
    from products, generate_series(1, 5) k`);
}

/** The pages and queries to time: each section of the console, with its heavier variants. */
function pagesOf(i: number, product: string, day: string): Record<string, string> {
  const pid = `p${String(i).padStart(8, '0')}`;
  return {
    overview: '/ui/',
    'search (part of a name)': `/ui/companies?q=${encodeURIComponent('星河424')}`,
    'search (credit code)': `/ui/companies?q=91310000${String(i).padStart(10, '0')}`,
    company: `/ui/companies/${pid}`,
    'company as of a day': `/ui/companies/${pid}?at=${day}`,
    changes: '/ui/changes',
    'changes (high, a month)': `/ui/changes?severity=high&from=${day}&to=${day.slice(0, 8)}28`,
    'changes (one PID)': `/ui/changes?pid=${pid}`,
    'changes, page 50': '/ui/changes?before=BEFORE',
    watchlist: '/ui/watchlist',
    'watchlist, last page': '/ui/watchlist?after=AFTER',
    products: '/ui/products',
    product: `/ui/products/${product}`,
  };
}

/**
 * The related-party queries on company `i`, run as the owner (one statement each, a
 * warm-up then `repeats` timed): its links now and as of a past day, who holds it, and the
 * companies within 3 hops, with and without same-name persons.
 */
async function timeLinks(db: BenchDatabase, i: number, repeats: number): Promise<Record<string, number>> {
  const pid = `p${String(i).padStart(8, '0')}`;
  const queries: Record<string, string> = {
    'links of one company': `select * from analytics.enterprise_links where pid = '${pid}'`,
    'links as of a past day': `select * from analytics.enterprise_links where pid = '${pid}'
      and valid_from_cycle <= '${DAY0}'::date + 40 and (valid_to_cycle is null or valid_to_cycle > '${DAY0}'::date + 40)`,
    'holders of one company': `select * from analytics.enterprise_links where related_pid = '${pid}'`,
    'related within 3 hops (shareholdings)': `select * from analytics.related_companies('${pid}', null, 3, false)`,
    'related within 3 hops (with same-name persons)': `select * from analytics.related_companies('${pid}', null, 3)`,
    'related within 3 hops as of a past day': `select * from analytics.related_companies('${pid}', '${DAY0}'::date + 40, 3)`,
  };
  const out: Record<string, number> = {};
  for (const [name, text] of Object.entries(queries)) {
    const times: number[] = [];
    for (let k = 0; k <= repeats; k++) {
      const s = performance.now();
      await db.sql.unsafe(text);
      if (k > 0) times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    out[name] = round(times[Math.floor(times.length / 2)] as number, 1);
  }
  return out;
}

async function measure(size: ConsoleSize, repeats: number): Promise<ConsoleRun> {
  const db = await freshDatabase('console', 2);
  try {
    const t = performance.now();
    await fill(db, size);
    const buildSeconds = round((performance.now() - t) / 1000, 1);
    const [counts] = await db.sql<
      { versions: number; changes: number; ledger: number; before: number; after: number }[]
    >`
      select (select count(*) from enterprise_versions)::int as versions,
        (select count(*) from enterprise_changes)::int as changes,
        (select count(*) from credit_ledger)::int as ledger,
        (select id from enterprise_changes order by id desc offset 5000 limit 1)::int as before,
        (select max(id) - 150 from watchlist)::int as after`;
    const reader = await openConsoleReader(db.sql, db.url, false);
    const app = await buildAdminApp({
      sql: db.sql,
      redis: null,
      queues: null,
      console: reader,
      host: '127.0.0.1',
      port: 0,
      token: null,
    });
    const pagesMs: Record<string, number> = {};
    try {
      const day = `${DAY0.slice(0, 4)}-${String(Math.min(12, Math.ceil(size.days / 30))).padStart(2, '0')}-01`;
      const pages = pagesOf(
        Math.min(4242, size.companies - 1),
        String(600000 + (size.days - 2) * 20 + 3),
        day,
      );
      for (const [name, raw] of Object.entries(pages)) {
        const url = raw
          .replace('BEFORE', String(counts?.before ?? 1))
          .replace('AFTER', String(counts?.after ?? 0));
        const times: number[] = [];
        for (let i = 0; i <= repeats; i++) {
          const s = performance.now();
          const res = await app.inject({ method: 'GET', url, headers: { host: '127.0.0.1' } });
          const ms = performance.now() - s;
          if (res.statusCode !== 200)
            throw new Error(`${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
          if (i > 0) times.push(ms);
        }
        times.sort((a, b) => a - b);
        pagesMs[name] = round(times[Math.floor(times.length / 2)] as number, 1);
      }
    } finally {
      await app.close();
      await reader.close();
    }
    const linksMs = await timeLinks(db, Math.min(4242, size.companies - 1), repeats);
    const slowest = Object.entries(pagesMs).sort((a, b) => b[1] - a[1])[0] as [string, number];
    return {
      ...size,
      versions: counts?.versions ?? 0,
      changes: counts?.changes ?? 0,
      ledgerRows: counts?.ledger ?? 0,
      buildSeconds,
      pagesMs,
      linksMs,
      slowest: `${slowest[0]} ${slowest[1]} ms`,
      met:
        Object.values(pagesMs).every((ms) => ms < TARGET_MS) &&
        Object.values(linksMs).every((ms) => ms < LINKS_TARGET_MS),
    };
  } finally {
    // DAYBOOK_CONSOLE_KEEP=1 leaves the database for a look at the plans (its URL is printed).
    if (process.env.DAYBOOK_CONSOLE_KEEP === '1') {
      process.stderr.write(`console: kept ${db.url}\n`);
      await db.close();
    } else await db.drop();
  }
}

export async function benchConsole(
  sizes: ConsoleSize[] = [
    { companies: 20_000, days: 30 },
    { companies: 100_000, days: 365 },
  ],
  repeats = 5,
): Promise<ConsoleResult> {
  const runs: ConsoleRun[] = [];
  for (const size of sizes) {
    process.stderr.write(`console: ${size.companies} companies x ${size.days} days …\n`);
    runs.push(await measure(size, repeats));
  }
  return {
    runs,
    targetMs: TARGET_MS,
    linksTargetMs: LINKS_TARGET_MS,
    repeats,
    met: runs.every((r) => r.met),
  };
}

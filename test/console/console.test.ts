import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANGES_PAGE } from '../../src/console/routes.ts';
import { CONSOLE_TOKEN, type ConsoleWorld, consoleWorld, HOSTILE, HOSTILE_URL } from '../support/console.ts';

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

describe('the web console over HTTP', { timeout: 300_000 }, () => {
  let w: ConsoleWorld;
  const get = async (path: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await fetch(`${w.admin.url}${path}`, {
      headers: { authorization: `Bearer ${CONSOLE_TOKEN}`, ...headers },
      redirect: 'manual',
    });
    return { status: res.status, headers: res.headers, body: await res.text() };
  };

  beforeAll(async () => {
    w = await consoleWorld();
  });
  afterAll(async () => {
    await w?.close();
  });

  it('asks for the token: a sign-in page without it, the cookie from ?token=, the page with it', async () => {
    const bare = await fetch(`${w.admin.url}/ui/`, { redirect: 'manual' });
    expect(bare.status).toBe(401);
    const text = await bare.text();
    expect(text).toContain('name="token"');
    expect(text).not.toContain('Current cycle');
    expect(bare.headers.get('content-security-policy')).toContain("script-src 'self'");

    const login = await fetch(`${w.admin.url}/ui/?token=${CONSOLE_TOKEN}`, { redirect: 'manual' });
    expect(login.status).toBe(303);
    expect(login.headers.get('location')).toBe('/ui/');
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^daybook_token=/);
    const page = await fetch(`${w.admin.url}/ui/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Current cycle: 2026-11-21');

    const wrong = await get('/ui/watchlist', { authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
  });

  it('answers to expected Host headers only, for the console too', async () => {
    const http = await import('node:http');
    const url = new URL(w.admin.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          hostname: url.hostname,
          port: url.port,
          path: '/ui/',
          headers: { host: 'evil.example', authorization: `Bearer ${CONSOLE_TOKEN}` },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(421);
  });

  it('sends every page with a Content-Security-Policy that allows no inline script, and no script at all', async () => {
    const pages = [
      '/ui/',
      '/ui/companies?q=公司',
      `/ui/companies/${encodeURIComponent(w.hostilePid)}`,
      '/ui/changes',
      '/ui/watchlist',
      '/ui/products',
      `/ui/products/${w.trendingProduct}`,
      '/ui/nowhere',
    ];
    for (const path of pages) {
      const a = await get(path);
      expect(a.status, path).toBe(path === '/ui/nowhere' ? 404 : 200);
      const csp = a.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(a.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(a.body, path).not.toMatch(/<script/i);
    }
  });

  it('shows hostile upstream text as plain text on every page that shows it', async () => {
    const pid = encodeURIComponent(w.hostilePid);
    const pages = [
      `/ui/companies/${pid}`,
      `/ui/companies?q=${encodeURIComponent(w.hostilePid)}`,
      `/ui/changes?pid=${pid}`,
      `/ui/products/${w.hostileProduct}`,
      '/ui/watchlist',
    ];
    for (const path of pages) {
      const a = await get(path);
      expect(a.status, path).toBe(200);
      expect(a.body, path).not.toMatch(/<script|<img|onerror="|href="javascript:/i);
      expect(a.body, path).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
      expect(a.body, path).not.toContain(String.fromCharCode(27));
    }
    const company = (await get(`/ui/companies/${pid}`)).body;
    expect(company).toContain('&lt;script&gt;window.__pwned=1;alert(1)&lt;/script&gt;');
    expect(company).toContain('\\u202eevil\\u202c');
    expect(company).toContain('\\u001b[31mred');
    const product = (await get(`/ui/products/${w.hostileProduct}`)).body;
    expect(product).toContain(HOSTILE_URL.replace(/'/g, '&#39;'));
    expect(product).not.toContain(`href="${HOSTILE_URL}`);
  });

  it('finds companies by part of a name, former name, credit code or PID', async () => {
    const [e] = await w.c.t.sql<{ pid: string; ent_name: string; uncid: string }[]>`
      select pid, ent_name, uncid from analytics.enterprise_current where uncid is not null and pid <> ${w.hostilePid} order by pid limit 1`;
    if (!e) throw new Error('no company with a credit code');
    const link = `href="/ui/companies/${encodeURIComponent(e.pid)}"`;
    for (const q of [e.ent_name.slice(0, 4), e.uncid, e.uncid.toLowerCase(), e.pid]) {
      const a = await get(`/ui/companies?q=${encodeURIComponent(q)}`);
      expect(a.body, q).toContain(link);
    }
    const [former] = await w.c.t.sql<{ pid: string; history_name: string }[]>`
      select pid, history_name from analytics.enterprise_history
      where history_name is not null and pid <> ${w.hostilePid} order by pid limit 1`;
    if (!former) throw new Error('no company with a former name');
    const byFormer = await get(`/ui/companies?q=${encodeURIComponent(former.history_name)}`);
    expect(byFormer.body).toContain(`href="/ui/companies/${encodeURIComponent(former.pid)}"`);
    expect(byFormer.body).toContain(former.history_name.replace(/&/g, '&amp;'));
    expect((await get('/ui/companies?q=%25')).status).toBe(200);
    expect((await get('/ui/companies?q=zzzz-nothing')).body).toContain('Nothing matches.');
  });

  it("shows a company's persons and shareholders as of a past day, from its history", async () => {
    const versions = await w.c.t.sql<{ version: number; cycle: string; shareholders: { name: string }[] }[]>`
      select version, cycle::text as cycle, shareholders from analytics.enterprise_history
      where pid = ${w.historyPid} order by version`;
    expect(versions.length).toBeGreaterThan(1);
    const first = versions[0] as (typeof versions)[number];
    const last = versions.at(-1) as (typeof versions)[number];
    const past = (await get(`/ui/companies/${encodeURIComponent(w.historyPid)}?at=${first.cycle}`)).body;
    expect(past).toContain(`Version ${first.version} · Cycle ${first.cycle}</p>`);
    for (const s of first.shareholders) expect(past).toContain(s.name.replace(/&/g, '&amp;'));
    const now = (await get(`/ui/companies/${encodeURIComponent(w.historyPid)}`)).body;
    expect(now).toContain(`Version ${last.version} · Cycle ${last.cycle}</p>`);
    const before = (await get(`/ui/companies/${encodeURIComponent(w.historyPid)}?at=2020-01-01`)).body;
    expect(before).toContain('No version existed on that day.');
  });

  it('links each version of the timeline to the raw answer it came from, read as the reader', async () => {
    const page = (await get(`/ui/companies/${encodeURIComponent(w.historyPid)}`)).body;
    const ids = [...page.matchAll(/href="\/ui\/raw\/(\d+)"/g)].map((m) => m[1]);
    expect(ids.length).toBeGreaterThan(1);
    const raw = await get(`/ui/raw/${ids[0]}`);
    expect(raw.status).toBe(200);
    expect(raw.body).toContain('enterprise-search');
    expect(raw.body).toContain(w.historyPid);
  });

  it('refuses bad input with a page naming the problem', async () => {
    const bad = await get(`/ui/companies/${encodeURIComponent(w.historyPid)}?at=2026-13-45`);
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('at must be a date as YYYY-MM-DD, not &quot;2026-13-45&quot;');
    expect((await get('/ui/changes?severity=urgent')).status).toBe(400);
    expect((await get('/ui/changes?before=-1')).status).toBe(400);
    expect((await get('/ui/raw/abc')).status).toBe(400);
  });

  it('speaks Chinese to a browser that asks for it, and switches on the page', async () => {
    const zh = await get('/ui/', { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.5' });
    expect(zh.body).toContain('<html lang="zh-CN">');
    expect(zh.body).toContain('当前周期');
    expect(zh.body).toContain('href="/ui/?lang=en"');
    const en = await get('/ui/?lang=en', { 'accept-language': 'zh-CN' });
    expect(en.body).toContain('<html lang="en">');
    expect(en.headers.get('set-cookie')).toContain('daybook_lang=en');
    const kept = await get('/ui/', { 'accept-language': 'zh-CN', cookie: 'daybook_lang=en' });
    expect(kept.body).toContain('Current cycle');
  });

  it('reads as the sql reader, which cannot read the tables behind the views', async () => {
    await expect(w.reader.read((tx) => tx`select * from watchlist limit 1`)).rejects.toThrow(
      /permission denied/,
    );
    await expect(w.reader.read((tx) => tx`select * from sql_reader`)).rejects.toThrow(/permission denied/);
    const [who] = await w.reader.read((tx) => tx<{ u: string }[]>`select current_user::text as u`);
    expect(who?.u).toMatch(/^daybook_sql_/);
  });

  it('pages the change feed by keyset: every change exactly once, while new changes are written', async () => {
    const sql = w.c.t.sql;
    // Enough changes for several pages.
    await sql`insert into enterprise_changes (pid, cycle, version_id, previous_version_id, category, field, kind, before, after, detail, severity, detected_at)
      select pid, cycle, version_id, previous_version_id, category, field, kind, before, after, detail, severity, detected_at
      from enterprise_changes, generate_series(1, 4) order by id limit ${CHANGES_PAGE * 3.5}`;
    const existing = (await sql<{ id: number }[]>`select id::float8 as id from enterprise_changes`).map(
      (r) => r.id,
    );
    const seen: number[] = [];
    let path = '/ui/changes';
    let pages = 0;
    for (;;) {
      const a = await get(path);
      expect(a.status).toBe(200);
      seen.push(...[...a.body.matchAll(/<tr id="change-(\d+)"/g)].map((m) => Number(m[1])));
      pages++;
      // Someone writes new changes between two page loads.
      await sql`insert into enterprise_changes (pid, cycle, version_id, previous_version_id, category, field, kind, before, after, detail, severity, detected_at)
        select pid, cycle, version_id, previous_version_id, category, field, kind, before, after, detail, severity, now()
        from enterprise_changes order by id limit 7`;
      const next = /<a href="([^"]+)" rel="next">/.exec(a.body)?.[1];
      if (!next) break;
      path = next.replace(/&amp;/g, '&');
    }
    expect(pages).toBeGreaterThan(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => existing.includes(id)).sort((a, b) => a - b)).toEqual(
      [...existing].sort((a, b) => a - b),
    );
  });

  it('filters the change feed and downloads the selection as CSV', async () => {
    const sql = w.c.t.sql;
    const [high] = await sql<{ n: number }[]>`
      select count(*)::int as n from enterprise_changes where severity = 'high' and cycle between '2026-11-19' and '2026-11-21'`;
    const filtered = await get('/ui/changes?severity=high&from=2026-11-19&to=2026-11-21');
    expect(filtered.status).toBe(200);
    expect(filtered.body).not.toMatch(/sev-(medium|low)"/);
    const csv = await get('/ui/changes.csv?severity=high&from=2026-11-19&to=2026-11-21');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toContain('changes.csv');
    const lines = csv.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'change_id,detected_at,cycle,pid,current_name,category,field,kind,before,after,detail,severity,to_version',
    );
    const records = lines.slice(1).filter((l) => /^\d+,/.test(l));
    expect(records.length).toBe(high?.n);
    // The hostile change: quoted, and never a formula.
    const all = (await get(`/ui/changes.csv?pid=${encodeURIComponent(w.hostilePid)}`)).body;
    expect(all).toContain(`"${HOSTILE.replace(/"/g, '""')}`);
    const empty = await get('/ui/changes.csv?pid=nobody');
    expect(empty.body.trimEnd().split('\r\n')).toHaveLength(1);
  });

  it('shows the watchlist read-only, with freshness, rate, next due and match level', async () => {
    const a = await get('/ui/watchlist');
    expect(a.body).toContain('Days stale');
    expect(a.body).toContain('name only');
    expect(a.body).not.toMatch(/<form[^>]*method="post"/i);
    const [n] = await w.c.t.sql<{ n: number }[]>`select count(*)::int as n from watchlist`;
    expect([...a.body.matchAll(/<tr><td>/g)].length).toBe(Math.min(n?.n ?? 0, 200));
  });

  it("shows a day's trending list and a product's votes and rank across pulls", async () => {
    const list = await get(`/ui/products?date=${w.trendingDate}`);
    expect(list.body).toContain(`href="/ui/products/${w.trendingProduct}"`);
    const p = await get(`/ui/products/${w.trendingProduct}`);
    expect(p.body).toContain('<svg class="chart"');
    expect((await get('/ui/products')).body).toContain('<option value="2026-11-19" selected>');
    expect(p.body).toMatch(/<polyline class="line" points="[\d.,\s]+"/);
    const [pulls] = await w.c.t.sql<{ n: number }[]>`
      select count(*)::int as n from trending_snapshots where product_id = ${w.trendingProduct}`;
    expect(pulls?.n).toBeGreaterThan(1);
    expect([...p.body.matchAll(/<circle class="dot"/g)].length).toBe(2 * (pulls?.n ?? 0));
  });

  it('says on the overview why entries failed and why the cycle is paused', async () => {
    const sql = w.c.t.sql;
    await sql`update cycle_fetches set status = 'failed', error_code = 'server_error'
      where (cycle, watch_id) in (select cycle, watch_id from cycle_fetches where cycle = '2026-11-21' order by watch_id limit 2)`;
    await sql`update cycle_budgets set paused_at = now(), paused_reason = ${`insufficient_credits: ${HOSTILE}`}
      where cycle = '2026-11-21'`;
    const a = await get('/ui/');
    expect(a.body).toMatch(/<th scope="row">failed<\/th><td class="n">2<\/td><td>server_error × 2<\/td>/);
    expect(a.body).toContain('insufficient_credits: &lt;script&gt;');
    expect(a.body).not.toContain('Not paused');
  });
});

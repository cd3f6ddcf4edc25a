import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANGES_PAGE } from '../../src/console/routes.ts';
import {
  CONSOLE_CYCLES,
  CONSOLE_TOKEN,
  type ConsoleWorld,
  consoleWorld,
  HOSTILE,
  HOSTILE_URL,
} from '../support/console.ts';

/** What a person reads of a page: its text without markup (links keep their PIDs in the href). */
function textOf(page: string): string {
  return page
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

const escaped = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

const HEX_ID = /(?<![0-9a-zA-Z])[0-9a-f]{32}(?![0-9a-zA-Z])/;

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
    expect(cookie).toMatch(/^daybook_session=v1\./);
    expect(cookie).not.toContain(CONSOLE_TOKEN);
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
    expect(bad.body).toContain(
      '<code>at</code> must be a date as YYYY-MM-DD, from 0001-01-01 to 9999-12-31, not &quot;2026-13-45&quot;',
    );
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

  it('starts the CSV with a byte order mark, speaks Chinese with ?lang=zh, and keeps formulas as text', async () => {
    const sql = w.c.t.sql;
    const [v] = await sql<{ id: number }[]>`
      select id::float8 as id from enterprise_versions where pid = ${w.hostilePid} and is_current`;
    if (!v) throw new Error('no current version');
    await sql`insert into enterprise_changes (pid, cycle, version_id, previous_version_id, category, field, kind, before, after, detail, severity, detected_at)
      values (${w.hostilePid}, ${CONSOLE_CYCLES[3]}, ${v.id}, ${v.id}, 'address', 'OPLOC', 'modified',
        ${'=HYPERLINK("http://evil.example","点击")'}, '@SUM(1+1)', null, 'low', now())`;
    const bytes = async (path: string) => {
      const res = await fetch(`${w.admin.url}${path}`, {
        headers: { authorization: `Bearer ${CONSOLE_TOKEN}` },
      });
      expect(res.status, path).toBe(200);
      return new Uint8Array(await res.arrayBuffer());
    };
    // The text as a spreadsheet reads it: the byte order mark kept.
    const read = (b: Uint8Array) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(b);
    const pid = encodeURIComponent(w.hostilePid);
    for (const lang of ['', '&lang=zh', '&lang=en']) {
      const b = await bytes(`/ui/changes.csv?pid=${pid}${lang}`);
      expect([...b.slice(0, 3)], lang).toEqual([0xef, 0xbb, 0xbf]);
      const text = read(b);
      // Never a formula, in any language: the cell starts with a quote.
      expect(text, lang).toContain(`"'=HYPERLINK(""http://evil.example"",""点击"")"`);
      expect(text, lang).toContain(`,'@SUM(1+1),`);
      expect(text, lang).not.toMatch(/(^|,)[=+@]/m);
    }
    const [machine] = read(await bytes('/ui/changes.csv')).split('\r\n');
    expect(machine).toBe(
      '\uFEFFchange_id,detected_at,cycle,pid,current_name,category,field,kind,before,after,detail,severity,to_version',
    );
    const zh = read(await bytes(`/ui/changes.csv?pid=${pid}&lang=zh`)).split('\r\n');
    expect(zh[0]).toBe(
      '\uFEFF发现时间,变更日期,企业名称,统一社会信用代码,变更类别,变更项目,变更方式,变更前,变更后,原因,严重程度,变更后版本',
    );
    // The values in words too: no token, no field code, no PID.
    const body = zh.slice(1).join('\n');
    expect(body).toContain(',住所,住所,变更,');
    expect(body).not.toMatch(/,(address|OPLOC|modified|low|medium|high),/);
    expect(body).not.toMatch(HEX_ID);
    const [en] = read(await bytes(`/ui/changes.csv?pid=${pid}&lang=en`)).split('\r\n');
    expect(en).toBe(
      '\uFEFFDetected,Date,Company name,Unified social credit code,Category,Item,Kind,Before,After,Reason,Severity,To version',
    );
    // A capital change reads in 万 of its currency, as the company page shows it.
    const capital = read(await bytes('/ui/changes.csv?category=registered_capital&lang=zh'));
    const amounts = [...capital.matchAll(/,注册资本,变更,("[^"]*"|[^,]*),("[^"]*"|[^,]*),/g)];
    expect(amounts.length).toBeGreaterThan(0);
    for (const m of amounts)
      for (const cell of [m[1], m[2]]) expect(cell?.replace(/"/g, '')).toMatch(/^[\d,]+(\.\d+)? 万\S+$/);
  });

  it('shows a shareholder daybook holds by name, credit code and link, and never a PID', async () => {
    const sql = w.c.t.sql;
    const [holder] = await sql<{ pid: string; ent_name: string; uncid: string }[]>`
      select pid, ent_name, uncid from enterprise_versions
      where is_current and uncid is not null and pid not in (${w.hostilePid}, ${w.historyPid})
      order by pid limit 1`;
    const [held] = await sql<{ pid: string; id: number; ordinal: number }[]>`
      select v.pid, v.id::float8 as id, min(s.ordinal)::int as ordinal
      from enterprise_versions v join enterprise_shareholders s on s.version_id = v.id
      where v.is_current and v.pid not in (${w.hostilePid}, ${w.historyPid}, ${holder?.pid ?? ''})
      group by v.pid, v.id order by v.pid limit 1`;
    if (!holder || !held) throw new Error('no two companies to link');
    // The company's first shareholder is the holder (by PID), and a change names it and one daybook does not hold.
    await sql`update enterprise_shareholders set shareholder_pid = ${holder.pid} where version_id = ${held.id} and ordinal = ${held.ordinal}`;
    const stranger = 'ab'.repeat(16);
    await sql`insert into enterprise_changes (pid, cycle, version_id, previous_version_id, category, field, kind, before, after, detail, severity, detected_at)
      values (${held.pid}, ${CONSOLE_CYCLES[3]}, ${held.id}, ${held.id}, 'shareholders', 'BE_INVEST', 'added', null,
                ${`${holder.ent_name} [企业法人] PID ${holder.pid}`}, null, 'medium', now()),
             (${held.pid}, ${CONSOLE_CYCLES[3]}, ${held.id}, ${held.id}, 'shareholders', 'BE_INVEST', 'removed',
                ${`远方投资有限公司 [企业法人] PID ${stranger}`}, null, null, 'medium', now())`;
    const pid = encodeURIComponent(held.pid);
    const link = `<a href="/ui/companies/${encodeURIComponent(holder.pid)}">${escaped(holder.ent_name)}</a>`;
    for (const path of [
      `/ui/companies/${pid}?lang=zh`,
      `/ui/changes?pid=${pid}&lang=zh`,
      `/ui/companies/${pid}?lang=en`,
    ]) {
      const a = await get(path);
      expect(a.status, path).toBe(200);
      const text = textOf(a.body);
      expect(text, path).not.toMatch(HEX_ID);
      expect(text, path).not.toContain(' PID ');
      expect(text, path).toContain(holder.uncid);
      expect(a.body, path).toContain(link);
      // One daybook does not hold: its name and type, no code, no link.
      expect(text, path).toMatch(/远方投资有限公司(（企业法人）| \(企业法人\))/);
    }
    const zh = textOf((await get(`/ui/companies/${pid}?lang=zh`)).body);
    expect(zh).toContain(`${holder.ent_name}（企业法人，统一社会信用代码 ${holder.uncid}）`);
    const csv = (await get(`/ui/changes.csv?pid=${pid}&lang=zh`)).body;
    expect(csv).not.toMatch(HEX_ID);
    expect(csv).toContain(`统一社会信用代码 ${holder.uncid}`);
  });

  it('lands a link to a version, /ui/companies/<pid>?at=<cycle>#v<n>, on that version', async () => {
    const versions = await w.c.t.sql<{ version: number; cycle: string }[]>`
      select version, cycle::text as cycle from analytics.enterprise_history where pid = ${w.historyPid} order by version`;
    const pid = encodeURIComponent(w.historyPid);
    for (const v of versions) {
      // The latest version of that cycle is the one the link names.
      if (versions.some((o) => o.cycle === v.cycle && o.version > v.version)) continue;
      const a = await get(`/ui/companies/${pid}?at=${v.cycle}`);
      expect(a.status).toBe(200);
      expect(a.body).toContain(`<li id="v${v.version}">`);
      expect(a.body).toContain(`Version ${v.version} · Cycle ${v.cycle}</p>`);
    }
    // The change feed links each change there.
    const changes = await get(`/ui/changes?pid=${pid}`);
    const [c] = await w.c.t.sql<{ cycle: string; to_version: number }[]>`
      select cycle::text as cycle, to_version from analytics.enterprise_changes where pid = ${w.historyPid} order by change_id desc limit 1`;
    expect(changes.body).toContain(`href="/ui/companies/${pid}?at=${c?.cycle}#v${c?.to_version}"`);
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

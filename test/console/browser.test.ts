/**
 * The console in a real headless Chromium (Debian's, driven by playwright-core): an analyst signs
 * in with the token, searches a company, opens its timeline, looks at a past day's shareholders,
 * filters the changes and opens a product's trajectory. Any console error or failed request
 * fails the test; hostile names never run script; axe-core, run in each page, finds no serious
 * or critical violation. A company page reads as a registry page does, in Chinese and in English:
 * labels, not field codes; one scale for its capital; no internal id. Screenshots go to
 * test-output/console/ (and, with
 * CONSOLE_DOCS_SCREENSHOTS=1, the four docs/console.md shows to docs/console/).
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CYCLES, CONSOLE_TOKEN, type ConsoleWorld, consoleWorld } from '../support/console.ts';
import { ensureChromium, ensureDebianTool, HEADLESS_FLAGS } from '../support/debian.ts';
import { humanProblems } from '../support/human.ts';

const ROOT = join(import.meta.dirname, '../..');
const OUT = join(ROOT, 'test-output/console');
const DOCS = join(ROOT, 'docs/console');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Problems {
  errors: string[];
  failed: string[];
  dialogs: string[];
}

function watch(page: Page): Problems {
  const p: Problems = { errors: [], failed: [], dialogs: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') p.errors.push(m.text());
  });
  page.on('pageerror', (e) => p.errors.push(e.message));
  page.on('requestfailed', (r) => p.failed.push(`${r.url()}: ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) p.failed.push(`${r.url()}: ${r.status()}`);
  });
  page.on('dialog', (d) => {
    p.dialogs.push(d.message());
    void d.dismiss();
  });
  return p;
}

/** axe-core's serious and critical violations on the page, as "rule: target" lines. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP, which refuses inline scripts, does not apply.
  await page.evaluate(AXE);
  const found = (await page.evaluate(`axe
    .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })
    .then((r) => ({ passes: r.passes.length, bad: r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')) }))`)) as {
    passes: number;
    bad: string[];
  };
  // axe ran its rules here: some passed (color-contrast, labels …).
  expect(found.passes).toBeGreaterThan(10);
  return found.bad;
}

describe('the console in headless Chromium', { timeout: 600_000 }, () => {
  let w: ConsoleWorld;
  let browser: Browser;

  beforeAll(async () => {
    const executablePath = ensureChromium();
    ensureDebianTool('/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc', 'fonts-noto-cjk');
    // The simulator's comments hold emoji: without a font for them, screenshots show empty boxes.
    ensureDebianTool('/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf', 'fonts-noto-color-emoji');
    mkdirSync(OUT, { recursive: true });
    w = await consoleWorld();
    browser = await chromium.launch({
      executablePath,
      args: HEADLESS_FLAGS.filter((f) => f !== '--headless'),
      headless: true,
    });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await w?.close();
  });

  /** A page in `lang`, signed in with the token header, its failures watched. */
  const signedIn = async (lang: 'zh' | 'en') => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      locale: lang === 'zh' ? 'zh-CN' : 'en-US',
      extraHTTPHeaders: { authorization: `Bearer ${CONSOLE_TOKEN}` },
    });
    const page = await context.newPage();
    return { context, page, p: watch(page) };
  };

  /** A screenshot of the whole page, or of one part of it. */
  const shot = async (page: Page | Locator, name: string, docs = false) => {
    const file = join(OUT, `${name}.png`);
    if ('goto' in page) await page.screenshot({ path: file, fullPage: true });
    else await page.screenshot({ path: file });
    if (docs && process.env.CONSOLE_DOCS_SCREENSHOTS === '1') {
      mkdirSync(DOCS, { recursive: true });
      copyFileSync(file, join(DOCS, `${name}.png`));
    }
  };

  it('signs in, searches, reads a timeline and a past day, filters changes, opens a trajectory', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    const page = await context.newPage();
    const signIn = await page.goto(`${w.admin.url}/ui/`);
    expect(signIn?.status()).toBe(401);
    await page.getByLabel('Token').fill(CONSOLE_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.admin.url}/ui/`);
    // From here on nothing may fail: the sign-in page's 401 was the one expected.
    const p = watch(page);
    expect(await page.locator('#cycle-h').textContent()).toBe('Current cycle: 2026-11-21');
    expect(await page.locator('svg.chart').count()).toBe(1);
    await shot(page, 'overview', true);
    expect(await axeViolations(page), 'overview').toEqual([]);

    // Search a company by part of its Chinese name.
    const [company] = await w.c.t.sql<{ ent_name: string }[]>`
      select ent_name from analytics.enterprise_current where pid = ${w.historyPid}`;
    await page.getByRole('link', { name: 'Companies' }).click();
    await page
      .getByLabel('Company name, former name, unified social credit code or company ID')
      .fill((company?.ent_name ?? '').slice(0, 6));
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/ui\/companies\?q=/);
    await shot(page, 'search');
    expect(await axeViolations(page), 'search').toEqual([]);
    await page.locator(`a[href="/ui/companies/${w.historyPid}"]`).first().click();
    await page.waitForURL(`${w.admin.url}/ui/companies/${w.historyPid}`);
    expect(await page.locator('ol.timeline > li').count()).toBeGreaterThan(1);
    await shot(page, 'company-timeline', true);
    expect(await axeViolations(page), 'company').toEqual([]);

    // A past day: the first version's shareholders.
    const [first] = await w.c.t.sql<{ cycle: string; shareholders: { name: string }[] }[]>`
      select cycle::text as cycle, shareholders from analytics.enterprise_history where pid = ${w.historyPid} and version = 1`;
    await page.getByLabel(/as of the cycle of/).fill(first?.cycle ?? '');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/\?at=/);
    const asOf = page.locator('section[aria-labelledby="asof-h"]');
    expect(await asOf.textContent()).toContain(`Version 1 · Cycle ${first?.cycle}`);
    for (const s of first?.shareholders ?? []) expect(await asOf.textContent()).toContain(s.name);
    await shot(page, 'company-past-day');

    // Filter the changes.
    await page.getByRole('link', { name: 'Changes', exact: true }).first().click();
    await page.getByLabel('Severity').selectOption('high');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/severity=high/);
    const badges = await page.locator('tbody .sev').allTextContents();
    expect(badges.length).toBeGreaterThan(0);
    expect(new Set(badges)).toEqual(new Set(['high']));
    await shot(page, 'changes');
    expect(await axeViolations(page), 'changes').toEqual([]);

    await page.getByRole('link', { name: 'Watchlist' }).click();
    await shot(page, 'watchlist');
    expect(await axeViolations(page), 'watchlist').toEqual([]);

    // A product's trajectory, from the day's list.
    await page.getByRole('link', { name: 'Products' }).click();
    await page.getByLabel('Day').selectOption(w.trendingDate);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/\/ui\/products\?date=/);
    await shot(page, 'products');
    expect(await axeViolations(page), 'products').toEqual([]);
    await page.locator(`a[href="/ui/products/${w.trendingProduct}"]`).click();
    await page.waitForURL(`${w.admin.url}/ui/products/${w.trendingProduct}`);
    expect(await page.locator('svg.chart').count()).toBe(2);
    await shot(page, 'product-trajectory', true);
    expect(await axeViolations(page), 'product').toEqual([]);

    // The same pages in Chinese, by the switch on the page, and at a phone's width.
    await page.getByRole('link', { name: '中文' }).click();
    expect(await page.getAttribute('html', 'lang')).toBe('zh-CN');
    await page.getByRole('link', { name: '概览' }).click();
    expect(await page.locator('h1').textContent()).toBe('概览');
    await shot(page, 'overview-zh');
    expect(await axeViolations(page), 'overview zh').toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of [
      '/ui/',
      `/ui/companies/${w.historyPid}`,
      '/ui/changes',
      `/ui/products/${w.trendingProduct}`,
    ]) {
      await page.goto(`${w.admin.url}${path}`);
      const overflow = (await page.evaluate(
        'document.documentElement.scrollWidth - window.innerWidth',
      )) as number;
      expect(overflow, path).toBeLessThanOrEqual(1);
    }
    await shot(page, 'product-phone');

    expect(p.errors).toEqual([]);
    expect(p.failed).toEqual([]);
    expect(p.dialogs).toEqual([]);
    await context.close();
  });

  it('lands a link to a version, opened before signing in, on that version once signed in', async () => {
    const [v] = await w.c.t.sql<{ version: number; cycle: string }[]>`
      select version, cycle::text as cycle from analytics.enterprise_history
      where pid = ${w.historyPid} order by version limit 1`;
    if (!v) throw new Error('no version');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'zh-CN' });
    const page = await context.newPage();
    // As a chat message links it: the cycle's day, the version's anchor.
    const link = `${w.admin.url}/ui/companies/${w.historyPid}?at=${v.cycle}&lang=zh#v${v.version}`;
    expect((await page.goto(link))?.status()).toBe(401);
    await page.getByLabel('令牌').fill(CONSOLE_TOKEN);
    await page.getByRole('button', { name: '登录' }).click();
    await page.waitForURL(link);
    expect(await page.evaluate("document.querySelector(':target')?.id")).toBe(`v${v.version}`);
    expect(await page.locator('#asof-h').textContent()).toBe(`截至 ${v.cycle}`);
    expect(await page.locator(`#v${v.version} h3`).textContent()).toBe(`版本 ${v.version} · 周期 ${v.cycle}`);
    await context.close();
  });

  it('shows a company as an analyst reads a registry page, in Chinese and in English', async () => {
    const sql = w.c.t.sql;
    // A company whose capital changed: its record and its change rows both show an amount.
    const [cap] = await sql<{ pid: string }[]>`
      select pid from analytics.enterprise_changes where field = 'REGCAP' and pid <> ${w.hostilePid}
      order by pid limit 1`;
    const pid = cap?.pid ?? w.historyPid;
    const [rec] = await sql<{ capital_amount: string | null; reg_cap: string | null }[]>`
      select capital_amount::text as capital_amount, reg_cap::text as reg_cap
      from analytics.enterprise_current where pid = ${pid}`;
    const capitalChanges = await sql<{ before: string | null; after: string | null }[]>`
      select before, after from analytics.enterprise_changes where pid = ${pid} and field = 'REGCAP'`;
    // What the registry wrote, shown as written: names, codes, addresses, scopes, people.
    const [registry] = await sql<{ texts: string[] }[]>`
      select array_agg(distinct t) filter (where t is not null and t <> '') as texts from (
        select unnest(array[ent_name, history_name, uncid, reg_no, legal_person, ent_type, ent_status, reg_org,
          op_loc, op_scope, industry_big]) as t
        from analytics.enterprise_history where pid = ${pid}
        union all
        select jsonb_array_elements(persons || shareholders || clearing_members) ->> k
        from analytics.enterprise_history, unnest(array['name', 'position', 'type']) k where pid = ${pid}
        union all select unnest(array[before, after]) from analytics.enterprise_changes
        where pid = ${pid} and field not in ('REGCAP', 'BE_INVEST')
        union all select keyword from console.watchlist where pid = ${pid}
        union all select uncid from enterprise_versions
      ) x`;
    const quoted = [...(registry?.texts ?? [])].sort((a, b) => b.length - a.length);
    const raw = [
      rec?.capital_amount,
      rec?.reg_cap,
      ...capitalChanges.flatMap((c) => [c.before, c.after]),
    ].filter((x): x is string => !!x);
    expect(raw.length).toBeGreaterThan(1);

    for (const lang of ['zh', 'en'] as const) {
      const { context, page, p } = await signedIn(lang);
      await page.goto(`${w.admin.url}/ui/companies/${pid}?lang=${lang}`);
      const text = (await page.evaluate('document.body.innerText')) as string;
      expect(humanProblems(text, { lang, quoted }), lang).toEqual([]);
      const labels =
        lang === 'zh'
          ? ['统一社会信用代码', '注册资本']
          : ['Unified social credit code', 'Registered capital'];
      const record = await page.locator('table.record tbody th').allTextContents();
      for (const l of labels) expect(record, lang).toContain(l);
      // No field code, no separate currency row, no registry figure without its scale.
      expect(text, lang).not.toMatch(/\b(ENTNAME|UNCID|REGNO|REGCAP|REGCAPCUR|presence|currency)\b/);
      expect(
        record.filter((l) => /币种|currency/i.test(l)),
        lang,
      ).toEqual([]);
      // Every label in the page's language: no English header in Chinese, no Chinese one in English.
      const headers = await page.locator('th, h2, h3, dt, label, caption').allTextContents();
      const foreign = lang === 'zh' ? /[A-Za-z]/ : /[\u3400-\u9fff]/;
      expect(
        headers.filter((h) => foreign.test(h)),
        lang,
      ).toEqual([]);
      for (const r of raw)
        expect(text, `${lang}: ${r}`).not.toMatch(new RegExp(`(?<![\\d,.])${r}(?![\\d,.])`));
      // Every capital amount on the page, in the record and in its change rows, in one scale.
      const amounts = (await page.evaluate(`(() => {
        const out = [];
        for (const tr of document.querySelectorAll('table.record tbody tr'))
          if (tr.querySelector('th').textContent === ${JSON.stringify(labels[1])}) out.push(tr.querySelector('td').textContent);
        for (const tr of document.querySelectorAll('ol.timeline table tbody tr')) {
          const td = tr.querySelectorAll('td');
          if (td[1].textContent === ${JSON.stringify(labels[1])}) out.push(td[2].textContent, td[3].textContent);
        }
        return out.filter((x) => x !== '');
      })()`)) as string[];
      expect(amounts.length, lang).toBe(1 + 2 * capitalChanges.length);
      const scale = lang === 'zh' ? /^[\d,]+(\.\d+)? 万[^\d\s（(]+$/ : /^[A-Z]{3} [\d,]+(\.\d+)? million$/;
      for (const a of amounts) expect(a, lang).toMatch(scale);
      if (lang === 'zh')
        for (const a of amounts) expect(a).toMatch(/万元人民币$|万(美元|港元|欧元|日元|英镑)$/);
      // "Valid from" is the version's cycle day; when daybook saw it comes second, in Beijing time.
      const [v] = await sql<{ version: number; cycle: string }[]>`
        select version, cycle::text as cycle from analytics.enterprise_history where pid = ${pid} order by version desc limit 1`;
      const meta = await page.locator(`#v${v?.version} p.meta`).textContent();
      expect(meta, lang).toMatch(
        lang === 'zh'
          ? new RegExp(`^生效自 ${v?.cycle} · 观察于 \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}（北京时间）`)
          : new RegExp(
              `^Valid from ${v?.cycle} · Observed at \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} \\(Beijing time\\)`,
            ),
      );
      await shot(page, `company-${lang}`);
      expect(await axeViolations(page), `company ${lang}`).toEqual([]);
      expect(p.errors).toEqual([]);
      expect(p.failed).toEqual([]);
      await context.close();
    }
  });

  it('shows a company’s related parties: its shareholder, what lies two links away, and their graph, in both languages', async () => {
    const [a, b, c] = w.chain;
    if (!a || !b || !c) throw new Error('no chain');
    for (const lang of ['zh', 'en'] as const) {
      const { context, page, p } = await signedIn(lang);
      await page.goto(`${w.admin.url}/ui/companies/${a.pid}?lang=${lang}`);
      const section = page.locator('section[aria-labelledby="rel-h"]');
      expect(await section.locator('h2').textContent(), lang).toMatch(
        lang === 'zh' ? /^关联关系/ : /^Related parties/,
      );
      // B holds A: a link to its page in the shareholdings, with its relation in words.
      const row = section
        .locator('table tr', { has: page.locator(`a[href="/ui/companies/${b.pid}"]`) })
        .first();
      expect(await row.textContent(), lang).toContain(lang === 'zh' ? '股东' : 'Shareholder');
      // C holds B, and was deregistered in the third cycle: two links away, through B, status in words.
      const far = section
        .locator('table tr', { has: page.locator(`a[href="/ui/companies/${c.pid}"]`) })
        .first();
      const farText = (await far.textContent()) ?? '';
      expect(farText, lang).toContain('注销');
      expect(farText, lang).toContain(b.name);
      // The graph: drawn on the server, an image with a title, every company named with its status.
      const graph = section.locator('svg.chart[role="img"]');
      expect(await graph.count(), lang).toBe(1);
      expect(await graph.locator('title').textContent(), lang).toMatch(lang === 'zh' ? /关联/ : /linked/);
      const desc = (await graph.locator('desc').textContent()) ?? '';
      expect(desc, lang).toContain(`${c.name} (注销)`);
      expect(await graph.locator('g.node.bad').count(), lang).toBeGreaterThan(0);
      expect(await page.evaluate('document.scripts.length'), lang).toBe(0);
      // No person is merged: the same-name table says so.
      expect(await section.textContent(), lang).toContain(
        lang === 'zh' ? '同名者可能并非同一人' : 'may belong to a different person',
      );
      await shot(section, `related-${lang}`, lang === 'zh');
      expect(await axeViolations(page), `related ${lang}`).toEqual([]);

      // The day before C was deregistered: the links of that day, C not yet 注销.
      await page.goto(`${w.admin.url}/ui/companies/${a.pid}?lang=${lang}&at=${CONSOLE_CYCLES[1]}`);
      const before = page.locator('section[aria-labelledby="rel-h"]');
      expect(await before.locator('h2').textContent(), lang).toContain(CONSOLE_CYCLES[1]);
      const earlier = before
        .locator('table tr', { has: page.locator(`a[href="/ui/companies/${c.pid}"]`) })
        .first();
      expect(await earlier.textContent(), lang).not.toContain('注销');
      expect(p.errors).toEqual([]);
      expect(p.failed).toEqual([]);
      await context.close();
    }
  });

  it('shows hostile names as text: no dialog opens and no script sets a global', async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      extraHTTPHeaders: { authorization: `Bearer ${CONSOLE_TOKEN}` },
    });
    const page = await context.newPage();
    const p = watch(page);
    const pages = [
      `/ui/companies/${w.hostilePid}`,
      `/ui/companies?q=${encodeURIComponent(w.hostilePid)}`,
      `/ui/changes?pid=${w.hostilePid}`,
      `/ui/products/${w.hostileProduct}`,
    ];
    for (const path of pages) {
      const res = await page.goto(`${w.admin.url}${path}`);
      expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
      expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
      expect(await page.locator('img').count(), path).toBe(0);
      expect(await page.textContent('main')).toContain('<script>window.__pwned=1;alert(1)</script>');
    }
    // The javascript: link is shown, not linked; clicking around runs nothing.
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    await shot(page, 'hostile-product');
    expect(p.dialogs).toEqual([]);
    expect(p.errors).toEqual([]);
    expect(p.failed).toEqual([]);
    await context.close();
  });
});

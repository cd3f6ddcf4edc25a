/**
 * The console in a real headless Chromium (Debian's, driven by playwright-core): an analyst signs
 * in with the token, searches a company, opens its timeline, looks at a past day's shareholders,
 * filters the changes and opens a product's trajectory. Any console error or failed request
 * fails the test; hostile names never run script; axe-core, run in each page, finds no serious
 * or critical violation. Screenshots go to test-output/console/ (and, with
 * CONSOLE_DOCS_SCREENSHOTS=1, the README's three to docs/console/).
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_TOKEN, type ConsoleWorld, consoleWorld } from '../support/console.ts';
import { ensureChromium, ensureDebianTool, HEADLESS_FLAGS } from '../support/debian.ts';

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

  const shot = async (page: Page, name: string, docs = false) => {
    const file = join(OUT, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
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
      .getByLabel('Name, former name, credit code (USCC) or PID')
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

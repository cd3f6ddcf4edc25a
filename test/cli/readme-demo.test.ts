/**
 * The example queries of the README and docs/ that name a date return rows on the demo database
 * (the README's table of the analytics views moved to docs/data-dictionary.md, its examples with
 * it). The demo runs on a fixed simulated clock (its first cycle is 2026-11-18, whatever the
 * date), so the dates it produces never drift; this runs the real `daybook demo` on its embedded
 * database, as the README says (about 30 s), then each example through `daybook sql`, as a reader
 * would paste it. The same run checks the demo's output the README's quick start shows (its span,
 * which `npm run readme:figures` writes).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SPAN, demoSpans, readSpans } from '../../scripts/readme-figures.ts';
import { runDaybook } from '../support/cli.ts';
import { startServe } from '../support/console.ts';

const ROOT = join(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** The README and every page of docs/. */
const PAGES = [
  README,
  ...(readdirSync(join(ROOT, 'docs'), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.md'))
    .map((f) => readFileSync(join(ROOT, 'docs', f), 'utf8')),
].join('\n');

/** The inline SQL examples on the analytics views that name a date ('YYYY-MM-DD'). */
function datedAnalyticsExamples(markdown: string): string[] {
  return [...markdown.matchAll(/`(select\b[^`]*)`/gi)]
    .map((m) => m[1] as string)
    .filter((q) => /\banalytics\./.test(q) && /'\d{4}-\d{2}-\d{2}'/.test(q));
}

describe('the dated examples of the README and docs/ on the demo database', { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'daybook-readme-'));
  let demo: Awaited<ReturnType<typeof runDaybook>>;
  beforeAll(async () => {
    demo = await runDaybook(['demo'], { DAYBOOK_DATA_DIR: dir, LOG_LEVEL: 'warn' }, dir, 240_000);
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the demo runs on the fixed clock the README shows', () => {
    expect(demo.code, demo.stderr).toBe(0);
    const shown = /^cycle \d{4}-\d{2}-\d{2} \(simulated clock [^)]+\): .*$/m.exec(README)?.[0];
    expect(shown, 'the README shows the first cycle of the demo').toBeDefined();
    // The simulated clock, the cycle and the product dates are the README's, to the character.
    expect(demo.stdout).toContain(shown?.replace(/; enterprises .*$/, ''));
  });

  it('shows the latest changes in words, as daybook changes does: no field code, each value in its unit', () => {
    expect(demo.code, demo.stderr).toBe(0);
    const changes = /^latest changes .*\n((?: {2}.*\n|\n)+)/m.exec(demo.stdout)?.[1] ?? '';
    expect(changes, demo.stdout).toMatch(/\d+ changes? at \d+ compan(y|ies), newest first:/);
    expect(changes).toMatch(/\(severity: (low|medium|high)\)/);
    for (const code of ['APPRDATE', 'LEGALPERSON', 'ENTNAME', 'PERSONS', 'BE_INVEST', 'ENTSTATUS', 'REGCAP'])
      expect(changes, code).not.toContain(code);
  });

  it('prints the first cycle and the summary the README shows (npm run readme:figures writes them)', () => {
    expect(demo.code, demo.stderr).toBe(0);
    expect(readSpans(README).get(DEMO_SPAN)).toBe(demoSpans(demo.stdout)[DEMO_SPAN]);
  });

  it('ends by printing the command that opens the console on its data, which serves it', async () => {
    expect(demo.code, demo.stderr).toBe(0);
    const printed =
      /Open the console on this data[^\n]*\/ui\/[^\n]*\n {2}DAYBOOK_DATA_DIR=(\S+) npx daybook serve\n$/.exec(
        demo.stdout,
      );
    expect(printed, demo.stdout).not.toBeNull();
    const serve = await startServe(dir, { DAYBOOK_DATA_DIR: printed?.[1] as string });
    try {
      const overview = await fetch(`${serve.url}/ui/`);
      expect(overview.status).toBe(200);
      expect(overview.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await overview.text()).toMatch(/Current cycle: \d{4}-\d{2}-\d{2}/);
      const search = await (await fetch(`${serve.url}/ui/companies?q=${encodeURIComponent('公司')}`)).text();
      const pid = /href="\/ui\/companies\/([^"]+)"/.exec(search)?.[1];
      expect(pid, search).toBeDefined();
      const company = await fetch(`${serve.url}/ui/companies/${pid}`);
      expect(company.status).toBe(200);
      expect(await company.text()).toContain('Change record');
      for (const path of ['/ui/changes', '/ui/watchlist', '/ui/products'])
        expect((await fetch(`${serve.url}${path}`)).status, path).toBe(200);
    } finally {
      await serve.stop();
    }
  });

  const examples = datedAnalyticsExamples(PAGES);
  it('there are dated examples to check', () => {
    expect(examples.length).toBeGreaterThan(0);
  });

  for (const query of examples) {
    it(`returns rows: ${query}`, async () => {
      const r = await runDaybook(
        ['sql', query, '--json'],
        { DAYBOOK_DATA_DIR: join(dir, 'demo'), LOG_LEVEL: 'warn' },
        dir,
      );
      expect(r.code, r.stderr).toBe(0);
      const rows = JSON.parse(r.stdout) as unknown[];
      expect(rows.length, `${query} returned no rows on the demo database`).toBeGreaterThan(0);
    });
  }
});

/**
 * The README's "Your first real cycle", run as written: its fenced commands, in order, against a
 * database of the test's own (empty: `daybook migrate` makes it), the local Redis under a prefix
 * of its own, the simulator and a local DingTalk receiver (test/delivery/support/vendors.ts).
 *
 * What the test changes, as a reader would with their own values: `.env` gets the simulator, the
 * database and Redis for the variables step 1 names (and a Redis prefix and an enterprise cron
 * at 03:00, so that the cycle the scheduler catches up is the one `status` shows at any time of
 * day); the watchlist holds companies of the simulator's world; the DingTalk host becomes the
 * receiver's, `<token>` and `SEC…` the test's, and `--allow-private` lets daybook reach it on
 * loopback; the export's paths are the test folder's. `daybook doctor` is not run (its own
 * tests do); `docker compose` commands are checked against the command tree only.
 *
 * Every command exits 0; under each, the output the README shows is what it printed (numbers,
 * dates and paths aside, `…` anything); the scheduler and the worker run in the background as
 * `&` leaves them, buy the watchlist, and the receiver gets the sample message and the cycle's
 * digest; DuckDB reads the export into the same companies as analytics.enterprise_current.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Command } from 'commander';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.ts';
import { ENV_SCHEMA } from '../../src/config/config.ts';
import { keyPattern, redisConnection } from '../../src/runtime/queues.ts';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { type VendorReceiver, vendorReceiver } from '../delivery/support/vendors.ts';
import { waitFor } from '../faults/support/processes.ts';
import { BIN, runDaybook } from '../support/cli.ts';
import { adminUrl, databaseUrl } from '../support/pg-url.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from '../support/sim.ts';

const ROOT = join(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SECTION = 'Your first real cycle';
const TOKEN = 'first-cycle-token-2718';
const SIGNING = 'SECfirst-cycle-signing-1414';
const run = promisify(execFile);

// ---- the section, as blocks ---------------------------------------------------------------------

interface Block {
  /** The fence's info string: sh, text … */
  lang: string;
  lines: string[];
  /** The heading it is under. */
  step: string;
}

/** The text of the `## heading` section (up to the next `## `). */
function sectionOf(md: string, heading: string): string {
  const start = md.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README.md has no section "${heading}"`);
  const end = md.indexOf('\n## ', start + 1);
  return md.slice(start, end < 0 ? undefined : end);
}

/** The fenced blocks of a section, in order, with the `###` step each is under. */
function blocksOf(section: string): Block[] {
  const out: Block[] = [];
  let step = '';
  let current: Block | null = null;
  for (const line of section.split('\n')) {
    if (current === null && line.startsWith('### ')) step = line.slice(4).trim();
    const fence = /^```(\w*)\s*$/.exec(line);
    if (fence && current === null) current = { lang: fence[1] ?? '', lines: [], step };
    else if (fence && current !== null) {
      out.push(current);
      current = null;
    } else current?.lines.push(line);
  }
  return out;
}

/** A command line as words, a trailing `&` kept as a word, a `# comment` dropped. */
function words(line: string): string[] {
  const out: string[] = [];
  const re = /'([^']*)'|"((?:\\.|[^"\\])*)"|([^\s'"#]+)|(\s+)|(#.*$)/gy;
  let word: string | null = null;
  for (let m = re.exec(line); m && m.index < line.length; m = re.exec(line)) {
    if (m[4] !== undefined || m[5] !== undefined) {
      if (word !== null) out.push(word);
      word = null;
      if (m[5] !== undefined) break;
    } else word = (word ?? '') + (m[1] ?? m[2] ?? m[3] ?? '');
  }
  if (word !== null) out.push(word);
  return out;
}

/** An output line as a pattern: numbers match any number, `…` anything, the rest as written. */
function pattern(line: string): RegExp {
  const parts = line
    .trim()
    .split('…')
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\d[\d,.]*\d|\d/g, '[\\d,.]+'));
  return new RegExp(`^${parts.join('.*')}$`);
}

/** The output lines shown that no line printed matches (by `pattern`). */
function unmatched(shown: string[], printed: string): string[] {
  const lines = printed.split('\n').map((l) => l.trim());
  return shown.filter((s) => s.trim() !== '').filter((s) => !lines.some((l) => pattern(s).test(l)));
}

/** The command at `path` words of the program, and the option words it was given that it lacks. */
function unknownOfCommand(program: Command, args: string[]): string[] {
  let c: Command | undefined = program;
  let i = 0;
  for (; i < args.length; i++) {
    const sub: Command | undefined = c?.commands.find((x) => x.name() === args[i]);
    if (!sub) break;
    c = sub;
  }
  if (c === program) return [`no command ${args[0]}`];
  return args
    .slice(i)
    .filter((a) => a.startsWith('--'))
    .filter((a) => !c?.options.some((o) => o.long === a.split('=')[0]));
}

// ---- the world the commands run in ----------------------------------------------------------------

interface Background {
  child: ChildProcess;
  lines: string[];
  exited: Promise<void>;
}

/** `daybook <args>` left running, as `&` leaves it, in `cwd`; resolves once it logs `ready`. */
async function background(args: string[], cwd: string, ready: string): Promise<Background> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', CI: 'true' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: string[] = [];
  let all = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      all += chunk;
      lines.push(...chunk.split('\n'));
      if (all.includes(ready)) resolve();
    });
    void exited.then(() =>
      reject(new Error(`daybook ${args.join(' ')} exited:\n${lines.slice(-10).join('\n')}`)),
    );
  });
  return { child, lines, exited };
}

describe("the README's first real cycle, run as written", { timeout: 300_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'daybook-first-cycle-'));
  const dbName = `daybook_t_${randomBytes(5).toString('hex')}`;
  const prefix = `first-${randomBytes(4).toString('hex')}`;
  const section = sectionOf(README, SECTION);
  const blocks = blocksOf(section);
  let sim: RunningSimulator;
  let dingtalk: VendorReceiver;
  let sql: postgres.Sql;
  const running: Background[] = [];

  beforeAll(async () => {
    const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`create database "${dbName}"`);
    } finally {
      await admin.end();
    }
    sql = postgres(databaseUrl(dbName), { max: 2, onnotice: () => {} });
    sim = await startTestSim({ enterprises: 300, rateLimits: UNTHROTTLED, startAt: new Date() });
    dingtalk = await vendorReceiver('dingtalk', { secret: SIGNING, token: TOKEN });
  });

  afterAll(async () => {
    for (const b of running) {
      b.child.kill('SIGTERM');
      await b.exited;
    }
    const redis = redisConnection('redis://127.0.0.1:6379');
    const keys = await redis.keys(keyPattern(prefix)).catch(() => [] as string[]);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await sql?.end();
    const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).finally(() => admin.end());
    await dingtalk?.close();
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has its steps, each with commands', () => {
    expect(blocks.filter((b) => b.lang === 'sh').length).toBeGreaterThanOrEqual(7);
    expect(new Set(blocks.map((b) => b.step)).size).toBeGreaterThanOrEqual(6);
  });

  it('names in its configuration step only variables daybook reads, each one .env.example holds', () => {
    const step = section.slice(section.indexOf('### 1.'), section.indexOf('### 2.'));
    const named = [...step.matchAll(/`([A-Z][A-Z0-9_]+)(?:=[^`]*)?`/g)].map((m) => m[1] as string);
    expect(named).toEqual(
      expect.arrayContaining(['DAYBOOK_API_BASE_URL', 'DAYBOOK_API_KEY', 'DATABASE_URL']),
    );
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    for (const v of named) {
      expect(Object.keys(ENV_SCHEMA.shape), v).toContain(v);
      expect(example, `${v} in .env.example`).toMatch(new RegExp(`^#? ?${v}=`, 'm'));
    }
  });

  it('gives docker compose commands the command tree knows', () => {
    const program = buildProgram();
    const lines = [
      ...blocks.flatMap((b) => b.lines),
      ...[...section.matchAll(/`(docker compose [^`]+)`/g)].map((m) => m[1] as string),
    ].filter((l) => l.startsWith('docker compose run --rm cli '));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const args = words(line).slice(5);
      if (args[0]?.startsWith('…') || args.length === 0) continue; // "docker compose run --rm cli …"
      expect(unknownOfCommand(program, args), line).toEqual([]);
    }
  });

  it('runs every command of the section, in order, and each prints what the README shows', async () => {
    const world = sim.sim.world().all();
    const picks = world.slice(0, 5);
    const aim = (w: string): string => {
      if (w === 'SEC…') return SIGNING;
      if (!/^https:\/\/oapi\.dingtalk\.com\//.test(w)) return w;
      const u = new URL(w.replace('<token>', TOKEN));
      return `${new URL(dingtalk.url).origin}${u.pathname}${u.search}`;
    };
    /** The README's paths, for `npm run`, which runs in the repository's folder: the test's folder. */
    const paths = (w: string) => (w.startsWith('.daybook/') ? join(dir, w) : w);
    let afterBackground = false;
    let dryRunLeftEmpty = false;
    const commands: string[] = [];

    for (const [i, block] of blocks.entries()) {
      if (block.lang !== 'sh') continue;
      // What the block's commands printed, one after the other.
      let out = '';
      for (const line of block.lines) {
        const w = words(line);
        if (w.length === 0) continue;
        commands.push(line);
        if (w[0] === 'cp' && w[1] === '.env.example' && w[2] === '.env') {
          // As a reader does: copy it, then set what step 1 says, with this test's values.
          copyFileSync(join(ROOT, '.env.example'), join(dir, '.env'));
          const set: Record<string, string> = {
            DAYBOOK_API_BASE_URL: sim.url,
            DAYBOOK_API_KEY: TEST_KEY,
            DATABASE_URL: databaseUrl(dbName),
            REDIS_URL: 'redis://127.0.0.1:6379',
            // The test's own: a Redis prefix, and a cron whose catch-up is the cycle of the clock.
            DAYBOOK_REDIS_PREFIX: prefix,
            DAYBOOK_ENTERPRISE_CRON: '0 3 * * *',
          };
          const env = readFileSync(join(dir, '.env'), 'utf8')
            .split('\n')
            .filter((l) => !Object.keys(set).some((k) => l.startsWith(`${k}=`)));
          writeFileSync(
            join(dir, '.env'),
            [...env, ...Object.entries(set).map(([k, v]) => `${k}=${v}`)].join('\n'),
          );
          continue;
        }
        if (w[0] === 'docker') continue; // checked above
        if (w[0] === 'npx' && w[1] === 'daybook' && w[2] === 'doctor') continue; // not tested here
        if (w[0] === 'npx' && w[1] === 'daybook') {
          let args = w.slice(2).map(aim);
          if (args.at(-1) === '&') {
            const name = args[0] as string;
            running.push(await background(args.slice(0, -1), dir, `"msg":"${name} started"`));
            afterBackground = true;
            continue;
          }
          if (args[0] === 'subscribe' && args[1] === 'add') args = [...args, '--allow-private'];
          if (args[0] === 'watch' && args[1] === 'import') {
            const header = 'name,priority,uscc';
            const rows = picks.map((e, k) => (k === 0 ? `${e.ENTNAME},10,${e.UNCID}` : `${e.ENTNAME},,`));
            writeFileSync(join(dir, args[2] as string), `${[header, ...rows].join('\n')}\n`);
          }
          if (afterBackground) {
            // "A minute later": the scheduler's plan and the workers' purchases are done.
            await waitFor(
              'the cycle the scheduler planned is complete',
              async () => (await sql`select 1 from events where type = 'cycle.completed'`).length > 0,
              120_000,
              250,
            );
            afterBackground = false;
          }
          const r = await runDaybook(args, {}, dir, 120_000);
          expect(r.code, `${line}\n${r.stdout}\n${r.stderr}`).toBe(0);
          if (args.includes('--dry-run'))
            dryRunLeftEmpty = (await sql`select count(*)::int as n from watchlist`)[0]?.n === 0;
          out += r.stdout;
          continue;
        }
        if (w[0] === 'npm' && w[1] === 'run') {
          const r = await run('npm', w.slice(1).map(paths), { cwd: ROOT, timeout: 120_000 });
          out += r.stdout;
          continue;
        }
        throw new Error(`a command the test does not know how to run: ${line}`);
      }
      // The output the README shows under the commands: what they printed.
      const next = blocks[i + 1];
      if (next && next.lang === 'text') {
        // The README's paths and DingTalk's host, as the test gave them.
        const shown = next.lines.map((l) =>
          l
            .replace(/(^|\s)(\.daybook\/\S+)/g, (_, s, p) => `${s}${join(dir, p)}`)
            .replaceAll('https://oapi.dingtalk.com', new URL(dingtalk.url).origin),
        );
        expect(unmatched(shown, out), `${block.lines.join('\n')}\nprinted:\n${out}`).toEqual([]);
      }
    }

    // Every kind of step ran.
    for (const expected of [
      'npx daybook migrate',
      'npx daybook watch import watchlist.csv',
      'npx daybook subscribe test 1',
      'npx daybook scheduler &',
      'npx daybook worker &',
      'npx daybook status',
      'npx daybook export --to .daybook/export',
    ])
      expect(commands, expected).toContain(expected);
    expect(commands.some((c) => c.startsWith('npx daybook subscribe add '))).toBe(true);
    expect(commands.some((c) => c.startsWith('npm run duckdb-load -- '))).toBe(true);
    expect(dryRunLeftEmpty, 'the dry run writes nothing').toBe(true);

    // The watchlist was bought: one current version per company.
    const current = await sql<{ pid: string; ent_name: string }[]>`
      select pid, ent_name from analytics.enterprise_current order by pid`;
    expect(current.map((r) => r.ent_name).sort()).toEqual(picks.map((e) => e.ENTNAME).sort());

    // DingTalk got the sample message, then the cycle's digest, signed (the receiver checks it).
    const digest = /daybook 每日摘要 · 周期 \d{4}-\d{2}-\d{2}/;
    await waitFor(
      'the digest reached DingTalk',
      async () => dingtalk.accepted().some((g) => digest.test(g.text)),
      60_000,
    );
    const got = dingtalk.accepted();
    expect(got[0]?.text).toContain('示例科技有限公司');
    expect(dingtalk.got.filter((g) => !g.accepted)).toEqual([]);
    // The README quotes the sample and the digest as they arrive.
    const quoted = [...section.matchAll(/`(\[高\] 示例[^`]+|daybook 每日摘要[^`]+)`/g)].map(
      (m) => m[1] as string,
    );
    expect(quoted.length).toBe(2);
    for (const q of quoted)
      expect(got.some((g) => pattern(q).test(g.text.split('\n')[0]?.trim() ?? ''))).toBe(true);

    // DuckDB reads the export: the same companies as the analytics view.
    const instance = await DuckDBInstance.create(join(dir, '.daybook/warehouse.duckdb'));
    const duck = await instance.connect();
    try {
      const rows = (
        await duck.runAndReadAll('select pid, ent_name from enterprise_current order by pid')
      ).getRowObjectsJson();
      expect(rows).toEqual(current.map((r) => ({ pid: r.pid, ent_name: r.ent_name })));
    } finally {
      duck.closeSync();
      instance.closeSync();
    }
  });
});

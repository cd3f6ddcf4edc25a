/**
 * A console to test: real cycles from the simulator (enterprises with changes, product lists),
 * hostile text written into some of what upstream sent, and the admin server with its console on
 * port 0, behind a token.
 */
import { spawn } from 'node:child_process';
import { scheduledPulls } from '../../jobs/products.ts';
import { type ConsoleReader, openConsoleReader } from '../../src/console/reader.ts';
import { type RunningAdmin, startAdminServer } from '../../src/runtime/admin.ts';
import { pacificDate } from '../../src/time/cycles.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { BIN } from './cli.ts';
import { type CliSim, cliAgainstSim } from './cli-sim.ts';
import { runCyclesInline, watchChanging } from './inline.ts';
import { UNTHROTTLED } from './sim.ts';

export const CONSOLE_CYCLES = ['2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21'] as const;

export const CONSOLE_TOKEN = 'console-test-token-7d1e';

/**
 * Markup, an event handler, a script link, bidi overrides and an ANSI escape: each would act if
 * a page let it through. The payloads set `window.__pwned` or open a dialog.
 */
export const HOSTILE =
  '<script>window.__pwned=1;alert(1)</script><img src=x onerror="window.__pwned=2;alert(2)">\u202Eevil\u202C \u001b[31mred\u001b[0m';
export const HOSTILE_URL = 'javascript:window.__pwned=3;alert(3)';

export interface ConsoleWorld {
  c: CliSim;
  reader: ConsoleReader;
  admin: RunningAdmin;
  /** A company whose name, shareholders and changes hold HOSTILE. */
  hostilePid: string;
  /** A company with more than one version whose shareholders differ between them. */
  historyPid: string;
  /** A product whose name, tagline, url and a comment are hostile. */
  hostileProduct: string;
  /** The product listed in the most pulls, and the latest day it was listed. */
  trendingProduct: string;
  trendingDate: string;
  /**
   * A shareholding chain, all watched: A held by B held by C (the simulator's `/_sim/chains`);
   * C is deregistered (注销) in the refresh of the third cycle.
   */
  chain: { pid: string; name: string }[];
  close(): Promise<void>;
}

async function makeHostile(c: CliSim, spare: readonly string[]): Promise<{ pid: string; product: string }> {
  const sql = c.t.sql;
  const [e] = await sql<{ pid: string }[]>`
    select v.pid from enterprise_versions v
    where exists (select 1 from enterprise_shareholders s where s.version_id = v.id)
      and v.pid <> all(${spare as string[]}::text[])
    order by v.pid limit 1`;
  if (!e) throw new Error('the cycles wrote no enterprise with shareholders');
  await sql`update enterprise_versions set ent_name = ${`${HOSTILE} 有限公司`} where pid = ${e.pid}`;
  await sql`update enterprise_shareholders set name = ${HOSTILE}
    where version_id in (select id from enterprise_versions where pid = ${e.pid}) and ordinal = 0`;
  const [v] = await sql<{ id: number; prev: number }[]>`
    select id::float8 as id, (select id::float8 from enterprise_versions p where p.pid = v.pid order by version limit 1) as prev
    from enterprise_versions v where pid = ${e.pid} and is_current`;
  if (v)
    await sql`insert into enterprise_changes (pid, cycle, version_id, previous_version_id, category, field, kind, before, after, detail, severity, detected_at)
      values (${e.pid}, ${CONSOLE_CYCLES[3]}, ${v.id}, ${v.prev}, 'name', 'ENTNAME', 'modified', ${HOSTILE}, ${HOSTILE_URL}, null, 'high', now())`;
  const [p] = await sql<{ product_id: string }[]>`
    select product_id from products order by product_id limit 1`;
  if (!p) throw new Error('the cycles pulled no product');
  await sql`update product_versions set name = ${HOSTILE}, tagline = ${HOSTILE}, url = ${HOSTILE_URL}
    where product_id = ${p.product_id}`;
  await sql`update product_comments set body = ${HOSTILE} where product_id = ${p.product_id}`;
  return { pid: e.pid, product: p.product_id };
}

/** Real cycles, hostile text, and the admin server with its console (token CONSOLE_TOKEN). */
export async function consoleWorld(): Promise<ConsoleWorld> {
  const c = await cliAgainstSim({ enterprises: 300, rateLimits: UNTHROTTLED });
  await watchChanging(c.t, c.sim, CONSOLE_CYCLES, 8);
  const world = c.sim.sim.world();
  world.at(CONSOLE_CYCLES[0]);
  const chain = world.chains(3, 1)[0];
  if (!chain) throw new Error('the simulated world has no shareholding chain of three');
  world.schedule((chain[2] as { pid: string }).pid, CONSOLE_CYCLES[2], '注销');
  await c.t
    .sql`insert into watchlist ${c.t.sql(chain.map((l) => ({ keyword: l.name, keyword_key: keywordKey(l.name) })))}
    on conflict (keyword_key) do nothing`;
  await runCyclesInline(c.t, c.sim, CONSOLE_CYCLES, (now) => scheduledPulls(pacificDate(now), 3));
  const hostile = await makeHostile(
    c,
    chain.map((l) => l.pid),
  );
  const [h] = await c.t.sql<{ pid: string }[]>`
    select a.pid from analytics.enterprise_history a join analytics.enterprise_history b on b.pid = a.pid and b.version = a.version + 1
    where a.shareholders <> b.shareholders and a.pid <> ${hostile.pid} and a.cycle < b.cycle
    order by a.pid limit 1`;
  const [multi] = await c.t.sql<{ pid: string }[]>`
    select pid from enterprise_versions where pid <> ${hostile.pid} group by pid having count(*) > 1 order by pid limit 1`;
  const [tp] = await c.t.sql<{ product_id: string; list_date: string }[]>`
    select product_id, max(list_date)::text as list_date from trending_snapshots
    where product_id <> ${hostile.product}
    group by product_id order by count(*) desc, product_id limit 1`;
  if (!tp) throw new Error('the cycles pulled no list');
  const reader = await openConsoleReader(c.t.sql, c.t.url, false);
  const admin = await startAdminServer({
    sql: c.t.sql,
    redis: null,
    queues: null,
    console: reader,
    host: '127.0.0.1',
    port: 0,
    token: CONSOLE_TOKEN,
  });
  return {
    c,
    reader,
    admin,
    hostilePid: hostile.pid,
    historyPid: h?.pid ?? multi?.pid ?? hostile.pid,
    hostileProduct: hostile.product,
    trendingProduct: tp.product_id,
    trendingDate: tp.list_date,
    chain: chain.map((l) => ({ pid: l.pid, name: l.name })),
    async close() {
      await admin.close();
      await reader.close();
      await c.close();
    },
  };
}

/** `daybook serve` as a child process on port 0: its console's address, and its stop. */
export interface ServeProcess {
  url: string;
  stop(): Promise<void>;
}

/** Starts `daybook serve --port 0` in `cwd` with `env` and waits for the address it prints. */
export async function startServe(cwd: string, env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      CI: 'true',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /console on (http:\/\/\S+)\/ui\//.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`daybook serve ended (${code}): ${err}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

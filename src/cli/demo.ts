/**
 * `daybook demo` (npm run demo): first contact on a machine with nothing but Node. The embedded
 * database, the simulator in-process, a watchlist of about 20 enterprises, and three consecutive
 * simulated cycles (the simulator's clock moved across 03:00 Asia/Shanghai each time) run through
 * the same job processors as production; then a summary and example SQL results.
 */
import { rmSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type { Command } from 'commander';
import type postgres from 'postgres';
import type { Config } from '../config/config.ts';
import { completePackages } from '../export/package.ts';
import { changesBySeverity, historyTotals, topOfLatestList } from '../history/counts.ts';
import type { Logger } from '../log/log.ts';
import { creditsBilled } from '../purchase/credits.ts';
import { DatabaseRateLimiter, perMinute } from '../purchase/limiter.ts';
import { runInline } from '../runtime/inline.ts';
import { defaultSimOptions, SANDBOX_KEY } from '../sim/options.ts';
import type { RunningSimulator } from '../sim/server.ts';
import { addDays, cycleStart } from '../time/cycles.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { addNewWatches, learnedRates } from '../watch/store.ts';
import { command } from './about.ts';
import { loggerFor } from './assemble.ts';
import { changeLogText, changeRows } from './changes.ts';
import { configOrExit, openStore } from './context.ts';
import { formatTable } from './terminal.ts';
import { intArg } from './usage.ts';

const FIRST_CYCLE = '2026-11-18';
const DEMO_RATE = 600;

const say = (line: string) => process.stdout.write(`${line}\n`);

/** The demo's configuration: its own data folder, quick rates, an export after each cycle. */
function demoConfigOf(config: Config) {
  return {
    ...config,
    DAYBOOK_DATA_DIR: resolve(config.DAYBOOK_DATA_DIR, 'demo'),
    DAYBOOK_ENTERPRISE_RATE: DEMO_RATE,
    DAYBOOK_PRODUCT_RATE: DEMO_RATE,
    // Each cycle ends with a warehouse export, as DAYBOOK_EXPORT_DIR makes every cycle do.
    DAYBOOK_EXPORT_DIR: resolve(config.DAYBOOK_DATA_DIR, 'demo', 'export'),
    DAYBOOK_EXPORT_FORMAT: 'parquet',
    LOG_LEVEL: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL,
  } as const;
}

type DemoConfig = ReturnType<typeof demoConfigOf>;

/** Watches enterprises the simulator will change in the coming cycles, and some that stay put. */
async function watchDemoEntries(
  sql: postgres.Sql,
  sim: RunningSimulator,
  cycles: number,
  count: number,
): Promise<void> {
  const world = sim.sim.enterprises;
  const changing = new Set<string>();
  for (let i = 1; i < cycles; i++)
    for (const c of world.changesIn(addDays(FIRST_CYCLE, i))) changing.add(c.pid);
  world.at(FIRST_CYCLE);
  const all = world.all();
  const picks = [
    ...all.filter((e) => changing.has(e.PID)).slice(0, Math.ceil(count / 2)),
    ...all.filter((e) => !changing.has(e.PID)).slice(0, count),
  ].slice(0, count);
  const entries = picks.map((e, i) => ({ keyword: e.ENTNAME, priority: i < 5 ? 10 : 0 }));
  await addNewWatches(sql, entries);
  say(
    `watchlist: ${entries.length} enterprises${changing.size > 0 ? ` (some of them will change during the demo)` : ''}`,
  );
}

/** Runs the simulated cycles, the simulator's clock an hour past each cycle's refresh. */
async function runDemoCycles(
  sql: postgres.Sql,
  sim: RunningSimulator,
  demoConfig: DemoConfig,
  log: Logger,
  cycles: number,
): Promise<void> {
  const client = new UpstreamClient({
    baseUrl: sim.url,
    apiKey: SANDBOX_KEY,
    now: () => sim.sim.now(),
  });
  const limiter = new DatabaseRateLimiter(sql, {
    'enterprise-search': perMinute(DEMO_RATE),
    'product-listing': perMinute(DEMO_RATE),
  });
  for (let i = 0; i < cycles; i++) {
    const cycle = addDays(FIRST_CYCLE, i);
    sim.sim.setClock(new Date(cycleStart(cycle).getTime() + 3600_000));
    const now = sim.sim.now();
    const summary = await runInline(
      { sql, client, limiter, config: demoConfig, log, now: () => sim.sim.now() },
      { cycle, concurrency: 4, productLookbackDays: 2 },
    );
    const e = Object.entries(summary.enterprises)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ');
    say(
      `cycle ${cycle} (simulated clock ${now.toISOString()}): products ${summary.productPulls.map((p) => `${p.date} ${p.outcome}`).join(', ')}; enterprises ${e || 'none'}`,
    );
  }
}

/** What landed: the totals, the top products, the latest changes and what the planner learned. */
async function showDemoSummary(sql: postgres.Sql, config: Config, demoConfig: DemoConfig): Promise<void> {
  const counted = await historyTotals(sql);
  const totals = counted && { ...counted, credits: await creditsBilled(sql) };
  const severities = await changesBySeverity(sql);
  say('');
  say('summary');
  say(`  products loaded:       ${totals?.products} (${totals?.snapshots} trending snapshots)`);
  say(`  enterprises refreshed: ${totals?.enterprises} (${totals?.versions} versions)`);
  say(`  credits spent:         ${totals?.credits}`);
  say(`  changes detected:      ${severities.map((s) => `${s.n} ${s.severity}`).join(', ') || 'none'}`);
  say('');
  say('top products of the latest day (analytics.product_trending):');
  const top = await topOfLatestList(sql, 5);
  process.stdout.write(formatTable(top));
  say('');
  say('latest changes (daybook changes; in SQL, analytics.enterprise_changes):');
  const lang = config.DAYBOOK_LANG ?? 'en';
  const log = await changeLogText(sql, await changeRows(sql, { limit: 8 }), lang);
  process.stdout.write(log.replace(/^(?=.)/gm, '  '));
  say('');
  say("what the planner learned (each entry's changes per month, from its refreshes and its cohort):");
  const learned = (await learnedRates(sql, 5)).map((r) => ({
    entry: r.keyword,
    priority: r.priority,
    'changes/month': r.changes_per_month,
    'intervals seen': r.intervals,
    'ended changed': r.changed,
  }));
  process.stdout.write(formatTable(learned));
  say(
    `  why each is refreshed when: ${config.DATABASE_URL ? '' : `DAYBOOK_DATA_DIR=${relative(process.cwd(), demoConfig.DAYBOOK_DATA_DIR) || '.'} `}npx daybook plan explain --top 5   (docs/planner.md)`,
  );
}

/** The export packages the cycles wrote, and where to go from here. */
async function showDemoExports(
  sql: postgres.Sql,
  config: Config,
  demoConfig: DemoConfig,
  started: number,
): Promise<void> {
  say('');
  const exportDir = demoConfig.DAYBOOK_EXPORT_DIR;
  const packages = await completePackages(sql, exportDir);
  say(`warehouse export after each cycle (parquet, ${relative(process.cwd(), exportDir) || exportDir}/):`);
  process.stdout.write(formatTable(packages));
  say(
    `  load it into DuckDB: npm run duckdb-load -- ${relative(process.cwd(), exportDir) || exportDir} demo.duckdb   (docs/export.md)`,
  );
  say('');
  const dataDir = config.DATABASE_URL
    ? ''
    : `DAYBOOK_DATA_DIR=${relative(process.cwd(), demoConfig.DAYBOOK_DATA_DIR) || '.'} `;
  say(
    `done in ${((performance.now() - started) / 1000).toFixed(1)} s. Explore the result:\n  ${dataDir}npx daybook sql "select ent_name, ent_status, legal_person, capital_amount from analytics.enterprise_current limit 5"`,
  );
  // The console reads the embedded database from the one process that holds it; on a server
  // it is part of the admin server, which needs Redis as well.
  say(
    `Open the console on this data (then http://127.0.0.1:9464/ui/ in a browser; Ctrl-C stops it):\n  ${dataDir}npx daybook serve`,
  );
}

export function demoCommand(): Command {
  return command('demo')
    .option('--cycles <n>', 'simulated cycles to run', intArg('--cycles', 1, 30), 3)
    .option('--watch <n>', 'enterprises to watch', intArg('--watch', 1, 500), 20)
    .option('--keep', 'keep the embedded demo database from an earlier run instead of starting afresh')
    .action(async (opts: { cycles: number; watch: number; keep?: boolean }) => {
      const started = performance.now();
      const config = configOrExit();
      const demoConfig = demoConfigOf(config);
      if (!config.DATABASE_URL && !opts.keep)
        rmSync(demoConfig.DAYBOOK_DATA_DIR, { recursive: true, force: true });

      const { startSimulator } = await import('../sim/server.ts');
      const sim = await startSimulator({
        ...defaultSimOptions(),
        rateLimits: { 'enterprise-search': DEMO_RATE, 'product-listing': DEMO_RATE },
        startAt: new Date(cycleStart(FIRST_CYCLE).getTime() + 3600_000),
      });
      say(
        `simulator (sandbox key ${SANDBOX_KEY}) on ${sim.url}, seed 1, ${sim.sim.options.enterprises} enterprises`,
      );
      const store = await openStore(demoConfig, { max: 4 });
      const log = loggerFor(demoConfig);
      try {
        await watchDemoEntries(store.sql, sim, opts.cycles, opts.watch);
        await runDemoCycles(store.sql, sim, demoConfig, log, opts.cycles);
        await showDemoSummary(store.sql, config, demoConfig);
        await showDemoExports(store.sql, config, demoConfig, started);
      } finally {
        await store.close();
        await sim.close();
      }
    });
}

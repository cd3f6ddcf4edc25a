/**
 * `daybook demo` (npm run demo): first contact on a machine with nothing but Node. The embedded
 * database, the simulator in-process, a watchlist of about 20 enterprises, and three consecutive
 * simulated cycles (the simulator's clock moved across 03:00 Asia/Shanghai each time) run through
 * the same job processors as production; then a summary and example SQL results.
 */
import { rmSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { Command } from 'commander';
import { scheduledPulls } from '../../jobs/products.ts';
import { DatabaseRateLimiter, perMinute } from '../purchase/limiter.ts';
import { runInline } from '../runtime/inline.ts';
import { defaultSimOptions, SANDBOX_KEY } from '../sim/options.ts';
import { addDays, cycleStart, pacificDate } from '../time/cycles.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { keywordKey } from '../watch/keyword.ts';
import { loggerFor } from './assemble.ts';
import { configOrExit, openStore } from './context.ts';
import { formatTable } from './report.ts';
import { intArg } from './usage.ts';

const FIRST_CYCLE = '2026-11-18';
const DEMO_RATE = 600;

export function demoCommand(): Command {
  return new Command('demo')
    .description(
      'Run daybook end to end on this machine: embedded database, built-in simulator, ~20 watched enterprises, three simulated daily cycles; then show what landed.',
    )
    .option('--cycles <n>', 'simulated cycles to run', intArg('--cycles', 1, 30), 3)
    .option('--watch <n>', 'enterprises to watch', intArg('--watch', 1, 500), 20)
    .option('--keep', 'keep the embedded demo database from an earlier run instead of starting afresh')
    .action(async (opts: { cycles: number; watch: number; keep?: boolean }) => {
      const started = performance.now();
      const config = configOrExit();
      const demoConfig = {
        ...config,
        DAYBOOK_DATA_DIR: resolve(config.DAYBOOK_DATA_DIR, 'demo'),
        DAYBOOK_ENTERPRISE_RATE: DEMO_RATE,
        DAYBOOK_PRODUCT_RATE: DEMO_RATE,
        // Each cycle ends with a warehouse export, as DAYBOOK_EXPORT_DIR makes every cycle do.
        DAYBOOK_EXPORT_DIR: resolve(config.DAYBOOK_DATA_DIR, 'demo', 'export'),
        DAYBOOK_EXPORT_FORMAT: 'parquet',
        LOG_LEVEL: config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL,
      } as const;
      if (!config.DATABASE_URL && !opts.keep)
        rmSync(demoConfig.DAYBOOK_DATA_DIR, { recursive: true, force: true });
      const say = (line: string) => process.stdout.write(`${line}\n`);

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
        // Watch enterprises the simulator will change in the coming cycles, and some that stay put.
        const world = sim.sim.enterprises;
        const changing = new Set<string>();
        for (let i = 1; i < opts.cycles; i++)
          for (const c of world.changesIn(addDays(FIRST_CYCLE, i))) changing.add(c.pid);
        world.at(FIRST_CYCLE);
        const all = world.all();
        const picks = [
          ...all.filter((e) => changing.has(e.PID)).slice(0, Math.ceil(opts.watch / 2)),
          ...all.filter((e) => !changing.has(e.PID)).slice(0, opts.watch),
        ].slice(0, opts.watch);
        const rows = picks.map((e, i) => ({
          keyword: e.ENTNAME,
          keyword_key: keywordKey(e.ENTNAME),
          priority: i < 5 ? 10 : 0,
        }));
        await store.sql`insert into watchlist ${store.sql(rows)} on conflict (keyword_key) do nothing`;
        say(
          `watchlist: ${rows.length} enterprises${changing.size > 0 ? ` (some of them will change during the demo)` : ''}`,
        );

        const client = new UpstreamClient({
          baseUrl: sim.url,
          apiKey: SANDBOX_KEY,
          now: () => sim.sim.now(),
        });
        const limiter = new DatabaseRateLimiter(store.sql, {
          'enterprise-search': perMinute(DEMO_RATE),
          'product-listing': perMinute(DEMO_RATE),
        });
        for (let i = 0; i < opts.cycles; i++) {
          const cycle = addDays(FIRST_CYCLE, i);
          sim.sim.setClock(new Date(cycleStart(cycle).getTime() + 3600_000));
          const now = sim.sim.now();
          const summary = await runInline(
            { sql: store.sql, client, limiter, config: demoConfig, log, now: () => sim.sim.now() },
            { cycle, concurrency: 4, productDates: scheduledPulls(pacificDate(now), 2) },
          );
          const e = Object.entries(summary.enterprises)
            .map(([k, v]) => `${v} ${k}`)
            .join(', ');
          say(
            `cycle ${cycle} (simulated clock ${now.toISOString()}): products ${summary.productPulls.map((p) => `${p.date} ${p.outcome}`).join(', ')}; enterprises ${e || 'none'}`,
          );
        }

        const [totals] = await store.sql<
          { products: number; snapshots: number; enterprises: number; versions: number; credits: number }[]
        >`select (select count(*) from products)::int as products,
                 (select count(*) from trending_snapshots)::int as snapshots,
                 (select count(*) from enterprises)::int as enterprises,
                 (select count(*) from enterprise_versions)::int as versions,
                 (select coalesce(sum(credits), 0) from credit_ledger)::int as credits`;
        const severities = await store.sql<{ severity: string; n: number }[]>`
          select severity, count(*)::int as n from enterprise_changes group by severity
          order by array_position(array['high','medium','low'], severity)`;
        say('');
        say('summary');
        say(`  products loaded:       ${totals?.products} (${totals?.snapshots} trending snapshots)`);
        say(`  enterprises refreshed: ${totals?.enterprises} (${totals?.versions} versions)`);
        say(`  credits spent:         ${totals?.credits}`);
        say(`  changes detected:      ${severities.map((s) => `${s.n} ${s.severity}`).join(', ') || 'none'}`);
        say('');
        say('top products of the latest day (analytics.product_trending):');
        const top = await store.sql`
          select list_date::text, position, name, votes_count from analytics.product_trending
          where is_latest_pull and list_date = (select max(list_date) from trending_snapshots)
          order by position limit 5`;
        process.stdout.write(formatTable(top));
        say('');
        say('latest changes (analytics.enterprise_changes):');
        const changes = await store.sql`
          select cycle::text, current_name as name, category, field, before, after, severity
          from analytics.enterprise_changes order by detected_at desc, change_id desc limit 8`;
        process.stdout.write(formatTable(changes));
        say('');
        say("what the planner learned (each entry's changes per month, from its refreshes and its cohort):");
        const learned = await store.sql`
          select keyword, priority, round((change_rate * 30.44)::numeric, 2)::text as changes_per_month,
                 (change_history->>'n')::float8::int as intervals,
                 (change_history->>'changes')::float8::int as changed
          from watchlist where change_rate is not null order by change_rate desc, id limit 5`;
        process.stdout.write(formatTable(learned));
        say(
          `  why each is refreshed when: ${config.DATABASE_URL ? '' : `DAYBOOK_DATA_DIR=${relative(process.cwd(), demoConfig.DAYBOOK_DATA_DIR) || '.'} `}npx daybook plan explain --top 5   (docs/planner.md)`,
        );
        say('');
        const exportDir = demoConfig.DAYBOOK_EXPORT_DIR;
        const packages = await store.sql<{ load_id: string; kind: string; rows: number; tables: number }[]>`
          select load_id, kind, rows::int as rows,
                 (select count(*) from jsonb_object_keys(manifest->'tables'))::int as tables
          from exports where destination = ${exportDir} and state = 'complete' order by load_no`;
        say(
          `warehouse export after each cycle (parquet, ${relative(process.cwd(), exportDir) || exportDir}/):`,
        );
        process.stdout.write(formatTable(packages));
        say(
          `  load it into DuckDB: npm run duckdb-load -- ${relative(process.cwd(), exportDir) || exportDir} demo.duckdb   (docs/export.md)`,
        );
        say('');
        say(
          `done in ${((performance.now() - started) / 1000).toFixed(1)} s. Explore the result:\n  ${config.DATABASE_URL ? '' : `DAYBOOK_DATA_DIR=${relative(process.cwd(), demoConfig.DAYBOOK_DATA_DIR) || '.'} `}npx daybook sql "select ent_name, ent_status, legal_person, capital_amount from analytics.enterprise_current limit 5"`,
        );
      } finally {
        await store.close();
        await sim.close();
      }
    });
}

/**
 * A real Prometheus (Debian's binary) scrapes a running daybook admin server, loads the rules of
 * ops/prometheus/ and evaluates them against what /metrics says; the dashboard's queries run on
 * it too. Every wait polls with a generous deadline: nothing here depends on how fast it goes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { addSubscription, markFailing } from '../../src/delivery/store.ts';
import { ensureCycleBudget, pauseCycle } from '../../src/purchase/credits.ts';
import { recordPlan } from '../../src/purchase/fetches.ts';
import { DatabaseRateLimiter, perMinute } from '../../src/purchase/limiter.ts';
import { type RunningAdmin, startAdminServer } from '../../src/runtime/admin.ts';
import { addDays, cycleOf } from '../../src/time/cycles.ts';
import { addWatches } from '../../src/watch/store.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { ensureDebianTool } from '../support/debian.ts';
import { freePort } from '../support/net.ts';
import { type OwnQueues, ownQueues } from '../support/queues.ts';

const OPS = join(import.meta.dirname, '../../ops');
const RULES = join(OPS, 'prometheus/daybook.rules.yml');

interface Rule {
  name: string;
  query: string;
  health: string;
  lastError?: string;
  lastEvaluation: string;
}
interface Alert {
  labels: Record<string, string>;
  state: string;
}

const ruleFile = parse(readFileSync(RULES, 'utf8')) as {
  groups: { rules: { alert: string; expr: string }[] }[];
};
const ruleNames = ruleFile.groups.flatMap((g) => g.rules.map((r) => r.alert)).sort();
const dashboard = JSON.parse(readFileSync(join(OPS, 'grafana/daybook.json'), 'utf8')) as {
  panels: { title: string; targets?: { expr: string }[] }[];
};
const dashboardExprs = dashboard.panels.flatMap((p) =>
  (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })),
);

/** Polls `check` until it returns a value (not undefined); fails with `what` after `ms`. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end)
      throw new Error(`${what}: not seen within ${ms / 1000} s${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('a real Prometheus scraping daybook', { timeout: 150_000 }, () => {
  let db: TestDatabase;
  let q: OwnQueues;
  let admin: RunningAdmin;
  let prometheus: ChildProcess | undefined;
  let dir: string;
  let api: string;
  const output: string[] = [];
  let failingId = '';
  // A cycle two days old: past its deadline, not complete, paused by insufficient_credits.
  const cycle = addDays(cycleOf(new Date()), -2);

  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${api}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`${path}: ${body.error}`);
    return body.data;
  };

  beforeAll(async () => {
    const binary = ensureDebianTool('/usr/bin/prometheus', 'prometheus');
    db = await freshDatabase();
    q = ownQueues('prom');
    await ensureCycleBudget(db.sql, cycle, 30);
    const { ids } = await addWatches(
      db.sql,
      ['甲公司', '乙公司'].map((keyword) => ({ keyword, priority: 0 })),
    );
    await recordPlan(db.sql, {
      cycle,
      selected: ids.map((id) => ({ id })),
      skipped: [],
      deferReason: 'budget',
    });
    await pauseCycle(
      db.sql,
      cycle,
      `insufficient_credits at ${new Date().toISOString()}: the account is empty`,
    );
    // A subscription failing for an hour, and two rate-limit refusals (too few for an alert).
    const { subscription } = await addSubscription(db.sql, { url: 'https://hooks.example.com/daybook' });
    failingId = String(subscription.id);
    await markFailing(db.sql, subscription.id, new Date(Date.now() - 3600_000));
    const limiter = new DatabaseRateLimiter(db.sql, {
      'enterprise-search': perMinute(100),
      'product-listing': perMinute(30),
    });
    await limiter.block('enterprise-search', 1000);
    await limiter.block('enterprise-search', 1000);
    admin = await startAdminServer({
      sql: db.sql,
      redis: q.redis,
      queues: q.queues,
      host: '127.0.0.1',
      port: 0,
      token: null,
      rateLimits: { 'enterprise-search': 100, 'product-listing': 30 },
    });

    dir = mkdtempSync(join(tmpdir(), 'daybook-prometheus-'));
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${JSON.stringify(RULES)}`,
        'scrape_configs:',
        '  - job_name: daybook',
        '    static_configs:',
        `      - targets: [${JSON.stringify(new URL(admin.url).host)}]`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      binary,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout?.on('data', (d) => output.push(String(d)));
    prometheus.stderr?.on('data', (d) => output.push(String(d)));
    await eventually('Prometheus ready', async () => ((await fetch(`${api}/-/ready`)).ok ? true : undefined));
  }, 700_000);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus?.once('exit', r));
      prometheus.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (prometheus.exitCode === null) prometheus.kill('SIGKILL');
    }
    await admin?.close();
    await q?.remove();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('scrapes /metrics, loads every rule and evaluates each against it without an error', async () => {
    const scraped = await eventually('the daybook target up', async () => {
      const { activeTargets } = await get<{ activeTargets: { health: string; lastScrape: string }[] }>(
        '/api/v1/targets',
      );
      const t = activeTargets[0];
      return t?.health === 'up' ? Date.parse(t.lastScrape) : undefined;
    });
    const rules = await eventually(
      `every rule evaluated after the first scrape (${output.join('')})`,
      async () => {
        const { groups } = await get<{ groups: { rules: Rule[] }[] }>('/api/v1/rules');
        const all = groups.flatMap((g) => g.rules);
        return all.length > 0 && all.every((r) => Date.parse(r.lastEvaluation) > scraped) ? all : undefined;
      },
    );
    expect(rules.map((r) => r.name).sort()).toEqual(ruleNames);
    for (const r of rules) {
      expect(r.lastError ?? '', r.name).toBe('');
      expect(r.health, r.name).toBe('ok');
    }
  });

  it('fires the alerts of the state daybook is in: credits exhausted, the cycle late, deliveries failing; no worker pending', async () => {
    const alerts = await eventually('DaybookCreditsExhausted firing', async () => {
      const { alerts } = await get<{ alerts: Alert[] }>('/api/v1/alerts');
      return alerts.some((a) => a.labels.alertname === 'DaybookCreditsExhausted' && a.state === 'firing')
        ? alerts
        : undefined;
    });
    const of = (name: string) => alerts.filter((a) => a.labels.alertname === name);
    expect(of('DaybookCreditsExhausted')[0]?.labels).toMatchObject({
      cycle,
      cause: 'credits',
      job: 'daybook',
    });
    expect(of('DaybookCycleLate').map((a) => [a.state, a.labels.cycle])).toEqual([['firing', cycle]]);
    expect(of('DaybookUpstreamRefusing')).toEqual([]);
    expect(of('DaybookRateLimitRefusals')).toEqual([]);
    expect(of('DaybookDeliveriesFailing').map((a) => [a.state, a.labels.subscription])).toEqual([
      ['firing', failingId],
    ]);
    // No worker listens: pending, for 5 minutes before it fires.
    expect(
      of('DaybookNoWorker')
        .map((a) => [a.labels.queue, a.state])
        .sort(),
    ).toEqual([
      ['cycle', 'pending'],
      ['enterprise', 'pending'],
      ['plan', 'pending'],
      ['products', 'pending'],
    ]);
  });

  it('runs every query of the dashboard without an error', async () => {
    for (const { panel, expr } of dashboardExprs) {
      const query = expr.replaceAll('$instance', '.*').replaceAll('$__rate_interval', '1m');
      const data = await get<{ resultType: string }>(`/api/v1/query?query=${encodeURIComponent(query)}`);
      expect(data.resultType, `${panel}: ${query}`).toBe('vector');
    }
  });

  it('the rules and the dashboard name only series daybook exposes', async () => {
    const text = await (await fetch(`${admin.url}/metrics`)).text();
    const exposed = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string));
    const named = new Set(
      [
        ...ruleFile.groups.flatMap((g) => g.rules.map((r) => r.expr)),
        ...dashboardExprs.map((e) => e.expr),
      ].flatMap((expr) => [...expr.matchAll(/\bdaybook_[a-z0-9_]+/g)].map((m) => m[0])),
    );
    expect(named.size).toBeGreaterThan(15);
    expect([...named].filter((n) => !exposed.has(n))).toEqual([]);
  });
});

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AdminConfigError,
  buildAdminApp,
  type RunningAdmin,
  startAdminServer,
} from '../../src/runtime/admin.ts';
import { cycleOf } from '../../src/time/cycles.ts';
import { ensureChromium, HEADLESS_FLAGS } from '../support/debian.ts';
import { startPipeline, type TestPipeline, until } from '../support/pipeline.ts';

const run = promisify(execFile);

describe('the admin server', { timeout: 300_000 }, () => {
  let p: TestPipeline;
  let admin: RunningAdmin;

  beforeAll(async () => {
    p = await startPipeline();
    await p.watch(12);
    const cycle = cycleOf(p.sim.sim.now());
    const w = p.startWorkers(4);
    await p.queues.addPlan({ cycle });
    await until([w], async () => {
      const [r] = await p.db.sql<
        { n: number }[]
      >`select count(*)::int as n from cycle_fetches where status = 'succeeded'`;
      return r?.n === 12;
    });
    admin = await startAdminServer({
      sql: p.db.sql,
      redis: p.redis,
      queues: p.queues,
      host: '127.0.0.1',
      port: 0,
      token: null,
    });
  });
  afterAll(async () => {
    await admin?.close();
    await p?.close();
  });

  it('/healthz reports Postgres and Redis', async () => {
    const res = await fetch(`${admin.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', postgres: 'ok', redis: 'ok' });
  });

  it('/metrics has upstream requests, credits, job durations, queue depths, versions and changes', async () => {
    const text = await (await fetch(`${admin.url}/metrics`)).text();
    expect(text).toMatch(/daybook_upstream_requests\{operation="enterprise-search",outcome="success"\} 12/);
    expect(text).toMatch(/daybook_credits_billed\{scope="total"\} 36/);
    expect(text).toMatch(/daybook_job_duration_seconds\{kind="enterprise",stat="p95"\} [\d.e-]+/);
    expect(text).toMatch(/daybook_queue_jobs\{queue="enterprise",state="completed"\} 12/);
    expect(text).toMatch(/daybook_versions_written\{entity="enterprise"\} 12/);
    expect(text).toMatch(/daybook_changes_detected\{severity="high"\} 0/);
    expect(text).toContain('daybook_rate_limited_answers');
  });

  it('refuses to bind beyond loopback without a token, and then requires it', async () => {
    await expect(
      buildAdminApp({
        sql: p.db.sql,
        redis: p.redis,
        queues: p.queues,
        host: '0.0.0.0',
        port: 0,
        token: null,
      }),
    ).rejects.toBeInstanceOf(AdminConfigError);
    const token = 'a-token-of-enough-length';
    const guarded = await startAdminServer({
      sql: p.db.sql,
      redis: p.redis,
      queues: p.queues,
      host: '127.0.0.1',
      port: 0,
      token,
    });
    try {
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${guarded.url}/queues`)).status).toBe(401);
      expect(
        (await fetch(`${guarded.url}/metrics`, { headers: { Authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      const viaQuery = await fetch(`${guarded.url}/queues?token=${token}`, { redirect: 'manual' });
      expect(viaQuery.status).toBe(200);
      expect(viaQuery.headers.get('set-cookie')).toContain('daybook_token=');
      expect((await fetch(`${guarded.url}/healthz`)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it('Bull Board renders the queues in headless Chromium', async () => {
    const chromium = ensureChromium();
    const profile = mkdtempSync(join(tmpdir(), 'daybook-chromium-'));
    const flags = [...HEADLESS_FLAGS, `--user-data-dir=${profile}`, '--virtual-time-budget=15000'];
    const { stdout } = await run(chromium, [...flags, '--dump-dom', `${admin.url}/queues`], {
      timeout: 120_000,
      maxBuffer: 20_000_000,
    });
    for (const queue of ['enterprise', 'plan', 'products']) expect(stdout).toContain(queue);
    expect(stdout).toMatch(/bull/i);
    const shot = join(profile, 'bull-board.png');
    await run(chromium, [...flags, '--window-size=1280,900', `--screenshot=${shot}`, `${admin.url}/queues`], {
      timeout: 120_000,
    });
    expect(existsSync(shot)).toBe(true);
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    console.log(`Bull Board screenshot: ${shot}`);
  });
});

/**
 * The Grafana dashboard of ops/grafana/ is a dashboard JSON model Grafana imports: a Prometheus
 * data source chosen by a variable, panels with unique ids on the 24-column grid, each query
 * asking that data source. (Which series the queries name is checked against a running daybook
 * in prometheus.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

interface Target {
  refId: string;
  expr: string;
  datasource: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}

const dashboard = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../ops/grafana/daybook.json'), 'utf8'),
) as {
  title: string;
  uid: string;
  schemaVersion: number;
  templating: { list: { name: string; type: string; query: unknown }[] };
  panels: Panel[];
};

/** How a panel names the data source the `datasource` variable chose. */
const CHOSEN = { type: 'prometheus', uid: ['$', '{datasource}'].join('') };

describe('the Grafana dashboard', () => {
  it('is a dashboard model with a Prometheus data source variable', () => {
    expect(dashboard.title).toBe('daybook');
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
    expect(ds).toMatchObject({ name: 'datasource', query: 'prometheus' });
  });

  it('has panels with unique ids, inside the 24-column grid, every query on the chosen data source', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      if (p.type === 'row') continue;
      expect(p.datasource, p.title).toEqual(CHOSEN);
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) {
        expect(t.datasource, p.title).toEqual(CHOSEN);
        expect(t.expr, p.title).toMatch(/daybook_/);
      }
    }
    // No two panels overlap.
    const cells = new Set<string>();
    for (const p of dashboard.panels)
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          const cell = `${x},${y}`;
          expect(cells.has(cell), `${p.title} overlaps at ${cell}`).toBe(false);
          cells.add(cell);
        }
  });

  it('shows cycle progress, credits against the budget, rate use, refusals, deliveries, exports, workers and queue depth', () => {
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
    for (const series of [
      'daybook_cycle_entries',
      'daybook_cycle_credits',
      'daybook_rate_limit_calls_last_minute',
      'daybook_rate_limit_per_minute',
      'daybook_rate_limited_answers',
      'daybook_webhook_attempts',
      'daybook_export_last_timestamp_seconds',
      'daybook_workers',
      'daybook_queue_jobs',
    ])
      expect(exprs).toContain(series);
  });
});

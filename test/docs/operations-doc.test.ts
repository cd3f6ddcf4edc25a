/**
 * docs/operations.md stays true to /metrics and to the alert rules: it describes every series the
 * admin server exposes (its own process metrics aside) and nothing it does not, and has a section
 * for every alert, the one the alert's runbook annotation points at.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { metricsRegistry } from '../../src/runtime/admin.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { type OwnQueues, ownQueues } from '../support/queues.ts';

const ROOT = join(import.meta.dirname, '../..');
const doc = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
const rules = parse(readFileSync(join(ROOT, 'ops/prometheus/daybook.rules.yml'), 'utf8')) as {
  groups: { rules: { alert: string; annotations: { runbook: string } }[] }[];
};

describe('docs/operations.md', () => {
  let db: TestDatabase;
  let q: OwnQueues;
  beforeAll(async () => {
    db = await freshDatabase();
    q = ownQueues('opsdoc');
  });
  afterAll(async () => {
    await q?.remove();
    await db?.drop();
  });

  it('describes every series of /metrics, and no other', async () => {
    const text = await metricsRegistry(db.sql, q.queues).metrics();
    const exposed = [...text.matchAll(/^# TYPE (daybook_\S+) /gm)]
      .map((m) => m[1] as string)
      .filter((n) => !n.startsWith('daybook_admin_'));
    const documented = [...doc.matchAll(/^\| `(daybook_[a-z0-9_]+)` \|/gm)].map((m) => m[1] as string);
    expect(exposed.length).toBeGreaterThan(20);
    expect([...documented].sort()).toEqual([...exposed].sort());
  });

  it('has a section for every alert, where its runbook points', () => {
    const headings = new Set([...doc.matchAll(/^### (\w+)$/gm)].map((m) => (m[1] as string).toLowerCase()));
    for (const r of rules.groups.flatMap((g) => g.rules)) {
      expect(r.annotations.runbook, r.alert).toBe(`docs/operations.md#${r.alert.toLowerCase()}`);
      expect(headings.has(r.alert.toLowerCase()), r.alert).toBe(true);
    }
  });
});

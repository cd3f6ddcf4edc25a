/**
 * The event outbox. Every change row and every company event becomes an event, written in the same
 * transaction; the sequence follows commit order; per-company sequences count 1, 2, 3…; the rows
 * are append-only; a rebuild adds nothing; the JSON Schemas in the repository are the catalogue's;
 * the pull feed pages through it all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventType, envelopeSchema, eventJsonSchemas } from '../../src/events/catalogue.ts';
import { type Envelope, readEvents } from '../../src/events/feed.ts';
import { appendEvents } from '../../src/events/outbox.ts';
import { rebuild } from '../../src/history/rebuild.ts';
import { pauseCycle, resumeCycle } from '../../src/purchase/credits.ts';
import { runDaybook } from '../support/cli.ts';
import type { TestDatabase } from '../support/db.ts';
import { type History, historyOf } from '../support/inline.ts';
import { sections, tableWith, unticked } from '../support/markdown.ts';

const CYCLES = ['2026-11-10', '2026-11-11', '2026-11-12'];
const ROOT = join(import.meta.dirname, '../..');

describe('the event outbox', { timeout: 180_000 }, () => {
  let h: History;
  let t: TestDatabase;
  beforeAll(async () => {
    h = await historyOf(CYCLES, 10);
    t = h.t;
  });
  afterAll(() => h.close());

  const all = () => readEvents(t.sql, { after: 0, limit: 1_000_000 });

  it('holds one event per change row and per company event, of the type its category names', async () => {
    const [counts] = await t.sql<{ changes: number; observations: number; events: number }[]>`
      select (select count(*)::int from enterprise_changes) as changes,
             (select count(*)::int from enterprise_observations) as observations,
             (select count(*)::int from events where pid is not null) as events`;
    expect(counts?.changes).toBeGreaterThan(0);
    expect(counts?.events).toBe((counts?.changes ?? 0) + (counts?.observations ?? 0));
    // Each change's event carries its values and the version it made.
    const pairs = await t.sql<{ missing: number }[]>`
      select count(*)::int as missing from enterprise_changes c
      join enterprise_versions v on v.id = c.version_id
      where not exists (
        select 1 from events e
        where e.pid = c.pid and e.data->>'field' = c.field and e.data->>'category' = c.category
          and (e.data->>'to_version')::int = v.version
          and e.data->>'previous' is not distinct from c.before and e.data->>'current' is not distinct from c.after
          and e.severity = c.severity and e.cycle = c.cycle)`;
    expect(pairs[0]?.missing).toBe(0);
    const types = new Set((await all()).map((e) => e.type));
    expect(types.has('company.first_seen')).toBe(true);
    expect([...types].some((x) => x.startsWith('company.') && x.endsWith('.changed'))).toBe(true);
  });

  it('gives every event an envelope its JSON Schema accepts, with the name and APPRDATE of its version', async () => {
    const events = await all();
    for (const e of events) envelopeSchema(e.type).parse(e);
    const named = await t.sql<{ bad: number }[]>`
      select count(*)::int as bad from events e
      join enterprise_versions v on v.pid = e.pid and v.version = (e.data->>'to_version')::int
      where e.data ? 'to_version' and (e.name is distinct from v.ent_name or e.effective_date is distinct from v.appr_date)`;
    expect(named[0]?.bad).toBe(0);
  });

  it('numbers events 1, 2, 3… per company, and globally in increasing order', async () => {
    const events = await all();
    const seqs = events.map((e) => e.sequence);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const byPid = new Map<string, number[]>();
    for (const e of events)
      if (e.pid) byPid.set(e.pid, [...(byPid.get(e.pid) ?? []), e.company_sequence as number]);
    for (const [, s] of byPid) expect(s).toEqual(s.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it('writes nothing when the transaction that would have written the fact rolls back', async () => {
    const before = (await all()).length;
    await t.sql
      .begin(async (tx) => {
        await appendEvents(tx, [
          {
            type: 'company.status.changed',
            severity: 'high',
            pid: 'rolled-back',
            cycle: '2026-11-12',
            detectedAt: new Date(),
            rawResponseId: null,
            data: {},
          },
        ]);
        throw new Error('the fact failed');
      })
      .catch(() => {});
    expect((await all()).length).toBe(before);
  });

  it('orders events by commit: a writer waits for an earlier one to commit', async () => {
    const ev = (pid: string) => ({
      type: 'company.disappeared' as EventType,
      severity: 'high' as const,
      pid,
      cycle: '2026-11-12',
      detectedAt: new Date(),
      rawResponseId: null,
      data: { kind: 'disappeared', keyword: null, detail: null },
    });
    let releaseA: () => void = () => {};
    const aHolds = new Promise<void>((r) => {
      releaseA = r;
    });
    let aWrote: () => void = () => {};
    const aHasWritten = new Promise<void>((r) => {
      aWrote = r;
    });
    const a = t.sql.begin(async (tx) => {
      await appendEvents(tx, [ev('order-a')]);
      aWrote();
      await aHolds;
    });
    await aHasWritten;
    let bDone = false;
    const b = t.sql
      .begin(async (tx) => {
        await appendEvents(tx, [ev('order-b')]);
      })
      .then(() => {
        bDone = true;
      });
    // B cannot take a sequence number until A commits: its insert waits on A's lock (looked for
    // until it shows, with a hang guard: on a busy machine B may take a while to get there).
    let waiting = 0;
    for (const deadline = Date.now() + 30_000; waiting === 0 && Date.now() < deadline; ) {
      const [w] = await t.sql<{ n: number }[]>`
        select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
        where l.locktype = 'advisory' and not l.granted and d.datname = current_database()`;
      waiting = w?.n ?? 0;
      if (waiting === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(waiting).toBe(1);
    expect(bDone).toBe(false);
    releaseA();
    await a;
    await b;
    const tail = (await all()).filter((e) => e.pid === 'order-a' || e.pid === 'order-b');
    expect(tail.map((e) => e.pid)).toEqual(['order-a', 'order-b']);
  });

  it('refuses to update, delete or truncate an event', async () => {
    await expect(t.sql`update events set severity = 'low'`).rejects.toThrow(/append-only/);
    await expect(t.sql`delete from events`).rejects.toThrow(/append-only/);
    await expect(t.sql`truncate events`).rejects.toThrow(/append-only/);
  });

  it('is left as it was by a rebuild: no event is emitted again or lost', async () => {
    const before = await all();
    const summary = await rebuild(t.sql);
    expect(summary.enterprises).toBeGreaterThan(0);
    expect(await all()).toEqual(before);
  });

  it('pages through the CLI feed with --after, one JSON event per line', async () => {
    const events = await all();
    const env = { DATABASE_URL: t.url };
    const first = await runDaybook(['events', '--json', '--limit', '5'], env);
    expect(first.code, first.stderr).toBe(0);
    const page1 = first.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { sequence: number; id: string });
    expect(page1.map((e) => e.id)).toEqual(events.slice(0, 5).map((e) => e.id));
    const next = await runDaybook(
      ['events', '--json', '--after', String(page1.at(-1)?.sequence), '--limit', '5'],
      env,
    );
    const page2 = next.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string });
    expect(page2.map((e) => e.id)).toEqual(events.slice(5, 10).map((e) => e.id));
    const typed = await runDaybook(
      ['events', '--json', '--type', 'company.first_seen', '--limit', '100000'],
      env,
    );
    const firstSeen = typed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(firstSeen.length).toBe(events.filter((e) => e.type === 'company.first_seen').length);
    const table = await runDaybook(['events', '--limit', '3'], env);
    expect(table.stdout).toContain('company.first_seen');
    expect(table.stderr).toContain(`daybook events --after ${events[2]?.sequence}`);
    const bad = await runDaybook(['events', '--type', 'company.nonsense'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--type company.nonsense matches no event type');
  });

  it("writes cycle.completed and digest.daily once per completed cycle; the digest lists exactly the cycle's changes", async () => {
    const events = await all();
    for (const cycle of CYCLES) {
      expect(events.filter((e) => e.type === 'cycle.completed' && e.cycle === cycle)).toHaveLength(1);
      const digests = events.filter((e) => e.type === 'digest.daily' && e.cycle === cycle);
      expect(digests).toHaveLength(1);
      const d = digests[0]?.data as {
        markdown: string;
        companies: {
          pid: string;
          changes: { field: string | null; previous: string | null; current: string | null }[];
        }[];
      };
      const changes = await t.sql<
        { pid: string; field: string; before: string | null; after: string | null }[]
      >`
        select pid, field, before, after from enterprise_changes where cycle = ${cycle}`;
      const listed = d.companies.flatMap((c) =>
        c.changes.filter((x) => x.field !== null).map((x) => [c.pid, x.field, x.previous, x.current]),
      );
      expect(listed.map((x) => JSON.stringify(x)).sort()).toEqual(
        changes.map((c) => JSON.stringify([c.pid, c.field, c.before, c.after])).sort(),
      );
      if (changes.length > 0) expect(d.markdown).toContain(`# daybook digest, cycle ${cycle}`);
    }
    const printed = await runDaybook(['digest', '--cycle', CYCLES[1] as string, '--json'], {
      DATABASE_URL: t.url,
    });
    expect(printed.code, printed.stderr).toBe(0);
    const d1 = events.find((e) => e.type === 'digest.daily' && e.cycle === CYCLES[1]);
    expect((JSON.parse(printed.stdout) as { markdown: string }).markdown).toBe(
      (d1 as Envelope).data.markdown,
    );
  });

  it('writes cycle.paused once when a cycle is paused, whoever pauses it again', async () => {
    const cycle = CYCLES[2] as string;
    await pauseCycle(t.sql, cycle, 'insufficient_credits: test');
    await pauseCycle(t.sql, cycle, 'insufficient_credits: again');
    const paused = (await all()).filter((e) => e.type === 'cycle.paused' && e.cycle === cycle);
    expect(paused).toHaveLength(1);
    expect(paused[0]?.data.reason).toBe('insufficient_credits: test');
    await resumeCycle(t.sql, cycle);
  });

  it('is readable in SQL as analytics.events', async () => {
    const out = await runDaybook(
      ['sql', '--json', "select count(*)::int as n from analytics.events where type = 'company.first_seen'"],
      { DATABASE_URL: t.url },
    );
    expect(out.code, out.stderr).toBe(0);
    const n = (await all()).filter((e) => e.type === 'company.first_seen').length;
    expect(out.stdout).toContain(`${n}`);
  });
});

describe('the event catalogue', () => {
  it('has in schemas/events/ exactly the JSON Schema of each type (npm run schemas writes them)', () => {
    const schemas = eventJsonSchemas();
    const dir = join(ROOT, 'schemas/events');
    expect(readdirSync(dir).sort()).toEqual(
      Object.keys(schemas)
        .map((k) => `${k}.json`)
        .sort(),
    );
    for (const [type, schema] of Object.entries(schemas))
      expect(JSON.parse(readFileSync(join(dir, `${type}.json`), 'utf8')), type).toEqual(schema);
  });

  it('is listed in docs/channels.md (Events), type by type, with its severity', () => {
    // The README's Events section moved to docs/channels.md; its table lists every type, and only those.
    const doc = readFileSync(join(ROOT, 'docs/channels.md'), 'utf8');
    const events = sections(doc, 2).find((x) => x.heading === 'Events')?.body ?? '';
    const rows = tableWith(events, ['type', 'severity', 'when'], 'docs/channels.md, Events');
    expect(rows.map((r) => unticked(r[0] ?? '')).sort()).toEqual(Object.keys(EVENT_TYPES).sort());
    for (const [type, spec] of Object.entries(EVENT_TYPES)) {
      const row = rows.find((r) => unticked(r[0] ?? '') === type);
      expect(row?.[1], type).toBe(
        (spec as { severity?: string }).severity ??
          (type.startsWith('related.') ? 'by distance' : "the change's"),
      );
    }
  });
});

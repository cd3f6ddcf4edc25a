/**
 * Applies enterprise observations to the history tables (SCD type 2). Set-based: one batch is a
 * handful of statements whatever its size. Rules (issue 3):
 * - a new version only when the content hash changes; the same payload again only moves
 *   `last_seen_at`;
 * - the first version of an enterprise is an `initial` observation, not a flood of changes;
 * - a change writes one `enterprise_changes` row per field-level difference;
 * - a payload fetched before the latest one applied is stale: it is rejected (its raw answer
 *   stays landed) and recorded as a `stale_ignored` observation, so history is never rewritten;
 * - an enterprise found before and now not_found gets `disappeared`, and `reappeared` when it
 *   comes back; nothing is ever deleted;
 * - a keyword that resolves to another PID than its last applied answer did records
 *   `resolution_changed` (keyword_resolutions holds what each keyword resolved to).
 * Times are landing times by the database's clock, so every machine orders history the same way.
 * Rows of the enterprises touched are locked in PID order, so concurrent batches serialise
 * per enterprise without deadlocks.
 */

import { insertRows, reserveIds } from '../db/bulk.ts';
import type { Sql } from '../db/connect.ts';
import { appendEvents, changeEvent, type NewEvent, observationEvent } from '../events/outbox.ts';
import type { NormalizedEnterprise } from '../normalize/types.ts';
import { diffEnterprises, type Severity } from './classify.ts';
import { enterpriseContentHash } from './hash.ts';

export interface EnterpriseObservation {
  normalized: NormalizedEnterprise;
  /** When the answer landed, by the database's clock: the order of history and `valid_from`. */
  fetchedAt: Date;
  rawResponseId: number | null;
  /** The cycle the fetch belongs to. */
  cycle: string;
  keyword: string | null;
}

export interface DisappearanceObservation {
  pid: string;
  keyword: string | null;
  fetchedAt: Date;
  rawResponseId: number | null;
  cycle: string;
}

export interface EnterpriseApplySummary {
  initial: number;
  changed: number;
  unchanged: number;
  stale: number;
  reappeared: number;
  changes: number;
  bySeverity: Record<Severity, number>;
  /** Version ids written, in input order of the observations that wrote them. */
  versionIds: number[];
}

interface Current {
  versionId: number | null;
  version: number;
  hash: string | null;
  normalized: NormalizedEnterprise | null;
  lastSeenAt: Date;
  /** The raw answer behind lastSeenAt: answers landed in one millisecond are ordered by it. */
  lastSeenRawId: number | null;
  presence: string;
  /** Set when this batch wrote a new current version. */
  touched: boolean;
}

/** Collects the original text of values that could not be read. */
function unreadText(e: NormalizedEnterprise): Record<string, string> {
  const out: Record<string, string> = {};
  const pairs: [string, string | null][] = [
    ['ESDATE', e.esDateText],
    ['IS_LISTED', e.isListedText],
    ['PROVINCE', e.provinceText],
    ['OPFROM', e.opFromText],
    ['APPRDATE', e.apprDateText],
    ['REVOKEDATE', e.revokeDateText],
  ];
  for (const [k, v] of pairs) if (v !== null) out[k] = v;
  return out;
}

function versionRow(
  sql: Sql,
  id: number,
  version: number,
  o: EnterpriseObservation,
  hash: string,
): Record<string, unknown> {
  const e = o.normalized;
  return {
    id,
    pid: e.pid,
    version,
    valid_from: o.fetchedAt,
    valid_to: null,
    is_current: true,
    content_hash: hash,
    cycle: o.cycle,
    raw_response_id: o.rawResponseId,
    ent_name: e.entName,
    history_name: e.historyName,
    is_listed: e.isListed,
    legal_person: e.legalPerson,
    legal_person_desc: e.legalPersonDesc,
    es_date: e.esDate,
    sconform: e.sconForm,
    reg_no: e.regNo,
    uncid: e.uncid,
    ent_type_code: e.entTypeCode,
    ent_type: e.entType,
    reg_cap: e.regCap,
    reg_cap_text: e.regCapText,
    capital_text: e.capitalText,
    capital_unit: e.capitalUnit,
    capital_currency: e.capitalCurrency,
    capital_amount: e.capitalAmount,
    province: e.province,
    op_from: e.opFrom,
    operating_to: e.operatingTo,
    operating_perpetual: e.operatingPerpetual,
    operating_to_text: e.operatingToText,
    reg_org: e.regOrg,
    appr_date: e.apprDate,
    revoke_date: e.revokeDate,
    revoke_reason: e.revokeReason,
    ent_status: e.entStatus,
    op_loc: e.opLoc,
    op_scope: e.opScope,
    participants: e.participants,
    participants_count: e.participantsCount,
    industry_phy: e.industryPhy,
    industry_big: e.industryBig,
    industry_middle: e.industryMiddle,
    unread_text: sql.json(unreadText(e)),
    extra: sql.json(e.extra),
    normalized: sql.json(e as unknown as Parameters<Sql['json']>[0]),
  };
}

/** Applies observations (any order; they are sorted by fetch time) in a few statements. */
export async function applyEnterprises(
  sql: Sql,
  observations: readonly EnterpriseObservation[],
): Promise<EnterpriseApplySummary> {
  const summary: EnterpriseApplySummary = {
    initial: 0,
    changed: 0,
    unchanged: 0,
    stale: 0,
    reappeared: 0,
    changes: 0,
    bySeverity: { high: 0, medium: 0, low: 0 },
    versionIds: [],
  };
  if (observations.length === 0) return summary;
  const items = [...observations].sort((a, b) => (landedBefore(a, b) ? -1 : landedBefore(b, a) ? 1 : 0));

  const firstSeen = new Map<string, Date>();
  for (const o of items) if (!firstSeen.has(o.normalized.pid)) firstSeen.set(o.normalized.pid, o.fetchedAt);
  const pids = [...firstSeen.keys()].sort();
  await insertRowsOnConflict(
    sql,
    pids.map((pid) => ({ pid, first_seen_at: firstSeen.get(pid), last_seen_at: firstSeen.get(pid) })),
  );
  const rows = await sql<
    {
      pid: string;
      last_seen_at: Date;
      last_seen_raw_id: string | null;
      presence: string;
      id: string | null;
      version: number | null;
      content_hash: string | null;
      normalized: NormalizedEnterprise | null;
    }[]
  >`
    select e.pid, e.last_seen_at, e.last_seen_raw_id, e.presence, v.id, v.version, v.content_hash, v.normalized
    from enterprises e left join enterprise_versions v on v.id = e.current_version_id
    where e.pid = any(${pids}::text[])
    order by e.pid
    for update of e`;
  const state = new Map<string, Current>();
  for (const r of rows) {
    state.set(r.pid, {
      versionId: r.id === null ? null : Number(r.id),
      version: r.version ?? 0,
      hash: r.content_hash,
      normalized: r.normalized,
      lastSeenAt: r.last_seen_at,
      lastSeenRawId: r.last_seen_raw_id === null ? null : Number(r.last_seen_raw_id),
      presence: r.presence,
      touched: false,
    });
  }

  // What the batch's keywords resolved to before it, locked like the enterprises.
  const keywords = [...new Set(items.flatMap((o) => (o.keyword === null ? [] : [o.keyword])))].sort();
  const resolved = new Map<string, string>();
  if (keywords.length > 0) {
    const rs = await sql<{ keyword: string; pid: string }[]>`
      select keyword, pid from keyword_resolutions where keyword = any(${keywords}::text[])
      order by keyword for update`;
    for (const r of rs) resolved.set(r.keyword, r.pid);
  }
  const resolutions = new Map<string, { pid: string; rawResponseId: number | null; at: Date }>();

  const writes: { o: EnterpriseObservation; hash: string; version: number; previousId: number | null }[] = [];
  const observationRows: Record<string, unknown>[] = [];
  const observe = (
    pid: string,
    kind: string,
    o: { cycle: string; keyword: string | null; fetchedAt: Date; rawResponseId: number | null },
    detail: string | null = null,
  ) =>
    observationRows.push({
      pid,
      kind,
      cycle: o.cycle,
      keyword: o.keyword,
      detail,
      raw_response_id: o.rawResponseId,
      observed_at: o.fetchedAt,
    });
  const pendingDiffs: { writeIndex: number; before: NormalizedEnterprise; after: NormalizedEnterprise }[] =
    [];

  for (const o of items) {
    const pid = o.normalized.pid;
    const cur = state.get(pid) as Current;
    if (cur.versionId !== null || cur.touched) {
      if (landedBefore(o, { fetchedAt: cur.lastSeenAt, rawResponseId: cur.lastSeenRawId })) {
        summary.stale++;
        observe(
          pid,
          'stale_ignored',
          o,
          `fetched ${o.fetchedAt.toISOString()}, before ${cur.lastSeenAt.toISOString()}`,
        );
        continue;
      }
    }
    if (o.keyword !== null) {
      const before = resolved.get(o.keyword);
      if (before !== undefined && before !== pid) {
        // The keyword now names another company: say so rather than mix two histories.
        observe(pid, 'resolution_changed', o, `keyword resolved to ${before} before`);
      }
      resolved.set(o.keyword, pid);
      resolutions.set(o.keyword, { pid, rawResponseId: o.rawResponseId, at: o.fetchedAt });
    }
    if (cur.presence === 'disappeared') {
      summary.reappeared++;
      observe(pid, 'reappeared', o);
      cur.presence = 'present';
    }
    const hash = enterpriseContentHash(o.normalized);
    cur.lastSeenAt = o.fetchedAt;
    cur.lastSeenRawId = o.rawResponseId;
    if (cur.hash === hash) {
      summary.unchanged++;
      continue;
    }
    const writeIndex = writes.length;
    writes.push({ o, hash, version: cur.version + 1, previousId: null });
    if (cur.normalized === null) {
      summary.initial++;
      observe(pid, 'initial', o);
    } else {
      summary.changed++;
      pendingDiffs.push({ writeIndex, before: cur.normalized, after: o.normalized });
    }
    cur.version += 1;
    cur.hash = hash;
    cur.normalized = o.normalized;
    cur.touched = true;
  }

  const ids = await reserveIds(sql, 'enterprise_versions', writes.length);
  // Resolve each new version's predecessor: the previous write in this batch or the stored current.
  const lastId = new Map<string, number | null>();
  for (const r of rows) lastId.set(r.pid, r.id === null ? null : Number(r.id));
  for (const [i, w] of writes.entries()) {
    w.previousId = lastId.get(w.o.normalized.pid) ?? null;
    lastId.set(w.o.normalized.pid, ids[i] as number);
  }
  const closeRows = writes
    .filter((w) => w.previousId !== null)
    .map((w) => [w.previousId, w.o.fetchedAt.toISOString()] as [number, string]);
  if (closeRows.length > 0) {
    await sql`
      update enterprise_versions v set valid_to = u.valid_to::timestamptz, is_current = false
      from (values ${sql(closeRows)}) as u(id, valid_to)
      where v.id = u.id::bigint`;
  }
  // Versions superseded inside this batch are written already closed.
  const nextOf = new Map<number, Date>();
  for (const w of writes) if (w.previousId !== null) nextOf.set(w.previousId, w.o.fetchedAt);
  const versionRows = writes.map((w, i) => {
    const id = ids[i] as number;
    const row = versionRow(sql, id, w.version, w.o, w.hash);
    const closedAt = nextOf.get(id);
    if (closedAt) {
      row.valid_to = closedAt;
      row.is_current = false;
    }
    return row;
  });
  await insertRows(sql, 'enterprise_versions', versionRows);

  const persons: Record<string, unknown>[] = [];
  const shareholders: Record<string, unknown>[] = [];
  const members: Record<string, unknown>[] = [];
  for (const [i, w] of writes.entries()) {
    const versionId = ids[i] as number;
    const e = w.o.normalized;
    for (const [k, p] of e.persons.entries())
      persons.push({
        version_id: versionId,
        ordinal: k + 1,
        name: p.name,
        position: p.position,
        extra: sql.json(p.extra),
      });
    for (const [k, s] of e.shareholders.entries())
      shareholders.push({
        version_id: versionId,
        ordinal: k + 1,
        name: s.name,
        type: s.type,
        shareholder_pid: s.pid,
        extra: sql.json(s.extra),
      });
    for (const [k, c] of e.clearingMembers.entries())
      members.push({
        version_id: versionId,
        ordinal: k + 1,
        name: c.name,
        position: c.position,
        extra: sql.json(c.extra),
      });
  }
  await insertRows(sql, 'enterprise_persons', persons);
  await insertRows(sql, 'enterprise_shareholders', shareholders);
  await insertRows(sql, 'enterprise_clearing_members', members);

  const changeRows: Record<string, unknown>[] = [];
  const outbox: NewEvent[] = [];
  for (const d of pendingDiffs) {
    const w = writes[d.writeIndex];
    if (!w) continue;
    for (const c of diffEnterprises(d.before, d.after)) {
      summary.bySeverity[c.severity]++;
      outbox.push(
        changeEvent({
          ...c,
          pid: w.o.normalized.pid,
          cycle: w.o.cycle,
          detectedAt: w.o.fetchedAt,
          rawResponseId: w.o.rawResponseId,
          versionId: ids[d.writeIndex] as number,
          fromVersion: w.previousId === null ? null : w.version - 1,
          toVersion: w.version,
        }),
      );
      changeRows.push({
        pid: w.o.normalized.pid,
        cycle: w.o.cycle,
        version_id: ids[d.writeIndex],
        previous_version_id: w.previousId,
        category: c.category,
        field: c.field,
        kind: c.kind,
        before: c.before,
        after: c.after,
        detail: c.detail,
        severity: c.severity,
        detected_at: w.o.fetchedAt,
      });
    }
  }
  summary.changes = changeRows.length;
  await insertRows(sql, 'enterprise_changes', changeRows);
  await insertRows(sql, 'enterprise_observations', observationRows);

  // Every enterprise in the batch has a version now: a stored one or one written above.
  // The rows are locked and `state` started from them: its last-seen values are the latest.
  const pointerRows = [...state.entries()].map(([pid, cur]) => [
    pid,
    String(lastId.get(pid)),
    cur.lastSeenAt.toISOString(),
    cur.lastSeenRawId === null ? '' : String(cur.lastSeenRawId),
    cur.presence,
  ]);
  await sql`
    update enterprises e set
      current_version_id = u.version_id::bigint,
      last_seen_at = u.last_seen_at::timestamptz,
      last_seen_raw_id = nullif(u.last_seen_raw_id, '')::bigint,
      presence = u.presence
    from (values ${sql(pointerRows)}) as u(pid, version_id, last_seen_at, last_seen_raw_id, presence)
    where e.pid = u.pid`;
  // Last in the transaction: the outbox lock is held from here to the commit (outbox.ts).
  for (const r of observationRows) {
    const e = observationEvent({
      pid: r.pid as string,
      kind: r.kind as string,
      cycle: r.cycle as string,
      keyword: r.keyword as string | null,
      detail: r.detail as string | null,
      observedAt: r.observed_at as Date,
      rawResponseId: r.raw_response_id as number | null,
    });
    if (e) outbox.push(e);
  }
  if (resolutions.size > 0) {
    const rows = [...resolutions.entries()].map(([keyword, r]) => ({
      keyword,
      pid: r.pid,
      raw_response_id: r.rawResponseId,
      resolved_at: r.at,
    }));
    await sql`insert into keyword_resolutions ${sql(rows)}
              on conflict (keyword) do update set pid = excluded.pid,
                raw_response_id = excluded.raw_response_id, resolved_at = excluded.resolved_at`;
  }
  await appendEvents(sql, outbox);
  summary.versionIds = ids;
  return summary;
}

/**
 * Whether answer `a` landed before `b`: by landing time to the millisecond (what a Date holds),
 * then by the landing sequence (the raw answer's id), which every machine agrees on.
 */
export function landedBefore(
  a: { fetchedAt: Date; rawResponseId: number | null },
  b: { fetchedAt: Date; rawResponseId: number | null },
): boolean {
  const d = a.fetchedAt.getTime() - b.fetchedAt.getTime();
  if (d !== 0) return d < 0;
  return a.rawResponseId !== null && b.rawResponseId !== null && a.rawResponseId < b.rawResponseId;
}

async function insertRowsOnConflict(sql: Sql, rows: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 10_000) {
    const part = rows.slice(i, i + 10_000);
    // biome-ignore lint/suspicious/noExplicitAny: postgres.js types the helper per row shape
    await sql`insert into enterprises ${sql(part as any, 'pid', 'first_seen_at', 'last_seen_at')} on conflict (pid) do nothing`;
  }
}

/**
 * Records that enterprises found before now answer not_found. Their history stays; the next
 * successful fetch records `reappeared`. Unknown PIDs are ignored (never found, nothing to say).
 */
export async function markDisappeared(sql: Sql, items: readonly DisappearanceObservation[]): Promise<number> {
  let n = 0;
  for (const o of items) {
    const rows = await sql`
      update enterprises set presence = 'disappeared'
      where pid = ${o.pid} and presence = 'present' and last_seen_at <= ${o.fetchedAt}
      returning pid`;
    if (rows.length === 0) continue;
    n++;
    await sql`
      insert into enterprise_observations (pid, kind, cycle, keyword, raw_response_id, observed_at)
      values (${o.pid}, 'disappeared', ${o.cycle}, ${o.keyword}, ${o.rawResponseId}, ${o.fetchedAt})`;
    const e = observationEvent({ ...o, kind: 'disappeared', detail: null, observedAt: o.fetchedAt });
    if (e) await appendEvents(sql, [e]);
  }
  return n;
}

/**
 * A keyword answered not_found: the enterprise it resolved to before, if any, is recorded as
 * disappeared (`markDisappeared`). Returns 1 when it was, else 0.
 */
export async function disappearKeyword(
  sql: Sql,
  o: { keyword: string; fetchedAt: Date; rawResponseId: number | null; cycle: string },
): Promise<number> {
  const [r] = await sql<{ pid: string }[]>`select pid from keyword_resolutions where keyword = ${o.keyword}`;
  if (!r) return 0;
  return markDisappeared(sql, [{ pid: r.pid, ...o }]);
}

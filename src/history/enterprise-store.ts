/**
 * Applies enterprise observations to the history tables (SCD type 2). Set-based: one batch is a
 * handful of statements whatever its size. Rules:
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

import { deleteSuperseded, insertRows, truncateTables } from '../db/bulk.ts';
import type { Sql } from '../db/connect.ts';
import type { DriverRow, LeftJoined, Recast } from '../db/rows.ts';
import type { enterprises, enterpriseVersions, keywordResolutions } from '../db/schema.ts';
import { appendEvents, changeEvent, type NewEvent, observationEvent } from '../events/outbox.ts';
import type { NormalizedEnterprise, NormalizedPerson } from '../normalize/types.ts';
import { changeFacts } from '../terms/changes.ts';
import { diffEnterprises, type Severity } from './classify.ts';
import { enterpriseContentHash } from './hash.ts';
import { relatedEvents } from './related-events.ts';
import {
  insertChildRows,
  pointerRows,
  type VersionTable,
  type VersionWrite,
  type WrittenVersions,
  writeVersions,
} from './scd2.ts';

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

/** The history columns of a version, besides the SCD2 ones `writeVersions` fills in. */
function versionColumns(sql: Sql, o: EnterpriseObservation): Record<string, unknown> {
  const e = o.normalized;
  return {
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

const ENTERPRISE_VERSIONS: VersionTable = { table: 'enterprise_versions', keyColumn: 'pid' };

/** A new version the batch writes, and the observation it comes from. */
interface EnterpriseWrite extends VersionWrite {
  o: EnterpriseObservation;
}

/** One observation of an enterprise as stored (a disappearance, a reappearance, a refused answer …). */
export type ObservationRow = {
  pid: string;
  kind: string;
  cycle: string;
  keyword: string | null;
  detail: string | null;
  raw_response_id: number | null;
  observed_at: Date;
};

/** What a batch decided from its observations, before anything of it is written. */
interface BatchPlan {
  writes: EnterpriseWrite[];
  observations: ObservationRow[];
  /** The field-level differences to record, by the index of the write that made them. */
  diffs: { writeIndex: number; before: NormalizedEnterprise; after: NormalizedEnterprise }[];
  /** Each keyword's latest resolution in the batch. */
  resolutions: Map<string, { pid: string; rawResponseId: number | null; at: Date }>;
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
  const state = await lockEnterprises(sql, items);
  const resolved = await lockResolutions(sql, items);
  const stored = new Map([...state].map(([pid, cur]) => [pid, cur.versionId]));
  const plan = planBatch(items, state, resolved, summary);

  const written = await writeVersions(sql, ENTERPRISE_VERSIONS, stored, plan.writes, (w) =>
    versionColumns(sql, w.o),
  );
  await insertChildren(sql, plan.writes, written.ids);
  const outbox = await insertChanges(sql, plan, written, summary);
  // What the changes mean for the watched companies that hold the changed ones.
  outbox.push(
    ...(await relatedEvents(
      sql,
      outbox,
      new Map(plan.writes.map((w) => [w.key, { name: w.o.normalized.entName, uscc: w.o.normalized.uncid }])),
    )),
  );
  await insertRows(sql, 'enterprise_observations', plan.observations);
  await updatePointers(
    sql,
    pointerRows(state, written.currentIds, (cur) => [
      cur.lastSeenRawId === null ? '' : String(cur.lastSeenRawId),
      cur.presence,
    ]),
  );
  outbox.push(...observationEvents(plan.observations));
  await upsertResolutions(sql, plan.resolutions);
  // Last in the transaction: the outbox lock is held from here to the commit (outbox.ts).
  await appendEvents(sql, outbox);
  summary.versionIds = written.ids;
  return summary;
}

/**
 * An enterprise's row, locked, with its current version (none yet: the version's columns null),
 * whose `normalized` record is read as one.
 */
type LockedEnterprise = Pick<
  DriverRow<typeof enterprises>,
  'pid' | 'last_seen_at' | 'last_seen_raw_id' | 'presence'
> &
  LeftJoined<
    Recast<
      Pick<DriverRow<typeof enterpriseVersions>, 'id' | 'version' | 'content_hash' | 'normalized'>,
      'normalized',
      NormalizedEnterprise
    >
  >;

/** What a keyword resolved to. */
type Resolution = Pick<DriverRow<typeof keywordResolutions>, 'keyword' | 'pid'>;

/** Makes sure every enterprise of the batch has a row, locks them in PID order, reads their current state. */
async function lockEnterprises(
  sql: Sql,
  items: readonly EnterpriseObservation[],
): Promise<Map<string, Current>> {
  const firstSeen = new Map<string, Date>();
  for (const o of items) if (!firstSeen.has(o.normalized.pid)) firstSeen.set(o.normalized.pid, o.fetchedAt);
  const pids = [...firstSeen.keys()].sort();
  await insertRowsOnConflict(
    sql,
    pids.map((pid) => ({ pid, first_seen_at: firstSeen.get(pid), last_seen_at: firstSeen.get(pid) })),
  );
  const rows = await sql<LockedEnterprise[]>`
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
  return state;
}

/** What the batch's keywords resolved to before it, locked like the enterprises. */
async function lockResolutions(
  sql: Sql,
  items: readonly EnterpriseObservation[],
): Promise<Map<string, string>> {
  const keywords = [...new Set(items.flatMap((o) => (o.keyword === null ? [] : [o.keyword])))].sort();
  const resolved = new Map<string, string>();
  if (keywords.length > 0) {
    const rs = await sql<Resolution[]>`
      select keyword, pid from keyword_resolutions where keyword = any(${keywords}::text[])
      order by keyword for update`;
    for (const r of rs) resolved.set(r.keyword, r.pid);
  }
  return resolved;
}

/**
 * Decides, in landing order, what each observation does: stale, unchanged, or a new version;
 * and the observations and resolutions it records. Moves `state` (and `resolved`) along.
 */
function planBatch(
  items: readonly EnterpriseObservation[],
  state: Map<string, Current>,
  resolved: Map<string, string>,
  summary: EnterpriseApplySummary,
): BatchPlan {
  const plan: BatchPlan = { writes: [], observations: [], diffs: [], resolutions: new Map() };
  const observe = (
    pid: string,
    kind: string,
    o: { cycle: string; keyword: string | null; fetchedAt: Date; rawResponseId: number | null },
    detail: string | null = null,
  ) =>
    plan.observations.push({
      pid,
      kind,
      cycle: o.cycle,
      keyword: o.keyword,
      detail,
      raw_response_id: o.rawResponseId,
      observed_at: o.fetchedAt,
    });

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
      plan.resolutions.set(o.keyword, { pid, rawResponseId: o.rawResponseId, at: o.fetchedAt });
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
    const writeIndex = plan.writes.length;
    plan.writes.push({ key: pid, version: cur.version + 1, hash, validFrom: o.fetchedAt, o });
    if (cur.normalized === null) {
      summary.initial++;
      observe(pid, 'initial', o);
    } else {
      summary.changed++;
      plan.diffs.push({ writeIndex, before: cur.normalized, after: o.normalized });
    }
    cur.version += 1;
    cur.hash = hash;
    cur.normalized = o.normalized;
    cur.touched = true;
  }
  return plan;
}

/** The persons, shareholders and clearing members of each new version. */
async function insertChildren(sql: Sql, writes: readonly EnterpriseWrite[], ids: readonly number[]) {
  // Persons and clearing members have the same columns: a name, a position, the rest.
  const ranked = (list: readonly NormalizedPerson[]) =>
    list.map((x, k) => ({ ordinal: k + 1, name: x.name, position: x.position, extra: sql.json(x.extra) }));
  await insertChildRows(sql, 'enterprise_persons', writes, ids, ({ o }) => ranked(o.normalized.persons));
  await insertChildRows(sql, 'enterprise_shareholders', writes, ids, ({ o }) =>
    o.normalized.shareholders.map((s, k) => ({
      ordinal: k + 1,
      name: s.name,
      type: s.type,
      shareholder_pid: s.pid,
      extra: sql.json(s.extra),
    })),
  );
  await insertChildRows(sql, 'enterprise_clearing_members', writes, ids, ({ o }) =>
    ranked(o.normalized.clearingMembers),
  );
}

/** Writes one `enterprise_changes` row per field-level difference; returns their events. */
async function insertChanges(
  sql: Sql,
  plan: BatchPlan,
  written: WrittenVersions,
  summary: EnterpriseApplySummary,
): Promise<NewEvent[]> {
  const changeRows: Record<string, unknown>[] = [];
  const outbox: NewEvent[] = [];
  for (const d of plan.diffs) {
    const w = plan.writes[d.writeIndex];
    if (!w) continue;
    const versionId = written.ids[d.writeIndex] as number;
    const previousId = written.previousIds[d.writeIndex] ?? null;
    for (const c of diffEnterprises(d.before, d.after)) {
      summary.bySeverity[c.severity]++;
      outbox.push(
        changeEvent({
          ...c,
          pid: w.key,
          cycle: w.o.cycle,
          detectedAt: w.o.fetchedAt,
          rawResponseId: w.o.rawResponseId,
          versionId,
          fromVersion: previousId === null ? null : w.version - 1,
          toVersion: w.version,
        }),
      );
      changeRows.push({
        pid: w.key,
        cycle: w.o.cycle,
        version_id: versionId,
        previous_version_id: previousId,
        category: c.category,
        ...changeFacts(c),
        detected_at: w.o.fetchedAt,
      });
    }
  }
  summary.changes = changeRows.length;
  await insertRows(sql, 'enterprise_changes', changeRows);
  return outbox;
}

/**
 * Points every enterprise of the batch at its current version (a stored one or one written
 * above) and records what was seen last: `rows` are pointerRows with the last raw id and the
 * presence after them. The rows are locked and `state` started from them: its
 * last-seen values are the latest.
 */
async function updatePointers(sql: Sql, rows: string[][]): Promise<void> {
  await sql`
    update enterprises e set
      current_version_id = u.version_id::bigint,
      last_seen_at = u.last_seen_at::timestamptz,
      last_seen_raw_id = nullif(u.last_seen_raw_id, '')::bigint,
      presence = u.presence
    from (values ${sql(rows)}) as u(pid, version_id, last_seen_at, last_seen_raw_id, presence)
    where e.pid = u.pid`;
}

function observationEvents(rows: readonly ObservationRow[]): NewEvent[] {
  const events: NewEvent[] = [];
  for (const r of rows) {
    const e = observationEvent({
      pid: r.pid,
      kind: r.kind,
      cycle: r.cycle,
      keyword: r.keyword,
      detail: r.detail,
      observedAt: r.observed_at,
      rawResponseId: r.raw_response_id,
    });
    if (e) events.push(e);
  }
  return events;
}

async function upsertResolutions(sql: Sql, resolutions: BatchPlan['resolutions']): Promise<void> {
  if (resolutions.size === 0) return;
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
  const [r] = await sql<
    Pick<Resolution, 'pid'>[]
  >`select pid from keyword_resolutions where keyword = ${o.keyword}`;
  if (!r) return 0;
  return markDisappeared(sql, [{ pid: r.pid, ...o }]);
}

/** Deletes enterprise sightings up to `upToId` that a later sighting of the same PID superseded. */
export async function dropSupersededEnterpriseSightings(tx: Sql, upToId: string): Promise<number> {
  return deleteSuperseded(tx, 'enterprise_sightings', 'pid', upToId);
}

/** Writes observations as they are (a refused answer's, or those a rebuild keeps). */
export async function insertObservations(
  sql: Sql,
  rows: readonly (Omit<ObservationRow, 'raw_response_id'> & { raw_response_id: number | string | null })[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`insert into enterprise_observations ${sql(rows as ObservationRow[], 'pid', 'kind', 'cycle', 'keyword', 'detail', 'raw_response_id', 'observed_at')}`;
}

/** The enterprise tables, derived from the raw landing: what a rebuild empties before it replays. */
export const ENTERPRISE_DERIVED_TABLES = [
  'enterprise_changes',
  'enterprise_observations',
  'enterprise_persons',
  'enterprise_shareholders',
  'enterprise_clearing_members',
  'enterprise_versions',
  'enterprises',
  'keyword_resolutions',
  'enterprise_sightings',
] as const;

/** Empties the enterprise tables for a rebuild (in its transaction; it writes them all again). */
export async function emptyEnterpriseHistory(tx: Sql): Promise<void> {
  await truncateTables(tx, ENTERPRISE_DERIVED_TABLES);
}

/**
 * The tables daybook keeps (README, The data). Everything here is internal; the `analytics`
 * views (migrations/*_analytics_views.sql) are the SQL contract for users.
 */
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  bigserial,
  boolean,
  check,
  customType,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  serial,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** Bytes as received, for what text cannot hold exactly. */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });
const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'string' });
const id = (name: string) => bigint(name, { mode: 'number' });
/**
 * The export cursor (src/export/): the 64-bit id of the transaction that wrote the row
 * (`pg_current_xact_id()`). A warehouse export takes the rows of the transactions that completed
 * between two cuts (docs/export.md), so a row committed late is never skipped.
 */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });
const loadXid = () => xid8('load_xid').notNull().default(sql`pg_current_xact_id()`);

/*
 * Column groups several tables share, spread into each table in place (fresh builders per call:
 * a drizzle column belongs to one table).
 */

/** Which version of its entity a versions row is, when it was in force, and its content's hash. */
const versionSpan = () => ({
  version: integer('version').notNull(),
  validFrom: tstz('valid_from').notNull(),
  validTo: tstz('valid_to'),
  isCurrent: boolean('is_current').notNull(),
  contentHash: text('content_hash').notNull(),
});

/** What a versions row keeps besides its fields, closing with its export cursor columns. */
const versionRecord = () => ({
  /** Original text of values that could not be read (dates; an enterprise's IS_LISTED, PROVINCE). */
  unreadText: jsonb('unread_text').notNull().default({}),
  /** Fields the spec does not document, as received. */
  extra: jsonb('extra').notNull().default({}),
  /** The whole normalized record, children included: what diffs are computed from. */
  normalized: jsonb('normalized').notNull(),
  /** The transaction that wrote the version, and the one that closed it (set by a trigger). */
  loadXid: loadXid(),
  closedXid: xid8('closed_xid'),
});

/** A row of a list that belongs to one version: it goes when the version goes. */
const versionItem = (versionsId: () => AnyPgColumn) => ({
  versionId: id('version_id').notNull().references(versionsId, { onDelete: 'cascade' }),
});

/** A person of an enterprise version's list (key personnel, liquidation group). */
const personItem = (versionsId: () => AnyPgColumn) => ({
  ...versionItem(versionsId),
  ordinal: smallint('ordinal').notNull(),
  name: text('name').notNull(),
  position: text('position'),
  extra: jsonb('extra').notNull().default({}),
});

/** A sighting's view of its entity's row: version in force, first and last seen. */
const sightingState = () => ({
  versionId: id('version_id'),
  firstSeenAt: tstz('first_seen_at').notNull(),
  lastSeenAt: tstz('last_seen_at').notNull(),
  loadXid: loadXid(),
});

/** One row per job run (or inline step): what ran, when, how it ended. */
export const runs = pgTable(
  'runs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    kind: text('kind').notNull(),
    /** The enterprise cycle (Beijing date of its 03:00 refresh), when the run belongs to one. */
    cycle: date('cycle', { mode: 'string' }),
    /** The product list date, for product runs. */
    listDate: date('list_date', { mode: 'string' }),
    entity: text('entity'),
    jobId: text('job_id'),
    startedAt: tstz('started_at').notNull().defaultNow(),
    finishedAt: tstz('finished_at'),
    /** running, succeeded, failed, skipped, deferred, paused */
    outcome: text('outcome').notNull().default('running'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    counts: jsonb('counts').notNull().default({}),
    credits: integer('credits').notNull().default(0),
    /** The transaction that last changed the run (set by a trigger): the export cursor. */
    loadXid: loadXid(),
  },
  (t) => [
    index('runs_kind_started_idx').on(t.kind, t.startedAt),
    index('runs_cycle_idx').on(t.cycle),
    index('runs_load_xid_idx').on(t.loadXid),
    // A job that starts again closes its run cut short: found among the few still running.
    index('runs_running_job_idx').on(t.jobId).where(sql`${t.outcome} = 'running'`),
    // `daybook status` lists the recent failures: few among millions.
    index('runs_failed_idx').on(t.finishedAt).where(sql`${t.outcome} = 'failed'`),
  ],
);

/**
 * Every distinct answer body, stored once, keyed by the sha256 of its bytes as received: the
 * same answer fetched again (an enterprise that did not change) adds a call row to
 * `raw_responses` pointing here, not another copy of the body.
 */
export const rawBodies = pgTable(
  'raw_bodies',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** sha256 of the body as received: its bytes when `body_bytes` is kept, else its UTF-8 text. */
    sha256: bytea('sha256').notNull(),
    /** The body when it is JSON, parsed by Postgres from the text as received. */
    bodyJson: jsonb('body_json'),
    /** The body when it is not JSON (an HTML page, a truncated document), else null. */
    bodyText: text('body_text'),
    /**
     * The body's bytes as received, when its text cannot stand for them exactly: a charset other
     * than UTF-8, bytes that did not decode, or a NUL character (which Postgres text refuses).
     */
    bodyBytes: bytea('body_bytes'),
    /** When this body first landed. */
    firstLandedAt: tstz('first_landed_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('raw_bodies_sha256_key').on(t.sha256)],
);

/**
 * Every distinct set of request parameters, stored once: an enterprise watched every day is
 * queried with the same parameters every day, so each call row points here instead of repeating
 * them. Rows are written by the database itself (`daybook_raw_params`, migrations/0029), found by
 * `key`, the sha256 of the parameters' JSON text; never changed or deleted.
 */
export const rawParams = pgTable(
  'raw_params',
  {
    id: serial('id').primaryKey(),
    /** sha256 of `params::text`. */
    key: bytea('key').notNull(),
    /** The request parameters as sent (never the key, which is a header). */
    params: jsonb('params').notNull(),
  },
  (t) => [
    uniqueIndex('raw_params_key').on(t.key),
    // The product list dates landed (backfill skips them): one row per date among the keywords.
    index('raw_params_date_idx')
      .on(sql`(${t.params}->>'date')`)
      .where(sql`(${t.params}->>'date') is not null`),
  ],
);

/**
 * Every upstream call's answer, success or error, landed before anything else happens to it:
 * one narrow row per call (its own facts) pointing at its body in `raw_bodies` and at its
 * parameters in `raw_params`. The `raw_answers` view reads a call with both joined back.
 */
export const rawResponses = pgTable(
  'raw_responses',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /**
     * The run that made the call. A plain id, not a foreign key: runs are compacted into
     * `run_summaries` after DAYBOOK_BOOKKEEPING_DAYS, and the call row stays as it was landed.
     */
    runId: id('run_id'),
    operation: text('operation').notNull(),
    /** Null when no HTTP answer arrived (reset, timeout). */
    httpStatus: smallint('http_status'),
    /** The body (`raw_bodies`); null when no body arrived. */
    bodyId: id('body_id').references(() => rawBodies.id),
    /** Daybook's reading of the answer: success, or the error code. */
    outcome: text('outcome').notNull(),
    /** The enterprise cycle the call belonged to (replays use it). */
    cycle: date('cycle', { mode: 'string' }),
    /** When the answer arrived, by the clock of the process that made the call (informative only). */
    fetchedAt: tstz('fetched_at').notNull(),
    /**
     * When the answer was landed, by the database's clock: every machine agrees on it, so history
     * is ordered by it (valid_from, staleness), never by a worker's wall clock.
     */
    landedAt: tstz('landed_at').notNull().defaultNow(),
    durationMs: integer('duration_ms'),
    /** The request parameters as sent (`raw_params`). */
    paramsId: integer('params_id')
      .notNull()
      .references(() => rawParams.id),
  },
  (t) => [
    // Calls land in time order: a block range index (a few pages for millions of rows) finds the
    // calls of a time range.
    index('raw_responses_landed_brin').using('brin', t.landedAt),
    // Answers that are not successes: retention looks for errors by cycle, and for the calls
    // that still hold an error body. Few among millions.
    index('raw_responses_unsuccessful_idx').on(t.cycle, t.bodyId).where(sql`${t.outcome} <> 'success'`),
    // The product calls of a list date (backfill skips the dates landed, by `raw_params_date_idx`):
    // a few rows a day among millions.
    index('raw_responses_product_params_idx').on(t.paramsId).where(sql`${t.operation} = 'product-listing'`),
  ],
);

/** One row per enterprise (PID) ever seen: the pointer to its current version. */
export const enterprises = pgTable('enterprises', {
  pid: text('pid').primaryKey(),
  currentVersionId: id('current_version_id'),
  firstSeenAt: tstz('first_seen_at').notNull(),
  /** The fetch time of the latest payload applied (a payload older than this is stale). */
  lastSeenAt: tstz('last_seen_at').notNull(),
  /**
   * The raw answer landed last among those applied: with last_seen_at (milliseconds) it orders
   * answers landed in the same millisecond, by the landing sequence.
   */
  lastSeenRawId: id('last_seen_raw_id'),
  /** present, or disappeared (found before, now not_found); history is never deleted. */
  presence: text('presence').notNull().default('present'),
});

/** SCD type 2 versions of an enterprise; a new row only when the content hash changes. */
export const enterpriseVersions = pgTable(
  'enterprise_versions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    pid: text('pid')
      .notNull()
      .references(() => enterprises.pid),
    ...versionSpan(),
    cycle: date('cycle', { mode: 'string' }).notNull(),
    /** Lineage: the raw answer this version was read from. */
    rawResponseId: id('raw_response_id').references(() => rawResponses.id),
    entName: text('ent_name').notNull(),
    historyName: text('history_name'),
    isListed: boolean('is_listed'),
    legalPerson: text('legal_person'),
    legalPersonDesc: text('legal_person_desc'),
    esDate: date('es_date', { mode: 'string' }),
    sconForm: text('sconform'),
    regNo: text('reg_no'),
    uncid: text('uncid'),
    entTypeCode: text('ent_type_code'),
    entType: text('ent_type'),
    regCap: numeric('reg_cap'),
    regCapText: text('reg_cap_text'),
    capitalText: text('capital_text'),
    capitalUnit: text('capital_unit'),
    capitalCurrency: text('capital_currency'),
    capitalAmount: numeric('capital_amount'),
    province: smallint('province'),
    opFrom: date('op_from', { mode: 'string' }),
    operatingTo: date('operating_to', { mode: 'string' }),
    operatingPerpetual: boolean('operating_perpetual').notNull(),
    operatingToText: text('operating_to_text'),
    regOrg: text('reg_org'),
    apprDate: date('appr_date', { mode: 'string' }),
    revokeDate: date('revoke_date', { mode: 'string' }),
    revokeReason: text('revoke_reason'),
    entStatus: text('ent_status'),
    opLoc: text('op_loc'),
    opScope: text('op_scope'),
    participants: text('participants'),
    participantsCount: integer('participants_count'),
    industryPhy: text('industry_phy'),
    industryBig: text('industry_big'),
    industryMiddle: text('industry_middle'),
    ...versionRecord(),
  },
  (t) => [
    uniqueIndex('enterprise_versions_pid_version_key').on(t.pid, t.version),
    uniqueIndex('enterprise_versions_current_key').on(t.pid).where(sql`${t.isCurrent}`),
    index('enterprise_versions_uncid_idx').on(t.uncid),
    index('enterprise_versions_name_idx').on(t.entName),
    /** Same-name links (analytics.related_companies): the legal representative by name. */
    index('enterprise_versions_legal_person_idx').on(t.legalPerson),
    index('enterprise_versions_raw_idx').on(t.rawResponseId),
    index('enterprise_versions_load_xid_idx').on(t.loadXid),
    index('enterprise_versions_closed_xid_idx').on(t.closedXid).where(sql`${t.closedXid} is not null`),
  ],
);

/** Key personnel of one version. */
export const enterprisePersons = pgTable(
  'enterprise_persons',
  personItem(() => enterpriseVersions.id),
  (t) => [primaryKey({ columns: [t.versionId, t.ordinal] }), index('enterprise_persons_name_idx').on(t.name)],
);

/** Shareholders of one version; `shareholder_pid` only for enterprise shareholders. */
export const enterpriseShareholders = pgTable(
  'enterprise_shareholders',
  {
    ...versionItem(() => enterpriseVersions.id),
    ordinal: smallint('ordinal').notNull(),
    name: text('name'),
    type: text('type'),
    shareholderPid: text('shareholder_pid'),
    extra: jsonb('extra').notNull().default({}),
  },
  (t) => [
    primaryKey({ columns: [t.versionId, t.ordinal] }),
    index('enterprise_shareholders_pid_idx').on(t.shareholderPid),
    /** Same-name links (analytics.related_companies): a shareholder by name. */
    index('enterprise_shareholders_name_idx').on(t.name),
  ],
);

/** Liquidation group members of one version. */
export const enterpriseClearingMembers = pgTable(
  'enterprise_clearing_members',
  personItem(() => enterpriseVersions.id),
  (t) => [
    primaryKey({ columns: [t.versionId, t.ordinal] }),
    index('enterprise_clearing_members_name_idx').on(t.name),
  ],
);

/** One row per field-level change between consecutive versions. */
export const enterpriseChanges = pgTable(
  'enterprise_changes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    pid: text('pid')
      .notNull()
      .references(() => enterprises.pid),
    cycle: date('cycle', { mode: 'string' }).notNull(),
    versionId: id('version_id')
      .notNull()
      .references(() => enterpriseVersions.id),
    previousVersionId: id('previous_version_id')
      .notNull()
      .references(() => enterpriseVersions.id),
    category: text('category').notNull(),
    field: text('field').notNull(),
    kind: text('kind').notNull(),
    before: text('before'),
    after: text('after'),
    detail: text('detail'),
    severity: text('severity').notNull(),
    detectedAt: tstz('detected_at').notNull(),
    loadXid: loadXid(),
  },
  (t) => [
    index('enterprise_changes_pid_idx').on(t.pid, t.detectedAt),
    index('enterprise_changes_cycle_idx').on(t.cycle, t.severity),
    index('enterprise_changes_load_xid_idx').on(t.loadXid),
  ],
);

/**
 * Events about an enterprise that are not field changes: its initial observation, disappearing
 * (not_found after being found), reappearing, a stale payload ignored, a keyword resolving to
 * another PID, an answer refused because its credit code was not the one the watch entry expects
 * (`resolution_mismatch`). The PID of a refused answer's enterprise has no history (it was never
 * applied), so `pid` references no `enterprises` row.
 */
export const enterpriseObservations = pgTable(
  'enterprise_observations',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    pid: text('pid').notNull(),
    kind: text('kind').notNull(),
    cycle: date('cycle', { mode: 'string' }).notNull(),
    keyword: text('keyword'),
    detail: text('detail'),
    rawResponseId: id('raw_response_id').references(() => rawResponses.id),
    observedAt: tstz('observed_at').notNull(),
    loadXid: loadXid(),
  },
  (t) => [
    index('enterprise_observations_pid_idx').on(t.pid, t.observedAt),
    index('enterprise_observations_load_xid_idx').on(t.loadXid),
  ],
);

/** One row per product (product_id). */
export const products = pgTable('products', {
  productId: text('product_id').primaryKey(),
  currentVersionId: id('current_version_id'),
  firstSeenAt: tstz('first_seen_at').notNull(),
  lastSeenAt: tstz('last_seen_at').notNull(),
});

/** SCD type 2 versions of a product's content (votes and comments live elsewhere). */
export const productVersions = pgTable(
  'product_versions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    productId: text('product_id')
      .notNull()
      .references(() => products.productId),
    ...versionSpan(),
    rawResponseId: id('raw_response_id').references(() => rawResponses.id),
    recordId: text('record_id').notNull(),
    name: text('name').notNull(),
    tagline: text('tagline'),
    description: text('description'),
    url: text('url'),
    createdAt: tstz('created_at'),
    featuredAt: tstz('featured_at'),
    thumbnailUrl: text('thumbnail_url'),
    thumbnailType: text('thumbnail_type'),
    ...versionRecord(),
  },
  (t) => [
    uniqueIndex('product_versions_pid_version_key').on(t.productId, t.version),
    uniqueIndex('product_versions_current_key').on(t.productId).where(sql`${t.isCurrent}`),
    index('product_versions_name_idx').on(t.name),
    index('product_versions_load_xid_idx').on(t.loadXid),
    index('product_versions_closed_xid_idx').on(t.closedXid).where(sql`${t.closedXid} is not null`),
  ],
);

export const productTopics = pgTable(
  'product_topics',
  {
    ...versionItem(() => productVersions.id),
    topic: text('topic').notNull(),
  },
  (t) => [primaryKey({ columns: [t.versionId, t.topic] }), index('product_topics_topic_idx').on(t.topic)],
);

export const productMedia = pgTable(
  'product_media',
  {
    ...versionItem(() => productVersions.id),
    position: smallint('position').notNull(),
    url: text('url').notNull(),
    type: text('type'),
    videoUrl: text('video_url'),
    extra: jsonb('extra').notNull().default({}),
  },
  (t) => [primaryKey({ columns: [t.versionId, t.position] })],
);

export const productLinks = pgTable(
  'product_links',
  {
    ...versionItem(() => productVersions.id),
    position: smallint('position').notNull(),
    url: text('url').notNull(),
    type: text('type'),
    extra: jsonb('extra').notNull().default({}),
  },
  (t) => [primaryKey({ columns: [t.versionId, t.position] })],
);

/** Comments, deduplicated across pulls by (product, created_at, body). */
export const productComments = pgTable(
  'product_comments',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    productId: text('product_id')
      .notNull()
      .references(() => products.productId),
    dedupKey: text('dedup_key').notNull(),
    body: text('body').notNull(),
    createdAt: tstz('created_at'),
    createdAtText: text('created_at_text'),
    firstSeenAt: tstz('first_seen_at').notNull(),
    rawResponseId: id('raw_response_id').references(() => rawResponses.id),
    loadXid: loadXid(),
  },
  (t) => [
    uniqueIndex('product_comments_dedup_key').on(t.dedupKey),
    index('product_comments_product_idx').on(t.productId, t.createdAt),
    index('product_comments_load_xid_idx').on(t.loadXid),
  ],
);

/** One row per product per pull of a day's list: vote trajectories. */
export const trendingSnapshots = pgTable(
  'trending_snapshots',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    listDate: date('list_date', { mode: 'string' }).notNull(),
    position: smallint('position').notNull(),
    productId: text('product_id')
      .notNull()
      .references(() => products.productId),
    votesCount: integer('votes_count'),
    commentsCount: integer('comments_count'),
    fetchedAt: tstz('fetched_at').notNull(),
    rawResponseId: id('raw_response_id')
      .notNull()
      .references(() => rawResponses.id),
    loadXid: loadXid(),
  },
  (t) => [
    uniqueIndex('trending_snapshots_pull_position_key').on(t.rawResponseId, t.position),
    index('trending_snapshots_date_idx').on(t.listDate, t.fetchedAt),
    index('trending_snapshots_product_idx').on(t.productId, t.fetchedAt),
    index('trending_snapshots_load_xid_idx').on(t.loadXid),
  ],
);

/**
 * What a ledger entry says in words, stored once: the operation, the enterprise billed for, the
 * keyword queried and the remark (how the amount was known). An enterprise watched day after day
 * is billed for the same words every day, so each entry points here instead of repeating them.
 * Rows are written by the database itself (`daybook_ledger_subject`, migrations/0029), found by
 * `key`, the sha256 of the four texts; never changed or deleted.
 */
export const ledgerSubjects = pgTable(
  'ledger_subjects',
  {
    id: serial('id').primaryKey(),
    /** sha256 of the JSON array [operation, pid, keyword, remark]. */
    key: bytea('key').notNull(),
    operation: text('operation').notNull(),
    pid: text('pid'),
    keyword: text('keyword'),
    remark: text('remark'),
  },
  (t) => [uniqueIndex('ledger_subjects_key').on(t.key)],
);

/**
 * One row per billed upstream call: what the account actually spent. Its words are in
 * `ledger_subjects`; the `credit_ledger` view (migrations/0029) joins them back, one row per
 * entry with every column of the ledger, and is what everything reads. Fixed-width columns come
 * first, so a row carries no padding.
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** The run that made the call (a plain id: runs are compacted, the ledger is kept forever). */
    runId: id('run_id'),
    /** The answer billed; null for a presumed call, whose answer never landed. */
    rawResponseId: id('raw_response_id').references(() => rawResponses.id),
    billedAt: tstz('billed_at').notNull(),
    /** The watch entry and the claim (fence) of the enterprise call: one row per call. */
    watchId: id('watch_id'),
    callFence: id('call_fence'),
    /** The transaction that wrote or last changed the entry (set by a trigger): the export cursor. */
    loadXid: loadXid(),
    cycle: date('cycle', { mode: 'string' }).notNull(),
    /** Its operation, enterprise, keyword and remark. */
    subjectId: integer('subject_id')
      .notNull()
      .references(() => ledgerSubjects.id),
    /**
     * What the call cost. Null only for a product call while `DAYBOOK_PRODUCT_CREDITS` is unset:
     * the upstream bills every call and documents no amount for that operation (an unpriced call).
     */
    credits: integer('credits'),
    /**
     * booked: the upstream answered and billed (the amount it stated, or the configured cost when
     * it stated none, said in the remark); presumed: the call was sent and its outcome never became
     * known (the process died), so its reserved credits count as spent until an answer proves
     * otherwise; unconfirmed: the request was sent and no complete answer came (a timeout, a
     * connection cut after sending), so the upstream may have billed it: counted as spent, and a
     * later answer of another call does not confirm it.
     */
    status: text('status').notNull().default('booked'),
  },
  (t) => [
    index('ledger_entries_load_xid_idx').on(t.loadXid),
    uniqueIndex('ledger_entries_raw_key').on(t.rawResponseId),
    // One row per enterprise call (a product call has neither watch entry nor fence: nulls are
    // distinct); it also serves every read by cycle.
    uniqueIndex('ledger_entries_cycle_call_key').on(t.cycle, t.watchId, t.callFence),
    check('ledger_entries_status_check', sql`${t.status} in ('booked', 'presumed', 'unconfirmed')`),
  ],
);

/**
 * The booked enterprise entries of compacted cycles (migrations/0032): once a cycle is older than
 * DAYBOOK_BOOKKEEPING_DAYS its claims are gone, no call of it can be settled again, and the
 * compaction moves each booked entry of an enterprise call from `ledger_entries` here, with its
 * id, values and load_xid as they were. No unique key to keep (the entry was unique when it was
 * written; nothing writes a compacted cycle again), no lookup by id or answer: one narrow row.
 * `credit_ledger` reads both tables. Never changed or deleted.
 */
export const ledgerCompacted = pgTable(
  'ledger_compacted',
  {
    id: bigint('id', { mode: 'number' }).notNull(),
    runId: bigint('run_id', { mode: 'number' }).notNull(),
    rawResponseId: bigint('raw_response_id', { mode: 'number' }).notNull(),
    billedAt: tstz('billed_at').notNull(),
    /** The transaction that wrote the entry in `ledger_entries`, kept: the export's cursor. */
    loadXid: xid8('load_xid').notNull(),
    cycle: date('cycle', { mode: 'string' }).notNull(),
    watchId: integer('watch_id').notNull(),
    subjectId: integer('subject_id')
      .notNull()
      .references(() => ledgerSubjects.id),
    /** The claim's fence (a few per entry and cycle) and the credits (a few per call): two bytes each. */
    callFence: smallint('call_fence').notNull(),
    credits: smallint('credits').notNull(),
  },
  (t) => [
    index('ledger_compacted_load_xid_idx').on(t.loadXid),
    // Rows arrive a cycle at a time, in cycle order: a block range index finds a cycle's rows.
    index('ledger_compacted_cycle_brin').using('brin', t.cycle),
  ],
);

/** The enterprises to re-query: a keyword, its priority, and what the last refresh found. */
export const watchlist = pgTable(
  'watchlist',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** The name keyword as the user gave it (trimmed). */
    keyword: text('keyword').notNull(),
    /** NFKC, whitespace-collapsed, lower-cased keyword: duplicates are the same entry. */
    keywordKey: text('keyword_key').notNull(),
    /** Higher first. */
    priority: integer('priority').notNull().default(0),
    active: boolean('active').notNull().default(true),
    /** The PID the keyword resolved to on its last successful refresh. */
    pid: text('pid'),
    /** When the user (or a holder's refresh) last started to watch it: watched again, added again. */
    addedAt: tstz('added_at').notNull().defaultNow(),
    lastRefreshedAt: tstz('last_refreshed_at'),
    /** The cycle of the last successful refresh (the staleness bound counts cycles from it). */
    refreshedCycle: date('refreshed_cycle', { mode: 'string' }),
    lastCycle: date('last_cycle', { mode: 'string' }),
    /** success, or the error code of the last attempt. */
    lastOutcome: text('last_outcome'),
    lastError: text('last_error'),
    /**
     * The unified social credit code the keyword must resolve to (valid, normalized: src/watch/uscc.ts),
     * or null. An answer carrying another code is landed and booked but not applied to history.
     */
    uscc: text('uscc'),
    /** Set by `--pin` while `uscc` is null: the code of the next successful refresh becomes `uscc`. */
    pinUscc: boolean('pin_uscc').notNull().default(false),
    /**
     * Set when an answer was refused for carrying another code than `uscc`: the name and code it
     * resolved to, for `watch list`. Cleared by an accepted answer or a new expected code.
     */
    resolutionMismatch: text('resolution_mismatch'),
    /**
     * When the entry is next due for a refresh (src/plan/due.ts): its last refresh plus an
     * interval from its estimated change rate and weight, within the staleness bound. Null until
     * its first fetch.
     */
    dueAt: tstz('due_at'),
    /** Estimated changes per day (posterior mode over its observations and its cohort's prior). */
    changeRate: doublePrecision('change_rate'),
    /** Weight of a change of this firm, from the severity of its past changes (1 to 3). */
    changeWeight: doublePrecision('change_weight').notNull().default(1),
    /** Its observations: counts of intervals by length, changed or not (src/plan/model.ts). */
    changeHistory: jsonb('change_history'),
    /** Its cohort: status|type|industry|capital band of its current version. */
    changeCohort: text('change_cohort'),
    /** Cycles it is refreshed every cycle after a high-severity change. */
    boostLeft: smallint('boost_left').notNull().default(0),
    /**
     * `watch add --with-shareholders N`: how many levels of its enterprise shareholders are
     * watched with it (0 to 3; src/watch/related.ts keeps them in `watch_relations`).
     */
    shareholderDepth: smallint('shareholder_depth').notNull().default(0),
    /**
     * Whether the user watches the entry (false: it is watched only as a shareholder of a watched
     * company, and goes when no watched company holds it any more).
     */
    direct: boolean('direct').notNull().default(true),
    /**
     * The PID the keyword must resolve to: a shareholder's, as its holder's record gives it. An
     * answer about another PID is landed and booked but not applied to history.
     */
    expectedPid: text('expected_pid'),
  },
  (t) => [
    uniqueIndex('watchlist_keyword_key').on(t.keywordKey),
    index('watchlist_pid_idx').on(t.pid),
    /** The owed entries of a priority: refreshed longest ago, before the staleness bound. */
    index('watchlist_owed_idx')
      .on(t.priority.desc().nullsFirst(), t.refreshedCycle.asc().nullsFirst(), t.id.asc())
      .where(sql`${t.active}`),
    /**
     * The planner's order (jobs/plan.ts): priority, then due time (never fetched first). The head
     * of it is an index scan, so a cycle's plan reads only the entries it can afford.
     */
    index('watchlist_due_order_idx')
      .on(t.priority.desc().nullsFirst(), t.dueAt.asc().nullsFirst(), t.id.asc())
      .where(sql`${t.active}`),
    /** The entries added after a plan (src/plan/decide.ts newSincePlan), asked every minute. */
    index('watchlist_added_at_idx').on(t.addedAt),
    index('watchlist_expected_pid_idx').on(t.expectedPid).where(sql`${t.expectedPid} is not null`),
    check('watchlist_shareholder_depth_check', sql`${t.shareholderDepth} between 0 and 3`),
  ],
);

/**
 * Why a shareholder is watched: one row per watched company that asked for its shareholders
 * (`root_id`, with `shareholder_depth` > 0) and shareholder it reaches (`entry_id`), with the
 * shortest chain of holdings between them. Rewritten by src/watch/related.ts after each refresh
 * of a company on a chain; an entry watched only through rows here goes when its last row does.
 */
export const watchRelations = pgTable(
  'watch_relations',
  {
    rootId: id('root_id')
      .notNull()
      .references(() => watchlist.id),
    entryId: id('entry_id')
      .notNull()
      .references(() => watchlist.id),
    /** 1: a shareholder of the root; 2: a shareholder of one; at most 3. */
    level: smallint('level').notNull(),
    /** The PIDs from the root's to the entry's, both included. */
    pathPids: text('path_pids').array().notNull(),
    /** The names along the same chain (as each holder's record names its shareholder). */
    pathNames: text('path_names').array().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.rootId, t.entryId] }),
    index('watch_relations_entry_idx').on(t.entryId),
    check('watch_relations_level_check', sql`${t.level} between 1 and 3`),
  ],
);

/**
 * The prior change rate of each cohort level (src/plan/estimate.ts `cohortPriors`), pooled from
 * the observations of its watch entries; refreshed by each plan.
 */
export const changeCohorts = pgTable('change_cohorts', {
  cohort: text('cohort').primaryKey(),
  entries: integer('entries').notNull(),
  /** Changes per day. */
  rate: doublePrecision('rate').notNull(),
  /** Days observed in it. */
  days: doublePrecision('days').notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});

/**
 * The planner's scale and model (one row): the interval of an entry is scale / √(weight × rate)
 * days, set by each plan so that the watchlist's refreshes fill the cycle's capacity.
 */
export const plannerState = pgTable('planner_state', {
  singleton: boolean('singleton').primaryKey().default(true),
  /** Null: not calibrated yet; 'Infinity' when not even the staleness bound fits. */
  scale: doublePrecision('scale'),
  cycle: date('cycle', { mode: 'string' }),
  /** Entries a cycle can take, and active entries, when it was set. */
  capacity: integer('capacity').notNull().default(0),
  entries: integer('entries').notNull().default(0),
  /**
   * What the last plan learned from the whole watchlist (src/plan/due.ts PlannerModel: the
   * spread of rates, how far intervals are pulled to equal, the registry dates' weight, the hot
   * factor, the longest interval); null before the first plan.
   */
  model: jsonb('model'),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});

/**
 * One row per (cycle, watch entry) that was planned: the claim on buying it. Every transition is
 * a named function in src/purchase/fetches.ts; nothing else writes this table.
 */
export const cycleFetches = pgTable(
  'cycle_fetches',
  {
    cycle: date('cycle', { mode: 'string' }).notNull(),
    watchId: id('watch_id')
      .notNull()
      .references(() => watchlist.id, { onDelete: 'cascade' }),
    /** planned, deferred, skipped, fetching, retrying, succeeded, duplicate, failed */
    status: text('status').notNull(),
    /** Who holds the claim (a process and job), and until when; a lapsed lease may be taken over. */
    holder: text('holder'),
    leaseUntil: tstz('lease_until'),
    /** Raised by every claim: a holder whose fence is no longer the row's has lost the claim. */
    fence: id('fence').notNull().default(0),
    /** The fence of a call sent and not yet settled (its outcome unknown until it is). */
    callFence: id('call_fence'),
    callStartedAt: tstz('call_started_at'),
    pid: text('pid'),
    attempts: integer('attempts').notNull().default(0),
    creditsReserved: integer('credits_reserved').notNull().default(0),
    creditsBilled: integer('credits_billed').notNull().default(0),
    rawResponseId: id('raw_response_id').references(() => rawResponses.id),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.cycle, t.watchId] }),
    index('cycle_fetches_status_idx').on(t.cycle, t.status),
    uniqueIndex('cycle_fetches_pid_once_key').on(t.cycle, t.pid).where(sql`${t.status} = 'succeeded'`),
    check(
      'cycle_fetches_status_check',
      sql`${t.status} in ('planned', 'deferred', 'skipped', 'fetching', 'retrying', 'succeeded', 'duplicate', 'failed')`,
    ),
  ],
);

/**
 * Answers refused because the enterprise they name carries another unified social credit code
 * than its watch entry expected (`watchlist.uscc` at the time): one row per refused answer, with
 * the code expected then. Not derived from the raw landing (the expectation was the watch
 * entry's, and may have changed since), so `daybook rebuild` keeps it and refuses the same
 * answers again.
 */
export const resolutionMismatches = pgTable(
  'resolution_mismatches',
  {
    rawResponseId: id('raw_response_id')
      .primaryKey()
      .references(() => rawResponses.id),
    /** The watch entry (kept when it goes: the decision outlives it). */
    watchId: id('watch_id').references(() => watchlist.id, { onDelete: 'set null' }),
    cycle: date('cycle', { mode: 'string' }).notNull(),
    keyword: text('keyword').notNull(),
    /** The code the watch entry expected when the answer was refused (null: it expected a PID only). */
    expectedUscc: text('expected_uscc'),
    /** The PID the watch entry expected when the answer was refused (a watched shareholder's). */
    expectedPid: text('expected_pid'),
    /** What the answer carried (null: no UNCID at all). */
    foundUscc: text('found_uscc'),
    foundName: text('found_name'),
    foundPid: text('found_pid'),
    decidedAt: tstz('decided_at').notNull().defaultNow(),
  },
  (t) => [index('resolution_mismatches_watch_idx').on(t.watchId)],
);

/**
 * What each keyword last resolved to (the PID of its latest applied answer). Derived from the raw
 * landing like the history tables, so a rebuild re-derives `resolution_changed` and
 * `disappeared` exactly as live ingestion decided them.
 */
export const keywordResolutions = pgTable('keyword_resolutions', {
  keyword: text('keyword').primaryKey(),
  pid: text('pid').notNull(),
  rawResponseId: id('raw_response_id').references(() => rawResponses.id),
  resolvedAt: tstz('resolved_at').notNull(),
});

/**
 * The rate limiter every daybook process shares (src/purchase/limiter.ts): per operation, the
 * start times of the calls admitted in the current window and a block set by a refusal, both
 * by the database's clock.
 */
export const rateLimits = pgTable('rate_limits', {
  operation: text('operation').primaryKey(),
  calls: timestamp('calls', { withTimezone: true, mode: 'string' }).array().notNull().default(sql`'{}'`),
  blockedUntil: tstz('blocked_until'),
  /** Rate-limit refusals in a row, by any process; an answer resets it. */
  refusals: integer('refusals').notNull().default(0),
});

/** The credit budget of a cycle: reservations are taken atomically against it. */
export const cycleBudgets = pgTable('cycle_budgets', {
  cycle: date('cycle', { mode: 'string' }).primaryKey(),
  budget: integer('budget').notNull(),
  /** Credits held by calls in flight. */
  reserved: integer('reserved').notNull().default(0),
  /** Credits actually billed (the ledger's sum for the cycle). */
  spent: integer('spent').notNull().default(0),
  /** Set by insufficient_credits or a refusing upstream; cleared by `daybook resume`. */
  pausedAt: tstz('paused_at'),
  pausedReason: text('paused_reason'),
});

/**
 * Format drift found in one landed answer: a field the spec does not document (`unknown_field`),
 * a documented field that was absent (`missing_field`), or a documented field in another type or
 * format (`type_variant`). Keyed by the answer, so recording it twice counts it once.
 */
export const rawResponseDrift = pgTable(
  'raw_response_drift',
  {
    rawResponseId: id('raw_response_id')
      .notNull()
      .references(() => rawResponses.id),
    operation: text('operation').notNull(),
    /** The field's path: `REGCAP`, `PERSONS[].NAME`, `$.metadata.usage.credits` for the envelope. */
    field: text('field').notNull(),
    kind: text('kind').notNull(),
    /** The JSON type or format seen (`string`, `YYYY-MM-DDTHH:MM:SS`); `absent` when missing. */
    seen: text('seen').notNull(),
    /** The documented type or format; `undocumented` for an unknown field. */
    expected: text('expected').notNull(),
    /** How many records of the answer showed it (a list answer holds several products). */
    records: integer('records').notNull(),
    /** One value as received, cut to 200 characters; null when missing. */
    example: text('example'),
    fetchedAt: tstz('fetched_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.rawResponseId, t.field, t.kind, t.seen] }),
    index('raw_response_drift_field_idx').on(t.operation, t.field),
  ],
);

/** The drift daybook has seen, per operation, field, kind and shape: counts, first and last seen. */
export const formatDrift = pgTable(
  'format_drift',
  {
    operation: text('operation').notNull(),
    field: text('field').notNull(),
    kind: text('kind').notNull(),
    seen: text('seen').notNull(),
    expected: text('expected').notNull(),
    /** Answers that showed it. */
    responses: integer('responses').notNull(),
    /** Records that showed it, over all those answers. */
    records: integer('records').notNull(),
    firstSeenAt: tstz('first_seen_at').notNull(),
    lastSeenAt: tstz('last_seen_at').notNull(),
    firstRawResponseId: id('first_raw_response_id').references(() => rawResponses.id),
    lastRawResponseId: id('last_raw_response_id').references(() => rawResponses.id),
    /** A value from the latest answer that showed it. */
    example: text('example'),
  },
  (t) => [primaryKey({ columns: [t.operation, t.field, t.kind, t.seen] })],
);

/**
 * The event outbox (src/events/): append-only, one row per change, company event and
 * operational event, written in the same transaction as what it reports. `seq` increases in
 * commit order (writers take one transaction-level lock from their insert to their commit), with
 * gaps where a transaction rolled back; readers page by it (`daybook events --after N`).
 */
export const events = pgTable(
  'events',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    id: text('id').notNull().default(sql`'evt_' || replace(gen_random_uuid()::text, '-', '')`),
    type: text('type').notNull(),
    severity: text('severity').notNull(),
    pid: text('pid'),
    name: text('name'),
    companySeq: integer('company_seq'),
    cycle: date('cycle', { mode: 'string' }),
    detectedAt: tstz('detected_at').notNull(),
    effectiveDate: date('effective_date', { mode: 'string' }),
    rawResponseId: id('raw_response_id'),
    data: jsonb('data').notNull(),
    createdAt: tstz('created_at').notNull().defaultNow(),
    loadXid: loadXid(),
  },
  (t) => [
    uniqueIndex('events_id_key').on(t.id),
    uniqueIndex('events_pid_company_seq_key').on(t.pid, t.companySeq),
    index('events_type_seq_idx').on(t.type, t.seq),
    index('events_cycle_idx').on(t.cycle),
    index('events_load_xid_idx').on(t.loadXid),
    check('events_severity_check', sql`${t.severity} in ('high', 'medium', 'low')`),
  ],
);

/**
 * Webhook subscriptions (src/delivery/). `secret` (whsec_…) signs deliveries; during a rotation
 * `previous_secret` signs too until `previous_secret_until`. Neither is in any analytics view, nor
 * is `signing_secret` (a chat vendor's).
 * `cursor_seq`: the events up to it were considered for this subscription.
 */
export const subscriptions = pgTable(
  'subscriptions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    url: text('url').notNull(),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretUntil: tstz('previous_secret_until'),
    types: text('types').array().notNull().default(sql`'{}'::text[]`),
    minSeverity: text('min_severity').notNull().default('low'),
    pids: text('pids').array().notNull().default(sql`'{}'::text[]`),
    digestOnly: boolean('digest_only').notNull().default(false),
    format: text('format').notNull().default('standard'),
    /** The language of a chat or mail message: zh or en. */
    lang: text('lang').notNull().default('zh'),
    /** A Feishu or DingTalk bot's signing secret (the vendor's, not ours); never listed. */
    signingSecret: text('signing_secret'),
    /** A rate-limited chat bot's messages within its vendor's window (limits.ts: DingTalk, WeCom, Feishu). */
    recentSends: tstz('recent_sends').array().notNull().default(sql`'{}'::timestamptz[]`),
    allowPrivate: boolean('allow_private').notNull().default(false),
    state: text('state').notNull().default('active'),
    disabledReason: text('disabled_reason'),
    failingSince: tstz('failing_since'),
    cursorSeq: id('cursor_seq').notNull().default(0),
    createdAt: tstz('created_at').notNull().defaultNow(),
  },
  (t) => [
    check('subscriptions_state_check', sql`${t.state} in ('active', 'paused', 'disabled')`),
    check(
      'subscriptions_format_check',
      sql`${t.format} in ('standard', 'slack', 'feishu', 'dingtalk', 'wecom', 'teams', 'email')`,
    ),
    check('subscriptions_lang_check', sql`${t.lang} in ('zh', 'en')`),
    check('subscriptions_severity_check', sql`${t.minSeverity} in ('high', 'medium', 'low')`),
  ],
);

/** One event to deliver to one subscription, and where its delivery stands. */
export const deliveryQueue = pgTable(
  'delivery_queue',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    subscriptionId: id('subscription_id')
      .notNull()
      .references(() => subscriptions.id, { onDelete: 'cascade' }),
    eventSeq: id('event_seq').notNull(),
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: tstz('next_attempt_at').notNull().defaultNow(),
    holder: text('holder'),
    leaseUntil: tstz('lease_until'),
    lastStatus: integer('last_status'),
    lastError: text('last_error'),
    createdAt: tstz('created_at').notNull().defaultNow(),
    deliveredAt: tstz('delivered_at'),
  },
  (t) => [
    uniqueIndex('delivery_queue_subscription_event_key').on(t.subscriptionId, t.eventSeq),
    // Due work per subscription: a pending delivery is due at next_attempt_at, a claimed one when
    // its lease ends (next_attempt_at is set to it), so one index serves both.
    index('delivery_queue_due_idx')
      .on(t.subscriptionId, t.nextAttemptAt, t.id)
      .where(sql`${t.state} in ('pending', 'delivering')`),
    check('delivery_queue_state_check', sql`${t.state} in ('pending', 'delivering', 'succeeded', 'failed')`),
  ],
);

/** Every delivery attempt: when, how long, what the endpoint answered (at most 1 KB of it). */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: id('delivery_id')
      .notNull()
      .references(() => deliveryQueue.id, { onDelete: 'cascade' }),
    subscriptionId: id('subscription_id').notNull(),
    eventSeq: id('event_seq').notNull(),
    attempt: integer('attempt').notNull(),
    attemptedAt: tstz('attempted_at').notNull(),
    latencyMs: integer('latency_ms').notNull(),
    httpStatus: integer('http_status'),
    outcome: text('outcome').notNull(),
    error: text('error'),
    response: text('response'),
  },
  (t) => [
    index('webhook_deliveries_subscription_idx').on(t.subscriptionId, t.id),
    index('webhook_deliveries_delivery_idx').on(t.deliveryId),
  ],
);

/**
 * Every state an `enterprises` row took (written by a trigger on it): presence, current version
 * and when it was first and last seen. The export's `enterprise_sightings`; a warehouse takes the
 * latest per PID (highest id) as the enterprise's state. Derived, so a rebuild writes it again.
 */
export const enterpriseSightings = pgTable(
  'enterprise_sightings',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    pid: text('pid').notNull(),
    presence: text('presence').notNull(),
    ...sightingState(),
  },
  (t) => [index('enterprise_sightings_load_xid_idx').on(t.loadXid)],
);

/** Every state a `products` row took (written by a trigger on it), as for enterprises. */
export const productSightings = pgTable(
  'product_sightings',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    productId: text('product_id').notNull(),
    ...sightingState(),
  },
  (t) => [index('product_sightings_load_xid_idx').on(t.loadXid)],
);

/**
 * The number of rebuilds so far (one row): a rebuild writes every derived row again, so the
 * export after it is a full one.
 */
export const rebuildGeneration = pgTable('rebuild_generation', {
  singleton: boolean('singleton').primaryKey().default(true),
  generation: integer('generation').notNull().default(0),
});

/**
 * The export ledger (src/export/): one row per load package written to a destination folder.
 * A package is complete once its row says so and its folder holds its manifest.
 */
export const exports = pgTable(
  'exports',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** The destination folder, as an absolute path. */
    destination: text('destination').notNull(),
    /** 1, 2, 3… per destination: the order a loader applies packages in. */
    loadNo: integer('load_no').notNull(),
    loadId: text('load_id').notNull(),
    previousLoadId: text('previous_load_id'),
    /** incremental: what is new since the previous package; full: everything up to the cut. */
    kind: text('kind').notNull(),
    format: text('format').notNull(),
    tables: text('tables').array().notNull(),
    /**
     * The cursor range, as two transaction snapshots (`pg_snapshot` text): the package holds the
     * rows of the transactions the second sees and the first does not.
     */
    fromSnapshot: text('from_snapshot').notNull(),
    toSnapshot: text('to_snapshot').notNull(),
    generation: integer('generation').notNull(),
    schemaVersion: integer('schema_version').notNull(),
    /** writing (claimed by `holder` until `lease_until`), complete */
    state: text('state').notNull(),
    holder: text('holder'),
    leaseUntil: tstz('lease_until'),
    rows: bigint('rows', { mode: 'number' }),
    bytes: bigint('bytes', { mode: 'number' }),
    /** The manifest as written. */
    manifest: jsonb('manifest'),
    startedAt: tstz('started_at').notNull().defaultNow(),
    completedAt: tstz('completed_at'),
  },
  (t) => [
    uniqueIndex('exports_destination_load_key').on(t.destination, t.loadNo),
    check('exports_state_check', sql`${t.state} in ('writing', 'complete')`),
    check('exports_kind_check', sql`${t.kind} in ('incremental', 'full')`),
  ],
);

/**
 * Running counts for `/metrics`, kept as rows are written (triggers, migration 0017), so a scrape
 * reads a few dozen rows instead of counting millions. Each count is spread over a few shards (by
 * the writing connection) so concurrent writers seldom wait on one row; a scrape sums them.
 * `a` and `b` are the labels (an operation and an outcome, a severity …; '' when unused).
 */
export const metricCounts = pgTable(
  'metric_counts',
  {
    metric: text('metric').notNull(),
    a: text('a').notNull().default(''),
    b: text('b').notNull().default(''),
    shard: smallint('shard').notNull(),
    n: bigint('n', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.metric, t.a, t.b, t.shard] })],
);

/**
 * Runs compacted: the enterprise runs of cycles older than DAYBOOK_BOOKKEEPING_DAYS that ended
 * without a failure, one row per cycle, kind and outcome (jobs/compact.ts). Failed runs stay
 * in `runs`.
 */
export const runSummaries = pgTable(
  'run_summaries',
  {
    cycle: date('cycle', { mode: 'string' }).notNull(),
    kind: text('kind').notNull(),
    outcome: text('outcome').notNull(),
    runs: integer('runs').notNull(),
    credits: bigint('credits', { mode: 'number' }).notNull(),
    firstStartedAt: tstz('first_started_at'),
    lastFinishedAt: tstz('last_finished_at'),
    /** The runs' durations added up, in seconds. */
    seconds: doublePrecision('seconds').notNull().default(0),
    compactedAt: tstz('compacted_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.cycle, t.kind, t.outcome] })],
);

/**
 * Where each compaction stood (jobs/compact.ts): the newest sighting ids when the plan of
 * `cycle` ran. Superseded sightings up to the marks of DAYBOOK_BOOKKEEPING_DAYS cycles ago are
 * compacted: counted in cycles, not by any clock.
 */
export const compactionMarks = pgTable('compaction_marks', {
  cycle: date('cycle', { mode: 'string' }).primaryKey(),
  enterpriseSightingId: id('enterprise_sighting_id').notNull(),
  productSightingId: id('product_sighting_id').notNull(),
  markedAt: tstz('marked_at').notNull().defaultNow(),
});

/**
 * The column contract of the warehouse export (docs/export.md): for every exported table, its
 * columns in order, their types, its key, and how its rows are chosen for a package.
 *
 * A cut is a transaction snapshot (`pg_current_snapshot()`): the transactions that had committed
 * when it was taken. A package holds the rows of the transactions its cut sees and the previous
 * cut did not, each as it stood at the cut. So a package is a function of its two cuts: written
 * again (`--replay`), it is the same bytes; and a transaction that commits late is in the next
 * package, never skipped.
 *
 * It reads the views the tables' owners publish for it (`published.*`, one per exported table,
 * every column: docs/architecture.md, "Reads outside the owner"), never the tables themselves.
 *
 * Bump SCHEMA_VERSION whenever a column is added, removed, renamed or retyped.
 */

export const SCHEMA_VERSION = 1;

/** Logical column types, and what each becomes in every format (docs/export.md, Types). */
export type ColumnType = 'text' | 'int32' | 'int64' | 'boolean' | 'date' | 'timestamp' | 'decimal' | 'json';

export interface Column {
  name: string;
  type: ColumnType;
  /** The SQL expression over the table's aliases (default: the column of the same name). */
  expr?: string;
  nullable: boolean;
  description: string;
}

export interface ExportTable {
  name: string;
  description: string;
  /** The columns that identify a row: a loader merges on them. */
  key: string[];
  columns: Column[];
  /** FROM and JOIN clauses. */
  from: string;
  /** The rows of the range `[lo, hi)`: an SQL condition over `:lo` and `:hi` (xid8 literals). */
  where: string;
  /** Deterministic order of the rows in the file. */
  orderBy: string;
}

/** Decimals the Parquet files hold exactly: 28 digits before the point, 10 after. */
export const DECIMAL_PRECISION = 38;
export const DECIMAL_SCALE = 10;

const c = (
  name: string,
  type: ColumnType,
  description: string,
  options: { expr?: string; notNull?: boolean } = {},
): Column => ({
  name,
  type,
  description,
  nullable: !options.notNull,
  ...(options.expr ? { expr: options.expr } : {}),
});
const nn = { notNull: true };

/**
 * The rows of a cursor column in the range: written by a transaction the cut `:hi` sees and the
 * cut `:lo` does not (the index condition skips what every transaction before `:lo` wrote).
 */
const inRange = (col: string) =>
  `(${col} >= pg_snapshot_xmin(:lo) and pg_visible_in_snapshot(${col}, :hi) and not pg_visible_in_snapshot(${col}, :lo))`;

/**
 * Versions: a version is in a package when it was written in the range, or written before and
 * closed in it; its valid_to and is_current are as they stood at the cut.
 */
const versionRange = (v: string) =>
  `pg_visible_in_snapshot(${v}.load_xid, :hi) and (${inRange(`${v}.load_xid`)} or (${v}.closed_xid is not null and ${inRange(`${v}.closed_xid`)}))`;
const closedAtCut = (v: string) =>
  `(${v}.closed_xid is not null and pg_visible_in_snapshot(${v}.closed_xid, :hi))`;

const ENTERPRISE_FIELDS: Column[] = [
  c('ent_name', 'text', 'Registered name (ENTNAME).', nn),
  c('history_name', 'text', 'Former names as given (HISTORYNAME).'),
  c('uncid', 'text', 'Unified social credit code (UNCID).'),
  c('reg_no', 'text', 'Registration number (REGNO).'),
  c('legal_person', 'text', 'Legal representative, or the person in charge (LEGALPERSON).'),
  c('legal_person_desc', 'text', 'Title of the legal representative.'),
  c('ent_type', 'text', 'Enterprise type (ENTTYPE).'),
  c('ent_type_code', 'text', 'Enterprise type code.'),
  c('ent_status', 'text', 'Registration status (ENTSTATUS).'),
  c('reg_cap', 'decimal', 'Registered capital as stated, in its unit (REGCAP).'),
  c('reg_cap_text', 'text', 'REGCAP as received when it was text.'),
  c('capital_text', 'text', 'REGCAPCUR as received: the unit and currency as written, such as 万人民币.'),
  c('capital_unit', 'text', 'Unit of reg_cap (万, 亿, 元).'),
  c('capital_currency', 'text', 'Currency of the capital.'),
  c('capital_amount', 'decimal', 'The capital in units of its currency (reg_cap × unit).'),
  c('province', 'int32', 'Province code (PROVINCE).'),
  c('es_date', 'date', 'Date established (ESDATE).'),
  c('op_from', 'date', 'Start of the operating period (OPFROM).'),
  c('operating_to', 'date', 'End of the operating period; null when perpetual or unreadable.'),
  c('operating_perpetual', 'boolean', 'True when the operating period has no end.', nn),
  c('operating_to_text', 'text', 'OPTO as received when it was not a date.'),
  c('reg_org', 'text', 'Registration authority (REGORG).'),
  c('appr_date', 'date', 'Date of the latest approval (APPRDATE).'),
  c('revoke_date', 'date', 'Date revoked or cancelled.'),
  c('revoke_reason', 'text', 'Reason revoked or cancelled.'),
  c('op_loc', 'text', 'Registered address (OPLOC).'),
  c('op_scope', 'text', 'Business scope (OPSCOPE).'),
  c('participants', 'text', 'Insured employees as received.'),
  c('participants_count', 'int32', 'Insured employees, when a whole number.'),
  c('industry_phy', 'text', 'Industry section.'),
  c('industry_big', 'text', 'Industry division.'),
  c('industry_middle', 'text', 'Industry group.'),
  c('is_listed', 'boolean', 'Listed on an exchange.'),
  c('sconform', 'text', 'Form of capital contribution (SCONFORM).'),
  c(
    'unread_text',
    'json',
    'Original text of values that could not be read (dates, IS_LISTED, PROVINCE).',
    nn,
  ),
  c('extra', 'json', 'Fields the upstream sent that its documentation does not list, as received.', nn),
];

/** A column read from the table of alias `alias`, under its own name. */
const at =
  (alias: string) =>
  (col: Column): Column => ({ ...col, expr: `${alias}.${col.name}` });

/** A version's valid_to and is_current as they stood at the cut. */
const atCut = () => [
  c('valid_to', 'timestamp', 'When the next version replaced it; null while current.', {
    expr: `case when ${closedAtCut('v')} then v.valid_to end`,
  }),
  c('is_current', 'boolean', 'True for the version in force.', { ...nn, expr: `not ${closedAtCut('v')}` }),
];

/**
 * What has versions (`<entity>_versions`, `<entity>_sightings`): its key column and that column's
 * description, and the description of the version column of a list that belongs to a version.
 */
const ENTERPRISE = {
  entity: 'enterprise',
  key: 'pid',
  is: 'The enterprise.',
  version: 'Its version this row belongs to.',
};
const PRODUCT: Versioned = {
  entity: 'product',
  key: 'product_id',
  is: 'The product.',
  version: 'Its version.',
};
type Versioned = typeof ENTERPRISE;

/**
 * A list that belongs to a version (persons, topics, media…): keyed by the version and `key`, its
 * own columns read from `alias`, in a package with the version it belongs to (`v`).
 */
const versionList = (
  of: Versioned,
  list: { name: string; alias: string; description: string; key: string },
  columns: Column[],
): ExportTable => ({
  name: list.name,
  description: list.description,
  key: [of.key, 'version', list.key],
  columns: [
    c(of.key, 'text', of.is, { ...nn, expr: `v.${of.key}` }),
    c('version', 'int32', of.version, { ...nn, expr: 'v.version' }),
    ...columns.map(at(list.alias)),
  ],
  from: `published.${list.name} ${list.alias} join published.${of.entity}_versions v on v.id = ${list.alias}.version_id`,
  where: inRange('v.load_xid'),
  orderBy: `v.${of.key}, v.version, ${list.alias}.${list.key}`,
});

/** Every state of an entity's record (`state`: what it holds besides its key and version in force). */
const sightings = (of: Versioned, description: string, state: Column[], lastSeen: string): ExportTable => ({
  name: `${of.entity}_sightings`,
  description,
  key: ['sighting_id'],
  columns: [
    c('sighting_id', 'int64', 'Increases with every state; the highest is the latest.', {
      ...nn,
      expr: 's.id',
    }),
    c(of.key, 'text', of.is, { ...nn, expr: `s.${of.key}` }),
    ...state,
    c('version', 'int32', 'The version in force.', { ...nn, expr: 'v.version' }),
    c('first_seen_at', 'timestamp', 'When daybook first found it, UTC.', { ...nn, expr: 's.first_seen_at' }),
    c('last_seen_at', 'timestamp', lastSeen, { ...nn, expr: 's.last_seen_at' }),
  ],
  from: `published.${of.entity}_sightings s join published.${of.entity}_versions v on v.id = s.version_id`,
  where: inRange('s.load_xid'),
  orderBy: 's.id',
});

const EXTRA = c('extra', 'json', 'Undocumented fields, as received.', nn);
const POSITION = c('position', 'int32', 'Position, from 0.', nn);
/** The people of an enterprise version's list (key personnel, liquidation group). */
const PEOPLE = [
  c('ordinal', 'int32', 'Position in the list, from 0.', nn),
  c('name', 'text', 'Name.', nn),
  c('position', 'text', 'Position held.'),
  EXTRA,
];

export const EXPORT_TABLES: ExportTable[] = [
  {
    name: 'enterprise_versions',
    description:
      'Every version of every enterprise (SCD type 2): one row per distinct content, valid from the moment it was first landed until the next version.',
    key: ['pid', 'version'],
    columns: [
      c('pid', 'text', 'The upstream enterprise id (PID).', { ...nn, expr: 'v.pid' }),
      c('version', 'int32', '1, 2, 3… per enterprise.', { ...nn, expr: 'v.version' }),
      c('valid_from', 'timestamp', 'When this version was landed (the database clock), UTC.', {
        ...nn,
        expr: 'v.valid_from',
      }),
      ...atCut(),
      c('cycle', 'date', 'The cycle (Beijing date of the 03:00 refresh) that found it.', {
        ...nn,
        expr: 'v.cycle',
      }),
      c('content_hash', 'text', 'sha256 of the normalized content: equal hashes, equal content.', {
        ...nn,
        expr: 'v.content_hash',
      }),
      ...ENTERPRISE_FIELDS.map(at('v')),
      c('raw_response_id', 'int64', 'The landed answer it was read from (lineage).', {
        expr: 'v.raw_response_id',
      }),
    ],
    from: 'published.enterprise_versions v',
    where: versionRange('v'),
    orderBy: 'v.pid, v.version',
  },
  versionList(
    ENTERPRISE,
    {
      name: 'enterprise_persons',
      alias: 'p',
      description: 'Key personnel of each enterprise version, in the order the upstream gave them.',
      key: 'ordinal',
    },
    PEOPLE,
  ),
  versionList(
    ENTERPRISE,
    {
      name: 'enterprise_shareholders',
      alias: 's',
      description: 'Shareholders of each enterprise version.',
      key: 'ordinal',
    },
    [
      c('ordinal', 'int32', 'Position in the list, from 0.', nn),
      c('name', 'text', 'Name.'),
      c('type', 'text', 'Shareholder type.'),
      c('shareholder_pid', 'text', 'PID of an enterprise shareholder.'),
      EXTRA,
    ],
  ),
  versionList(
    ENTERPRISE,
    {
      name: 'enterprise_clearing_members',
      alias: 'm',
      description: 'Liquidation group members of each enterprise version.',
      key: 'ordinal',
    },
    PEOPLE,
  ),
  sightings(
    ENTERPRISE,
    "Every state of an enterprise's record: presence, version in force, first and last seen. An enterprise's state is its row with the highest sighting_id.",
    [
      c('presence', 'text', 'present, or disappeared (found before, now not found).', {
        ...nn,
        expr: 's.presence',
      }),
    ],
    'When the latest answer applied was landed, UTC.',
  ),
  {
    name: 'enterprise_links',
    description:
      "Every version's links: its shareholders, legal representative, key personnel and liquidation group members, one row each, as analytics.enterprise_links reads them. A person is a name only, never one identity.",
    key: ['link_id'],
    columns: [
      c('link_id', 'text', 'The link: pid, version, relation and ordinal, joined by /.', {
        ...nn,
        expr: "v.pid || '/' || v.version || '/' || l.relation || '/' || l.ordinal",
      }),
      c('pid', 'text', 'The enterprise.', { ...nn, expr: 'v.pid' }),
      c('version', 'int32', 'Its version this link belongs to.', { ...nn, expr: 'v.version' }),
      c('relation', 'text', 'shareholder, legal_representative, personnel or clearing_member.', {
        ...nn,
        expr: 'l.relation',
      }),
      c('ordinal', 'int32', 'Position in its list, from 0 (0 for the legal representative).', {
        ...nn,
        expr: 'l.ordinal',
      }),
      c('related_kind', 'text', 'enterprise, person, organisation or unknown.', {
        ...nn,
        expr: 'l.related_kind',
      }),
      c('related_pid', 'text', 'PID of an enterprise shareholder; null otherwise.', {
        expr: 'l.related_pid',
      }),
      c('related_name', 'text', 'The name as the record gives it.', { expr: 'l.related_name' }),
      c('position', 'text', "The shareholder's type, the person's position or the representative's title.", {
        expr: 'l.position',
      }),
      c('valid_from', 'timestamp', 'When its version was landed, UTC.', { ...nn, expr: 'v.valid_from' }),
      ...atCut(),
    ],
    // Per version, by the lists' keys: a package reads only the versions in its range.
    from: `published.enterprise_versions v cross join lateral (
      select 'shareholder'::text as relation, s.ordinal::int as ordinal,
        daybook_shareholder_kind(s.shareholder_pid, s.type) as related_kind, s.shareholder_pid as related_pid,
        s.name as related_name, s.type as position
      from published.enterprise_shareholders s where s.version_id = v.id
      union all
      select 'legal_representative', 0, 'person', null, v.legal_person, v.legal_person_desc
      where v.legal_person is not null and v.legal_person <> ''
      union all
      select 'personnel', p.ordinal, 'person', null, p.name, p.position
      from published.enterprise_persons p where p.version_id = v.id
      union all
      select 'clearing_member', m.ordinal, 'person', null, m.name, m.position
      from published.enterprise_clearing_members m where m.version_id = v.id
    ) l`,
    where: versionRange('v'),
    orderBy: 'v.pid, v.version, l.relation, l.ordinal',
  },
  {
    name: 'enterprise_changes',
    description: 'One row per field-level change between two consecutive versions of an enterprise.',
    key: ['change_id'],
    columns: [
      c('change_id', 'int64', 'The change.', { ...nn, expr: 'ch.id' }),
      c('pid', 'text', 'The enterprise.', { ...nn, expr: 'ch.pid' }),
      c('cycle', 'date', 'The cycle that found it.', { ...nn, expr: 'ch.cycle' }),
      c('detected_at', 'timestamp', 'When it was found (the landing of the new version), UTC.', {
        ...nn,
        expr: 'ch.detected_at',
      }),
      c('category', 'text', 'What kind of fact changed (docs/changes.md).', { ...nn, expr: 'ch.category' }),
      c('field', 'text', 'The field, or the child list and its key.', { ...nn, expr: 'ch.field' }),
      c('kind', 'text', 'modified, added or removed.', { ...nn, expr: 'ch.kind' }),
      c('before', 'text', 'The value before, as text.', { expr: 'ch.before' }),
      c('after', 'text', 'The value after, as text.', { expr: 'ch.after' }),
      c('detail', 'text', 'A readable account of the change.', { expr: 'ch.detail' }),
      c('severity', 'text', 'high, medium or low.', { ...nn, expr: 'ch.severity' }),
      c('from_version', 'int32', 'The version before.', { ...nn, expr: 'pv.version' }),
      c('to_version', 'int32', 'The version after.', { ...nn, expr: 'nv.version' }),
      c('raw_response_id', 'int64', 'The answer the new version was read from.', {
        expr: 'nv.raw_response_id',
      }),
    ],
    from: 'published.enterprise_changes ch join published.enterprise_versions nv on nv.id = ch.version_id join published.enterprise_versions pv on pv.id = ch.previous_version_id',
    where: inRange('ch.load_xid'),
    orderBy: 'ch.id',
  },
  {
    name: 'enterprise_events',
    description:
      'Company events that are not field changes: initial, disappeared, reappeared, stale_ignored, resolution_changed, resolution_mismatch.',
    key: ['event_id'],
    columns: [
      c('event_id', 'int64', 'The event.', { ...nn, expr: 'o.id' }),
      c('pid', 'text', 'The enterprise.', { ...nn, expr: 'o.pid' }),
      c('kind', 'text', 'What happened.', { ...nn, expr: 'o.kind' }),
      c('cycle', 'date', 'The cycle.', { ...nn, expr: 'o.cycle' }),
      c('keyword', 'text', 'The watch keyword involved.', { expr: 'o.keyword' }),
      c('detail', 'text', 'A readable account.', { expr: 'o.detail' }),
      c('observed_at', 'timestamp', 'When, UTC.', { ...nn, expr: 'o.observed_at' }),
      c('raw_response_id', 'int64', 'The answer it was read from.', { expr: 'o.raw_response_id' }),
    ],
    from: 'published.enterprise_observations o',
    where: inRange('o.load_xid'),
    orderBy: 'o.id',
  },
  {
    name: 'events',
    description:
      'The event outbox (the feed webhooks send): every change, company event and operational event.',
    key: ['sequence'],
    columns: [
      c('sequence', 'int64', 'Increases in commit order.', { ...nn, expr: 'e.seq' }),
      c('event_id', 'text', 'Unique id (evt_…).', { ...nn, expr: 'e.id' }),
      c('type', 'text', 'Event type (company.status.changed, cycle.completed…).', { ...nn, expr: 'e.type' }),
      c('severity', 'text', 'high, medium or low.', { ...nn, expr: 'e.severity' }),
      c('pid', 'text', 'The enterprise, for company events.', { expr: 'e.pid' }),
      c('name', 'text', 'Its name when the event was written.', { expr: 'e.name' }),
      c('company_sequence', 'int32', '1, 2, 3… per enterprise: a gap means a missed event.', {
        expr: 'e.company_seq',
      }),
      c('cycle', 'date', 'The cycle.', { expr: 'e.cycle' }),
      c('detected_at', 'timestamp', 'When daybook found it, UTC.', { ...nn, expr: 'e.detected_at' }),
      c('effective_date', 'date', 'When the registry says it took effect, when it says.', {
        expr: 'e.effective_date',
      }),
      c('raw_response_id', 'int64', 'The answer it was read from.', { expr: 'e.raw_response_id' }),
      c('data', 'json', "The event's data (schemas/events/).", { ...nn, expr: 'e.data' }),
    ],
    from: 'published.events e',
    where: inRange('e.load_xid'),
    orderBy: 'e.seq',
  },
  {
    name: 'product_versions',
    description: "Every version of every product's content (SCD type 2); votes and comments are apart.",
    key: ['product_id', 'version'],
    columns: [
      c('product_id', 'text', 'The product.', { ...nn, expr: 'v.product_id' }),
      c('version', 'int32', '1, 2, 3… per product.', { ...nn, expr: 'v.version' }),
      c('valid_from', 'timestamp', 'When this version was landed, UTC.', { ...nn, expr: 'v.valid_from' }),
      ...atCut(),
      c('content_hash', 'text', 'sha256 of the normalized content.', { ...nn, expr: 'v.content_hash' }),
      c('record_id', 'text', 'The record id of the list entry.', { ...nn, expr: 'v.record_id' }),
      c('name', 'text', 'Name.', { ...nn, expr: 'v.name' }),
      c('tagline', 'text', 'Tagline.', { expr: 'v.tagline' }),
      c('description', 'text', 'Description.', { expr: 'v.description' }),
      c('url', 'text', 'URL.', { expr: 'v.url' }),
      c('created_at', 'timestamp', 'When it was created, UTC.', { expr: 'v.created_at' }),
      c('featured_at', 'timestamp', 'When it was featured, UTC.', { expr: 'v.featured_at' }),
      c('thumbnail_url', 'text', 'Thumbnail URL.', { expr: 'v.thumbnail_url' }),
      c('thumbnail_type', 'text', 'Thumbnail type.', { expr: 'v.thumbnail_type' }),
      c('unread_text', 'json', 'Original text of values that could not be read.', {
        ...nn,
        expr: 'v.unread_text',
      }),
      c('extra', 'json', 'Undocumented fields, as received.', { ...nn, expr: 'v.extra' }),
      c('raw_response_id', 'int64', 'The answer it was read from.', { expr: 'v.raw_response_id' }),
    ],
    from: 'published.product_versions v',
    where: versionRange('v'),
    orderBy: 'v.product_id, v.version',
  },
  versionList(
    PRODUCT,
    { name: 'product_topics', alias: 't', description: 'Topics of each product version.', key: 'topic' },
    [c('topic', 'text', 'Topic.', nn)],
  ),
  versionList(
    PRODUCT,
    {
      name: 'product_media',
      alias: 'm',
      description: 'Media of each product version, in order.',
      key: 'position',
    },
    [
      POSITION,
      c('url', 'text', 'URL.', nn),
      c('type', 'text', 'Media type.'),
      c('video_url', 'text', 'Video URL.'),
      EXTRA,
    ],
  ),
  versionList(
    PRODUCT,
    {
      name: 'product_links',
      alias: 'l',
      description: 'Links of each product version, in order.',
      key: 'position',
    },
    [POSITION, c('url', 'text', 'URL.', nn), c('type', 'text', 'Link type.'), EXTRA],
  ),
  sightings(
    PRODUCT,
    "Every state of a product's record: version in force, first and last seen. A product's state is its row with the highest sighting_id.",
    [],
    'When it was last seen, UTC.',
  ),
  {
    name: 'product_comments',
    description: 'Comments, each kept once across pulls.',
    key: ['comment_id'],
    columns: [
      c('comment_id', 'int64', 'The comment.', { ...nn, expr: 'pc.id' }),
      c('product_id', 'text', 'The product.', { ...nn, expr: 'pc.product_id' }),
      c('body', 'text', 'Text.', { ...nn, expr: 'pc.body' }),
      c('created_at', 'timestamp', 'When it was written, UTC.', { expr: 'pc.created_at' }),
      c('created_at_text', 'text', 'Its time as received, when unreadable.', { expr: 'pc.created_at_text' }),
      c('first_seen_at', 'timestamp', 'When daybook first saw it, UTC.', { ...nn, expr: 'pc.first_seen_at' }),
      c('raw_response_id', 'int64', 'The answer it was first read from.', { expr: 'pc.raw_response_id' }),
    ],
    from: 'published.product_comments pc',
    where: inRange('pc.load_xid'),
    orderBy: 'pc.id',
  },
  {
    name: 'trending_snapshots',
    description: "One row per product per pull of a day's trending list: positions and vote trajectories.",
    key: ['snapshot_id'],
    columns: [
      c('snapshot_id', 'int64', 'The snapshot row.', { ...nn, expr: 'ts.id' }),
      c('list_date', 'date', 'The list date.', { ...nn, expr: 'ts.list_date' }),
      c('position', 'int32', 'Rank on the list, from 1.', { ...nn, expr: 'ts.position' }),
      c('product_id', 'text', 'The product.', { ...nn, expr: 'ts.product_id' }),
      c('votes_count', 'int32', 'Votes at the pull.', { expr: 'ts.votes_count' }),
      c('comments_count', 'int32', 'Comments at the pull.', { expr: 'ts.comments_count' }),
      c('fetched_at', 'timestamp', 'When the pull was landed, UTC.', { ...nn, expr: 'ts.fetched_at' }),
      c('raw_response_id', 'int64', 'The pull (one answer).', { ...nn, expr: 'ts.raw_response_id' }),
    ],
    from: 'published.trending_snapshots ts',
    where: inRange('ts.load_xid'),
    orderBy: 'ts.id',
  },
  {
    name: 'credits',
    description:
      'The credit ledger: one row per upstream call the upstream may have billed: answered and billed (booked), sent with no answer (unconfirmed), or whose outcome never became known (presumed).',
    key: ['entry_id'],
    columns: [
      c('entry_id', 'int64', 'The ledger entry.', { ...nn, expr: 'l.id' }),
      c('cycle', 'date', 'The cycle billed.', { ...nn, expr: 'l.cycle' }),
      c('operation', 'text', 'The upstream operation.', { ...nn, expr: 'l.operation' }),
      c('pid', 'text', 'The enterprise billed for.', { expr: 'l.pid' }),
      c('keyword', 'text', 'The keyword queried; for a product call, its list date or product name.', {
        expr: 'l.keyword',
      }),
      // Null for an unpriced product call: no amount stated, DAYBOOK_PRODUCT_CREDITS unset.
      c('credits', 'int32', 'Credits; null for an unpriced product call.', { expr: 'l.credits' }),
      c('status', 'text', 'booked, unconfirmed or presumed.', { ...nn, expr: 'l.status' }),
      c('remark', 'text', 'How the amount was known.', { expr: 'l.remark' }),
      c('billed_at', 'timestamp', 'When, UTC.', { ...nn, expr: 'l.billed_at' }),
      c('run_id', 'int64', 'The run that made the call.', { expr: 'l.run_id' }),
      c('raw_response_id', 'int64', 'The answer billed.', { expr: 'l.raw_response_id' }),
    ],
    from: 'credit_ledger l',
    where: inRange('l.load_xid'),
    orderBy: 'l.id',
  },
  {
    name: 'runs',
    description: 'Every finished job run: what ran, when, how it ended.',
    key: ['run_id'],
    columns: [
      c('run_id', 'int64', 'The run.', { ...nn, expr: 'r.id' }),
      c('kind', 'text', 'What ran.', { ...nn, expr: 'r.kind' }),
      c('cycle', 'date', 'Its enterprise cycle.', { expr: 'r.cycle' }),
      c('list_date', 'date', 'Its product list date.', { expr: 'r.list_date' }),
      c('entity', 'text', 'What it worked on.', { expr: 'r.entity' }),
      c('started_at', 'timestamp', 'Started, UTC.', { ...nn, expr: 'r.started_at' }),
      c('finished_at', 'timestamp', 'Finished, UTC.', { expr: 'r.finished_at' }),
      c('outcome', 'text', 'succeeded, failed, skipped, deferred, paused, abandoned.', {
        ...nn,
        expr: 'r.outcome',
      }),
      c('error_code', 'text', 'Error code.', { expr: 'r.error_code' }),
      c('error_message', 'text', 'Error message.', { expr: 'r.error_message' }),
      c('counts', 'json', 'What it counted.', { ...nn, expr: 'r.counts' }),
      c('credits', 'int32', 'Credits it spent.', { ...nn, expr: 'r.credits' }),
    ],
    from: 'published.runs r',
    where: `${inRange('r.load_xid')} and r.outcome <> 'running'`,
    orderBy: 'r.id',
  },
];

export const TABLE_NAMES = EXPORT_TABLES.map((t) => t.name);

/** A snapshot before every transaction: the lower cut of a full package. */
export const SNAPSHOT_ZERO = '1:1:';
const SNAPSHOT = /^\d+:\d+:(\d+(,\d+)*)?$/;

/** The two cuts inlined into a table's query (checked: they are digits, colons and commas). */
export function rangeSql(text: string, lo: string, hi: string): string {
  if (!SNAPSHOT.test(lo) || !SNAPSHOT.test(hi)) throw new Error(`bad cursor range ${lo} .. ${hi}`);
  return text.replaceAll(':lo', `'${lo}'::pg_snapshot`).replaceAll(':hi', `'${hi}'::pg_snapshot`);
}

/** JSON Schema of one table's rows as NDJSON carries them (the package's schema.json holds all). */
export function jsonSchemaOf(table: ExportTable): Record<string, unknown> {
  const typeOf = (col: Column): Record<string, unknown> => {
    const base: Record<string, unknown> = (() => {
      switch (col.type) {
        case 'text':
          return { type: 'string' };
        case 'int32':
        case 'int64':
          return { type: 'integer' };
        case 'boolean':
          return { type: 'boolean' };
        case 'date':
          return { type: 'string', format: 'date' };
        case 'timestamp':
          return { type: 'string', format: 'date-time' };
        case 'decimal':
          return { type: 'string', pattern: '^-?[0-9]+(\\.[0-9]+)?$' };
        case 'json':
          return {};
      }
    })();
    const withType = { ...base, 'x-daybook-type': col.type, description: col.description };
    if (!col.nullable || col.type === 'json') return withType;
    return { ...withType, type: [base.type ?? 'string', 'null'].flat() };
  };
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: table.name,
    description: table.description,
    type: 'object',
    'x-daybook-key': table.key,
    properties: Object.fromEntries(table.columns.map((col) => [col.name, typeOf(col)])),
    required: table.columns.map((col) => col.name),
    additionalProperties: false,
  };
}

/**
 * The field catalogue: every enterprise and product field the upstream documents, and every
 * column daybook derives from them, with the words a person reads (Chinese and English, as the
 * public registry, Tianyancha and Qichacha name them) and a kind that says how a value is shown.
 * The words of the enumerated tokens (severities, reasons, categories, change kinds, presence)
 * sit here too. Every human format reads its labels and formats its values through this module;
 * machine formats (webhooks, the feed, export, `analytics`) keep the codes. Pure.
 */

export const LANGS = ['zh', 'en'] as const;
export type Lang = (typeof LANGS)[number];

/** The words of a thing, in each language. */
export interface Words {
  zh: string;
  en: string;
}

/** The words of one thing, Chinese first: a line of the tables below. */
const label = (zh: string, en: string): Words => ({ zh, en });

/**
 * How a value is shown: `text` as written; `date` YYYY-MM-DD; `time` a Beijing date and time;
 * `money` an amount in whole currency units, shown in 万 (zh) or million (en) of its currency;
 * `currency` an ISO code shown as a word; `count` a number with its unit; `code` an identifier
 * as written; `list` a child list (its items are text); `flag` yes or no; `period_end` a date or
 * "perpetual"; `province` and `industry_section` a code shown as its name.
 */
export type FieldKind =
  | 'text'
  | 'date'
  | 'time'
  | 'money'
  | 'currency'
  | 'count'
  | 'code'
  | 'list'
  | 'flag'
  | 'period_end'
  | 'province'
  | 'industry_section';

export interface FieldSpec extends Words {
  kind: FieldKind;
  /** The unit of a count, in each language. */
  unit?: Words;
}

/** The unit of a count of persons. */
const PEOPLE = label('人', 'people');

const f = (zh: string, en: string, kind: FieldKind, unit?: FieldSpec['unit']): FieldSpec =>
  unit ? { zh, en, kind, unit } : { zh, en, kind };

/**
 * The enterprise fields by their upstream name, with the columns daybook stores them in (the
 * snake_case names of `analytics.enterprise_current` and `enterprise_history`) beside them.
 */
export const ENTERPRISE_FIELDS: Readonly<Record<string, FieldSpec>> = {
  PID: f('企业 ID', 'Company ID', 'code'),
  ENTNAME: f('企业名称', 'Company name', 'text'),
  HISTORYNAME: f('曾用名', 'Former name', 'text'),
  IS_LISTED: f('是否上市', 'Listed', 'flag'),
  LEGALPERSON: f('法定代表人', 'Legal representative', 'text'),
  LEGALPERSONDESC: f('负责人类型', 'Type of person in charge', 'text'),
  ESDATE: f('成立日期', 'Established', 'date'),
  SCONFORM: f('组成形式', 'Composition form', 'text'),
  REGNO: f('注册号', 'Registration number', 'code'),
  UNCID: f('统一社会信用代码', 'Unified social credit code', 'code'),
  ENTTYPECODE: f('企业类型代码', 'Company type code', 'code'),
  ENTTYPE: f('企业类型', 'Company type', 'text'),
  REGCAP: f('注册资本', 'Registered capital', 'money'),
  REGCAPCUR: f('注册资本币种', 'Capital currency', 'currency'),
  PROVINCE: f('所属省份', 'Province', 'province'),
  OPFROM: f('营业期限自', 'Operating from', 'date'),
  OPTO: f('营业期限至', 'Operating until', 'period_end'),
  REGORG: f('登记机关', 'Registration authority', 'text'),
  APPRDATE: f('核准日期', 'Approved', 'date'),
  REVOKEDATE: f('吊销日期', 'Revoked on', 'date'),
  REVOKEREASON: f('吊销原因', 'Revocation reason', 'text'),
  ENTSTATUS: f('登记状态', 'Status', 'text'),
  OPLOC: f('住所', 'Address', 'text'),
  OPSCOPE: f('经营范围', 'Business scope', 'text'),
  PERSONS: f('主要人员', 'Key personnel', 'list'),
  BE_INVEST: f('股东信息', 'Shareholders', 'list'),
  CLEARINGINFO: f('清算信息', 'Liquidation', 'list'),
  'CLEARINGINFO.member': f('清算组成员', 'Liquidation committee member', 'list'),
  participants: f('参保人数', 'Insured employees', 'count', PEOPLE),
  INDUSTRYPHY: f('行业门类', 'Industry section', 'industry_section'),
  INDUSTRYBIG: f('行业大类', 'Industry division', 'text'),
  industry_middle: f('行业中类', 'Industry group', 'text'),
  // The fields of a child.
  NAME: f('姓名', 'Name', 'text'),
  POSITION: f('职务', 'Position', 'text'),
  INV: f('股东名称', 'Shareholder', 'text'),
  INVTYPE: f('股东类型', 'Shareholder type', 'text'),
  liqMem: f('清算组成员', 'Committee member', 'text'),
  ligpriSign: f('清算组职务', 'Committee role', 'text'),
};

/** A column that stores an enterprise field as it is: the field's words and kind. */
const same = (field: string): FieldSpec => ENTERPRISE_FIELDS[field] as FieldSpec;

/** The columns daybook stores or derives, by name, as the analytics views and the console have them. */
export const ENTERPRISE_COLUMNS: Readonly<Record<string, FieldSpec>> = {
  pid: same('PID'),
  ent_name: same('ENTNAME'),
  history_name: same('HISTORYNAME'),
  uncid: same('UNCID'),
  reg_no: same('REGNO'),
  legal_person: same('LEGALPERSON'),
  legal_person_desc: same('LEGALPERSONDESC'),
  ent_type: same('ENTTYPE'),
  ent_type_code: same('ENTTYPECODE'),
  ent_status: same('ENTSTATUS'),
  reg_cap: f('注册资本（登记数额）', 'Registered capital (as registered)', 'text'),
  capital_unit: f('注册资本单位', 'Capital unit', 'text'),
  capital_currency: same('REGCAPCUR'),
  capital_amount: same('REGCAP'),
  capital_text: f('注册资本币种（原文）', 'Capital currency (as written)', 'text'),
  province: same('PROVINCE'),
  es_date: same('ESDATE'),
  op_from: same('OPFROM'),
  operating_to: same('OPTO'),
  operating_perpetual: f('长期经营', 'Perpetual', 'flag'),
  operating_to_text: f('营业期限至（原文）', 'Operating until (as written)', 'text'),
  reg_org: same('REGORG'),
  appr_date: same('APPRDATE'),
  revoke_date: same('REVOKEDATE'),
  revoke_reason: same('REVOKEREASON'),
  op_loc: same('OPLOC'),
  op_scope: same('OPSCOPE'),
  participants: f('参保人数（原文）', 'Insured employees (as written)', 'text'),
  participants_count: same('participants'),
  industry_phy: same('INDUSTRYPHY'),
  industry_big: same('INDUSTRYBIG'),
  industry_middle: same('industry_middle'),
  is_listed: same('IS_LISTED'),
  sconform: same('SCONFORM'),
  persons: same('PERSONS'),
  shareholders: same('BE_INVEST'),
  clearing_members: same('CLEARINGINFO.member'),
  persons_count: f('主要人员数', 'Key personnel', 'count', PEOPLE),
  shareholders_count: f('股东数', 'Shareholders', 'count', label('名', 'holders')),
  clearing_members_count: f('清算组人数', 'Committee members', 'count', PEOPLE),
  presence: f('监控状态', 'Watch state', 'text'),
  version: f('版本', 'Version', 'count'),
  valid_from: f('生效自', 'Valid from', 'time'),
  valid_to: f('生效至', 'Valid until', 'time'),
  is_current: f('当前版本', 'Current', 'flag'),
  cycle: f('周期', 'Cycle', 'date'),
  version_cycle: f('周期', 'Cycle', 'date'),
  version_valid_from: f('生效自', 'Valid from', 'time'),
  first_seen_at: f('首次记录', 'First seen', 'time'),
  last_seen_at: f('最近一次查询', 'Last seen', 'time'),
  content_hash: f('内容摘要', 'Content hash', 'code'),
  extra: f('未列明字段', 'Undocumented fields', 'text'),
  raw_response_id: f('原始应答', 'Raw answer', 'code'),
};

/** The columns of a change record (`analytics.enterprise_changes`, the console's changes). */
export const CHANGE_COLUMNS: Readonly<Record<string, FieldSpec>> = {
  detected_at: f('发现时间', 'Detected', 'time'),
  cycle: f('变更日期', 'Date', 'date'),
  pid: same('PID'),
  ent_name: same('ENTNAME'),
  uncid: same('UNCID'),
  category: f('变更类别', 'Category', 'text'),
  field: f('变更项目', 'Item', 'text'),
  kind: f('变更方式', 'Kind', 'text'),
  before: f('变更前', 'Before', 'text'),
  after: f('变更后', 'After', 'text'),
  severity: f('严重程度', 'Severity', 'text'),
  detail: f('原因', 'Reason', 'text'),
  from_version: f('变更前版本', 'From version', 'count'),
  to_version: f('变更后版本', 'To version', 'count'),
};

/** The product fields by their upstream name (also the columns that keep the name). */
export const PRODUCT_FIELDS: Readonly<Record<string, FieldSpec>> = {
  id: f('记录 ID', 'Record ID', 'code'),
  product_id: f('产品 ID', 'Product ID', 'code'),
  name: f('产品名称', 'Product name', 'text'),
  tagline: f('标语', 'Tagline', 'text'),
  description: f('简介', 'Description', 'text'),
  url: f('产品页面', 'Product page', 'text'),
  votes_count: f('投票数', 'Votes', 'count', label('票', 'votes')),
  comments_count: f('评论数', 'Comments', 'count', label('条', 'comments')),
  created_at: f('创建时间', 'Created', 'time'),
  featured_at: f('推荐时间', 'Featured', 'time'),
  topics: f('话题', 'Topics', 'list'),
  media: f('媒体', 'Media', 'list'),
  thumbnail: f('缩略图', 'Thumbnail', 'text'),
  product_links: f('产品链接', 'Links', 'list'),
  comments: f('评论', 'Comments', 'list'),
  updated_at: f('更新时间', 'Updated', 'time'),
  position: f('排名', 'Rank', 'count', label('名', '')),
  list_date: f('榜单日期', 'List date', 'date'),
  fetched_at: f('抓取时间', 'Fetched', 'time'),
};

/** The words of each enumerated token, by the group it belongs to. */
export const TOKENS = {
  severity: {
    high: label('高', 'high'),
    medium: label('中', 'medium'),
    low: label('低', 'low'),
  },
  kind: {
    added: label('新增', 'added'),
    removed: label('移除', 'removed'),
    modified: label('变更', 'changed'),
  },
  detail: {
    increase: label('增资', 'increase'),
    decrease: label('减资', 'decrease'),
    to_bad: label('转为异常状态', 'moved to a bad status'),
    revoked: label('被吊销', 'revoked'),
    opened: label('进入清算', 'liquidation opened'),
    closed: label('清算组撤销', 'liquidation closed'),
    position_changed: label('职务变更', 'position changed'),
    extra_changed: label('其他信息变更', 'other details changed'),
    renamed: label('名称变更', 'renamed'),
    type_changed: label('类型变更', 'type changed'),
    pid_changed: label('企业关联变更', 'linked company changed'),
  },
  category: {
    name: label('名称', 'Name'),
    legal_representative: label('法定代表人', 'Legal representative'),
    registered_capital: label('注册资本', 'Registered capital'),
    status: label('登记状态', 'Status'),
    address: label('住所', 'Address'),
    business_scope: label('经营范围', 'Business scope'),
    enterprise_type: label('企业类型', 'Company type'),
    operating_period: label('营业期限', 'Operating period'),
    revocation: label('吊销信息', 'Revocation'),
    listing: label('上市状态', 'Listing'),
    industry: label('行业', 'Industry'),
    key_personnel: label('主要人员', 'Key personnel'),
    shareholders: label('股东', 'Shareholders'),
    liquidation: label('清算信息', 'Liquidation'),
    insured_employees: label('参保人数', 'Insured employees'),
    registration: label('登记信息', 'Registration'),
    other: label('其他', 'Other'),
    extra: label('未列明字段', 'Undocumented field'),
    // Product categories not named above.
    identity: label('标识', 'Identity'),
    tagline: label('标语', 'Tagline'),
    description: label('简介', 'Description'),
    url: label('产品页面', 'Product page'),
    timing: label('时间', 'Timing'),
    topics: label('话题', 'Topics'),
    media: label('媒体', 'Media'),
    links: label('产品链接', 'Links'),
    thumbnail: label('缩略图', 'Thumbnail'),
  },
  presence: {
    present: label('可查询', 'found'),
    disappeared: label('查询不到', 'not found'),
  },
  /** Where a watch entry stands in a cycle (`cycle_fetches.status`), as `daybook status` counts it. */
  fetch_status: {
    planned: label('待查询', 'planned'),
    deferred: label('推迟', 'deferred'),
    skipped: label('跳过', 'skipped'),
    fetching: label('查询中', 'being fetched'),
    retrying: label('等待重试', 'waiting to retry'),
    succeeded: label('已查询', 'fetched'),
    duplicate: label('与其他条目为同一企业', "another entry's company"),
    failed: label('失败', 'failed'),
  },
  /**
   * Why an entry was deferred, skipped or failed, or a run failed (`cycle_fetches.error_code`,
   * `runs.error_code`): the planner's reasons, the upstream's documented error codes and daybook's own.
   */
  reason: {
    success: label('成功', 'success'),
    credit_budget: label('积分预算不足', 'credit budget reached'),
    rate_window: label('调用频率限制内排不下', 'no room left in the rate limit'),
    max_entries: label('达到每周期条目上限', 'entries per cycle cap reached'),
    related_share: label('股东份额已用完', "shareholders' share of the cycle used"),
    added_after_plan: label('计划后新加入', 'added after the plan'),
    unknown: label('原因不明', 'reason unknown'),
    already_fetched_this_cycle: label('本周期已查询', 'already fetched this cycle'),
    duplicate_pid: label('与其他条目为同一企业', "another entry's company"),
    permanent_error_recent: label('近期已永久失败', 'failed for good recently'),
    inactive: label('监控条目已移除', 'watch entry removed'),
    paused: label('周期已暂停', 'cycle paused'),
    not_found: label('查无结果', 'not found'),
    invalid_parameter: label('参数无效', 'invalid parameter'),
    invalid_request: label('请求无效', 'invalid request'),
    invalid_date: label('日期无效', 'invalid date'),
    invalid_product_name: label('产品名称无效', 'invalid product name'),
    missing_parameters: label('缺少参数', 'missing parameters'),
    unauthorized: label('未授权', 'unauthorized'),
    forbidden: label('禁止访问', 'forbidden'),
    invalid_api_key: label('API 密钥无效', 'invalid API key'),
    missing_api_key: label('缺少 API 密钥', 'missing API key'),
    insufficient_credits: label('积分不足', 'insufficient credits'),
    budget_exhausted: label('积分预算用完', 'credit budget used up'),
    rate_limit_exceeded: label('超出调用频率限制', 'rate limit exceeded'),
    rate_limited: label('调用频率受限', 'rate limited'),
    server_error: label('上游服务器错误', 'upstream server error'),
    upstream_error: label('上游错误', 'upstream error'),
    timeout: label('超时', 'timed out'),
    network_error: label('网络错误', 'network error'),
    unexpected_response: label('应答格式不符', 'unexpected answer'),
    malformed_body: label('应答无法解析', 'unreadable answer'),
    body_too_large: label('应答过大', 'answer too large'),
    body_too_deep: label('应答嵌套过深', 'answer nested too deep'),
    unusable_answer: label('应答不可用', 'unusable answer'),
    resolution_mismatch: label('统一社会信用代码不符', 'credit code does not match'),
    claim_lost: label('条目已由其他进程接手', 'taken over by another worker'),
    worker_died: label('工作进程多次中断', 'its worker died too often'),
    unanswered: label('两次调用均无应答（可能已扣费）', 'no answer twice (may have been billed)'),
    bad_job_data: label('任务数据无效', 'invalid job data'),
  },
  /** What kind of format drift an upstream answer showed (`format_drift.kind`). */
  drift_kind: {
    unknown_field: label('未列明字段', 'unknown field'),
    missing_field: label('缺失字段', 'missing field'),
    type_variant: label('类型或格式不符', 'type or format variant'),
  },
} as const satisfies Record<string, Record<string, Words>>;

/** The words of each event type (src/events/catalogue.ts checks that every type has them). */
export const EVENT_TYPE_LABELS = {
  'company.status.changed': label('登记状态变更', 'Status changed'),
  'company.liquidation.opened': label('进入清算', 'Liquidation opened'),
  'company.liquidation.closed': label('清算组撤销', 'Liquidation closed'),
  'company.liquidation.members.changed': label('清算组成员变更', 'Liquidation committee changed'),
  'company.revoked': label('被吊销', 'Revoked'),
  'company.revocation.changed': label('吊销信息变更', 'Revocation details changed'),
  'company.name.changed': label('名称变更', 'Name changed'),
  'company.legal_representative.changed': label('法定代表人变更', 'Legal representative changed'),
  'company.capital.decreased': label('注册资本减少', 'Registered capital decreased'),
  'company.capital.increased': label('注册资本增加', 'Registered capital increased'),
  'company.capital.changed': label('注册资本变更', 'Registered capital changed'),
  'company.shareholders.changed': label('股东变更', 'Shareholders changed'),
  'company.key_personnel.changed': label('主要人员变更', 'Key personnel changed'),
  'company.address.changed': label('地址变更', 'Address changed'),
  'company.business_scope.changed': label('经营范围变更', 'Business scope changed'),
  'company.type.changed': label('企业类型变更', 'Company type changed'),
  'company.operating_period.changed': label('营业期限变更', 'Operating period changed'),
  'company.listing.changed': label('上市状态变更', 'Listing changed'),
  'company.industry.changed': label('行业变更', 'Industry changed'),
  'company.insured_employees.changed': label('参保人数变更', 'Insured employees changed'),
  'company.registration.changed': label('登记信息变更', 'Registration details changed'),
  'company.other.changed': label('其他信息变更', 'Other details changed'),
  'company.extra.changed': label('未列明字段变更', 'Undocumented field changed'),
  'related.status.changed': label('股东登记状态异常', 'Shareholder status changed'),
  'related.revoked': label('股东被吊销', 'Shareholder revoked'),
  'related.liquidation.opened': label('股东进入清算', 'Shareholder in liquidation'),
  'related.liquidation.closed': label('股东清算组撤销', 'Shareholder liquidation closed'),
  'related.legal_representative.changed': label(
    '股东法定代表人变更',
    'Shareholder legal representative changed',
  ),
  'related.capital.decreased': label('股东减少注册资本', 'Shareholder capital decreased'),
  'company.first_seen': label('首次记录', 'First recorded'),
  'company.disappeared': label('查询不到该企业', 'No longer found'),
  'company.reappeared': label('企业重新出现', 'Found again'),
  'company.stale_answer.ignored': label('忽略过期的应答', 'Outdated answer ignored'),
  'company.resolution.changed': label('关键词指向另一家企业', 'Keyword now finds another company'),
  'company.resolution.mismatch': label('统一社会信用代码不符', 'Credit code does not match'),
  'cycle.completed': label('周期完成', 'Cycle completed'),
  'cycle.paused': label('周期暂停', 'Cycle paused'),
  'upstream.refusing': label('上游持续拒绝', 'Upstream keeps refusing'),
  'entry.failed': label('监控条目失败', 'Watch entry failed'),
  'endpoint.disabled': label('推送地址已停用', 'Endpoint disabled'),
  'endpoint.recovered': label('推送地址已恢复', 'Endpoint recovered'),
  'digest.daily': label('每日摘要', 'Daily digest'),
} as const satisfies Record<string, Words>;

/** The words a table gives `key`, its own only: `constructor` or `toString` are no code's words. */
function ownWords(table: object, key: string): Words | undefined {
  return Object.hasOwn(table, key) ? (table as Record<string, Words>)[key] : undefined;
}

/** What an event type is called in `lang`; a type nobody labelled is "another event". */
export function eventTypeLabel(type: string, lang: Lang): string {
  const words = ownWords(EVENT_TYPE_LABELS, type);
  if (words) return words[lang];
  return lang === 'zh' ? '其他事件' : 'Another event';
}

export type TokenGroup = keyof typeof TOKENS;

/** The words of `token` of `group` in `lang`; a token nobody labelled is shown as "other". */
export function tokenLabel(group: TokenGroup, token: string | null | undefined, lang: Lang): string {
  if (token === null || token === undefined || token === '') return '';
  const words = ownWords(TOKENS[group], token);
  if (words) return words[lang];
  // Several refinements at once (a shareholder renamed and retyped).
  if (token.includes(','))
    return token
      .split(',')
      .map((t) => tokenLabel(group, t.trim(), lang))
      .join(lang === 'zh' ? '、' : ', ');
  return lang === 'zh' ? '其他' : 'other';
}

/**
 * Names of daybook's own machinery that `daybook status` shows: jobs and their queues, job
 * states, upstream operations, export kinds, the JSON types format drift speaks of. Ordinary
 * English words, kept out of TOKENS (which lists what must never show untranslated in Chinese).
 */
export const OPERATION_WORDS = {
  job: {
    plan: label('计划', 'plan'),
    enterprise: label('企业查询', 'company lookups'),
    products: label('产品榜单', 'product lists'),
    'product-detail': label('产品详情', 'product detail'),
    'cycle-complete': label('周期收尾', 'cycle completion'),
    cycle: label('周期收尾', 'cycle completion'),
  },
  job_state: {
    waiting: label('等待', 'waiting'),
    active: label('运行中', 'running'),
    delayed: label('延后', 'delayed'),
    failed: label('失败', 'failed'),
  },
  operation: {
    'enterprise-search': label('企业查询接口', 'company search'),
    'product-listing': label('产品榜单接口', 'product list'),
  },
  export_kind: {
    full: label('全量', 'full'),
    incremental: label('增量', 'incremental'),
  },
  json_type: {
    string: label('文本', 'text'),
    number: label('数字', 'number'),
    integer: label('整数', 'whole number'),
    boolean: label('布尔值', 'yes/no'),
    object: label('对象', 'object'),
    array: label('列表', 'list'),
    null: label('空值', 'null'),
    absent: label('缺失', 'absent'),
    undocumented: label('文档未列明', 'undocumented'),
    'non-finite number': label('非有限数字', 'non-finite number'),
    'integer beyond 32 bits (stored as null)': label(
      '超出 32 位的整数（存为空值）',
      'integer beyond 32 bits (stored as null)',
    ),
    'a value Postgres stores': label('Postgres 可存储的值', 'a value Postgres stores'),
    'bytes that are not UTF-8 text (kept in body_bytes)': label(
      '不是 UTF-8 文本的字节（原样保存）',
      'bytes that are not UTF-8 text (kept as received)',
    ),
  },
} as const satisfies Record<string, Record<string, Words>>;

/**
 * The kinds of credits the reports show apart (`daybook status`, `daybook run`, the console's
 * overview): confirmed, the upstream answered and billed (ledger status `booked`); unconfirmed,
 * calls sent and never answered, or cut off by a process that died (`unconfirmed` and
 * `presumed`), which may have been billed; unpriced, product calls booked without an amount.
 */
export const CREDIT_LABELS = {
  confirmed: label('已确认', 'confirmed'),
  unconfirmed: label('未确认', 'unconfirmed'),
  unconfirmedNote: label(
    '调用已发出但未得到应答，或进程中断，可能已扣费',
    'calls sent and never answered, or cut off by a process that died: they may have been billed',
  ),
  unpriced: label('未计价的产品调用', 'unpriced product calls'),
  unpricedNote: label('上游未公布价格，不计入积分', 'no documented amount, not in the sums'),
} as const satisfies Record<string, Words>;

/** The words of an outcome or reason code (`not_found`, `server_error`); see below for one nobody labelled. */
export function reasonWord(code: string | null | undefined, lang: Lang): string {
  if (!code) return '';
  if (Object.hasOwn(TOKENS.reason, code)) return tokenLabel('reason', code, lang);
  // A code nobody labelled (a new upstream error code, say): as written, its underscores as
  // spaces, and marked as "other" in Chinese so that no bare English token stands alone there.
  return lang === 'zh' ? `其他（${code.replaceAll('_', ' ')}）` : code.replaceAll('_', ' ');
}

/** The words of a name of `group` in `lang`; a name nobody labelled is shown as written. */
export function operationWord(group: keyof typeof OPERATION_WORDS, name: string, lang: Lang): string {
  return (OPERATION_WORDS[group] as Record<string, Words>)[name]?.[lang] ?? name;
}

/** The columns of the tables `daybook status` prints (watch entries, runs, format drift). */
export const STATUS_COLUMNS: Readonly<Record<string, Words>> = {
  keyword: label('监控关键词', 'Watch keyword'),
  uscc: label('统一社会信用代码', 'USCC'),
  reason: label('原因', 'Reason'),
  detail: label('说明', 'Detail'),
  attempts: label('尝试次数', 'Attempts'),
  date: label('榜单日期', 'List date'),
  pull: label('拉取', 'Pull'),
  kind: label('任务', 'Job'),
  entity: label('对象', 'Subject'),
  finished_at: label('结束时间（北京）', 'Finished (Beijing)'),
  operation: label('接口', 'Operation'),
  field: label('字段', 'Field'),
  drift: label('类别', 'Kind'),
  seen: label('实际', 'Seen'),
  expected: label('应为', 'Expected'),
  responses: label('应答数', 'Answers'),
  first_seen_at: label('首次出现（北京）', 'First seen (Beijing)'),
  last_seen_at: label('最近出现（北京）', 'Last seen (Beijing)'),
};

/** The spec of an enterprise field, by upstream name or by column; undefined when none has it. */
export function enterpriseField(name: string): FieldSpec | undefined {
  return ENTERPRISE_FIELDS[name] ?? ENTERPRISE_COLUMNS[name];
}

/**
 * The label of a field, by upstream name or column, in `lang`. A field no catalogue names (an
 * undocumented field the upstream added) is labelled as such, with its name in brackets: it has
 * no other name.
 */
export function fieldLabel(
  name: string,
  lang: Lang,
  catalogue: 'enterprise' | 'product' = 'enterprise',
): string {
  const spec = catalogue === 'product' ? (PRODUCT_FIELDS[name] ?? undefined) : enterpriseField(name);
  if (spec) return spec[lang];
  return lang === 'zh' ? `未列明字段（${name}）` : `Undocumented field (${name})`;
}

/** The provinces of GB/T 2260 by their two-digit code. */
export const PROVINCES: Readonly<Record<string, Words>> = {
  '11': label('北京市', 'Beijing'),
  '12': label('天津市', 'Tianjin'),
  '13': label('河北省', 'Hebei'),
  '14': label('山西省', 'Shanxi'),
  '15': label('内蒙古自治区', 'Inner Mongolia'),
  '21': label('辽宁省', 'Liaoning'),
  '22': label('吉林省', 'Jilin'),
  '23': label('黑龙江省', 'Heilongjiang'),
  '31': label('上海市', 'Shanghai'),
  '32': label('江苏省', 'Jiangsu'),
  '33': label('浙江省', 'Zhejiang'),
  '34': label('安徽省', 'Anhui'),
  '35': label('福建省', 'Fujian'),
  '36': label('江西省', 'Jiangxi'),
  '37': label('山东省', 'Shandong'),
  '41': label('河南省', 'Henan'),
  '42': label('湖北省', 'Hubei'),
  '43': label('湖南省', 'Hunan'),
  '44': label('广东省', 'Guangdong'),
  '45': label('广西壮族自治区', 'Guangxi'),
  '46': label('海南省', 'Hainan'),
  '50': label('重庆市', 'Chongqing'),
  '51': label('四川省', 'Sichuan'),
  '52': label('贵州省', 'Guizhou'),
  '53': label('云南省', 'Yunnan'),
  '54': label('西藏自治区', 'Tibet'),
  '61': label('陕西省', 'Shaanxi'),
  '62': label('甘肃省', 'Gansu'),
  '63': label('青海省', 'Qinghai'),
  '64': label('宁夏回族自治区', 'Ningxia'),
  '65': label('新疆维吾尔自治区', 'Xinjiang'),
  '71': label('台湾省', 'Taiwan'),
  '81': label('香港特别行政区', 'Hong Kong'),
  '82': label('澳门特别行政区', 'Macao'),
};

/** The sections of GB/T 4754 by letter. */
export const INDUSTRY_SECTIONS: Readonly<Record<string, Words>> = {
  A: label('农、林、牧、渔业', 'Agriculture'),
  B: label('采矿业', 'Mining'),
  C: label('制造业', 'Manufacturing'),
  D: label('电力、热力、燃气及水生产和供应业', 'Utilities'),
  E: label('建筑业', 'Construction'),
  F: label('批发和零售业', 'Wholesale and retail'),
  G: label('交通运输、仓储和邮政业', 'Transport and storage'),
  H: label('住宿和餐饮业', 'Hotels and catering'),
  I: label('信息传输、软件和信息技术服务业', 'Information and software'),
  J: label('金融业', 'Finance'),
  K: label('房地产业', 'Real estate'),
  L: label('租赁和商务服务业', 'Leasing and business services'),
  M: label('科学研究和技术服务业', 'Research and technical services'),
  N: label('水利、环境和公共设施管理业', 'Water, environment and public facilities'),
  O: label('居民服务、修理和其他服务业', "Residents' services"),
  P: label('教育', 'Education'),
  Q: label('卫生和社会工作', 'Health and social work'),
  R: label('文化、体育和娱乐业', 'Culture, sports and entertainment'),
  S: label('公共管理、社会保障和社会组织', 'Public administration'),
  T: label('国际组织', 'International organisations'),
};

/** Currencies by ISO code: the word after 万 in Chinese. */
const CURRENCY_WORDS: Readonly<Record<string, string>> = {
  CNY: '元人民币',
  USD: '美元',
  HKD: '港元',
  EUR: '欧元',
  JPY: '日元',
  GBP: '英镑',
  AUD: '澳元',
  CAD: '加元',
  SGD: '新加坡元',
  CHF: '瑞士法郎',
  TWD: '新台币',
  MOP: '澳门元',
  KRW: '韩元',
  RUB: '卢布',
};

/** An ISO currency as a person names it: 人民币, 美元; CNY, USD in English. */
export function currencyName(code: string | null, lang: Lang): string {
  if (code === null || code === '') return '';
  if (lang === 'en') return code;
  const w = CURRENCY_WORDS[code];
  return w ? w.replace(/^元/, '') : code;
}

const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/** `dec` × 10^places on decimal strings, exactly; trailing fraction zeros dropped. */
function shift(dec: string, places: number): string {
  const neg = dec.startsWith('-');
  const [int = '0', frac = ''] = (neg ? dec.slice(1) : dec).split('.');
  const digits = (int + frac).replace(/^0+(?=\d)/, '');
  const point = int.replace(/^0+(?=\d)/, '').length + places;
  let out: string;
  if (point <= 0) out = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  out = out.replace(/^0+(?=\d)/, '');
  if (out.includes('.')) out = out.replace(/0+$/, '').replace(/\.$/, '');
  return neg && out !== '0' ? `-${out}` : out;
}

/** A decimal string with thousands separators on its whole part. */
export function grouped(dec: string): string {
  const [int = '0', frac] = dec.split('.');
  const g = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac === undefined ? g : `${g}.${frac}`;
}

/**
 * Registered capital, one way everywhere: an amount in whole currency units shown in 万 of its
 * currency in Chinese (`1,049,760 万元人民币`, as the registry states it) and in millions in
 * English (`CNY 10,497.6 million`). Before and after always share the scale. An amount whose
 * currency is unknown says so; text that is no amount is shown as written.
 */
export function formatMoney(amount: string | null, currency: string | null, lang: Lang): string {
  if (amount === null || amount === '') return '';
  const a = amount.trim();
  if (!DECIMAL.test(a)) return amount;
  if (lang === 'zh') {
    const cur = currency ? (CURRENCY_WORDS[currency] ?? `${currency}`) : '元（币种未知）';
    return `${grouped(shift(a, -4))} 万${cur}`;
  }
  return `${currency ?? '(currency unknown)'} ${grouped(shift(a, -6))} million`;
}

/** The words of a yes/no value ('1', 'true' …), or the value as written. */
function flag(v: string, lang: Lang): string {
  const yes = /^(1|true|t|是|yes|y)$/i.test(v.trim());
  const no = /^(0|false|f|否|no|n)$/i.test(v.trim());
  if (yes) return lang === 'zh' ? '是' : 'yes';
  if (no) return lang === 'zh' ? '否' : 'no';
  return v;
}

/** A timestamp as a Beijing date and time (YYYY-MM-DD HH:mm), whatever the machine's zone. */
export function beijingTime(at: Date | string): string {
  const d = typeof at === 'string' ? new Date(at) : at;
  if (Number.isNaN(d.getTime())) return String(at);
  return new Date(d.getTime() + 8 * 3_600_000).toISOString().slice(0, 16).replace('T', ' ');
}

/** The English units of a count of one. */
const SINGULAR: Readonly<Record<string, string>> = {
  people: 'person',
  holders: 'holder',
  votes: 'vote',
  comments: 'comment',
};

/** What a value is shown with: the currency of a capital amount. */
export interface ValueContext {
  currency?: string | null;
}

/** A value of kind `kind` as a person reads it in `lang`. */
export function formatKind(
  kind: FieldKind,
  value: string | null,
  lang: Lang,
  ctx: ValueContext = {},
  unit?: FieldSpec['unit'],
): string {
  if (value === null || value === undefined) return '';
  const v = String(value);
  switch (kind) {
    case 'money':
      return formatMoney(v, ctx.currency ?? null, lang);
    case 'currency':
      return currencyName(v, lang);
    case 'date':
      return /^\d{4}-\d{2}-\d{2}/.test(v) ? v.slice(0, 10) : v;
    case 'time':
      return beijingTime(v);
    case 'flag':
      return flag(v, lang);
    case 'period_end':
      return v === 'perpetual' ? (lang === 'zh' ? '长期' : 'perpetual') : v;
    case 'province':
      return PROVINCES[v.slice(0, 2)]?.[lang] ?? v;
    case 'industry_section': {
      const s = INDUSTRY_SECTIONS[v.trim().toUpperCase()];
      return s ? `${s[lang]}` : v;
    }
    case 'count': {
      const n = v.trim();
      if (!unit || !/^\d+$/.test(n)) return v;
      const u = lang === 'en' && n === '1' ? (SINGULAR[unit.en] ?? unit.en) : unit[lang];
      return u ? `${grouped(n)} ${u}` : grouped(n);
    }
    case 'text':
    case 'code':
    case 'list':
      return v;
    default: {
      const never: never = kind;
      return String(never);
    }
  }
}

/** A value of an enterprise field (upstream name or column) as a person reads it in `lang`. */
export function formatField(name: string, value: string | null, lang: Lang, ctx: ValueContext = {}): string {
  const spec = enterpriseField(name);
  if (!spec) return value ?? '';
  return formatKind(spec.kind, value, lang, ctx, spec.unit);
}

/**
 * A shareholder as a change row describes it (`某某有限公司 [企业法人] PID …`, see
 * history/classify.ts), as a person reads it: the name and type, and the holder's credit code
 * when daybook knows it, never its internal id.
 */
export function formatHolder(
  value: string,
  lang: Lang,
  usccOf: (pid: string) => string | null = () => null,
): string {
  const m = /^(.*?)(?: \[([^\]]*)\])?(?: PID (\S+))?( \{.*\})?$/s.exec(value);
  if (!m) return value;
  const [, name = '', type, pid, extra] = m;
  const uscc = pid ? usccOf(pid) : null;
  const open = lang === 'zh' ? '（' : ' (';
  const close = lang === 'zh' ? '）' : ')';
  const sep = lang === 'zh' ? '，' : ', ';
  const notes = [type, uscc ? `${lang === 'zh' ? '统一社会信用代码' : 'USCC'} ${uscc}` : null].filter(
    (x): x is string => !!x,
  );
  return `${name}${notes.length ? `${open}${notes.join(sep)}${close}` : ''}${extra ?? ''}`;
}

/** The PID a shareholder change row names, if any. */
export function holderPid(value: string | null): string | null {
  return value === null ? null : (/ PID (\S+)/.exec(value)?.[1] ?? null);
}

/**
 * The before or after of a change row as a person reads it: a capital amount with its unit and
 * currency, a date, a code as its name, a shareholder without internal ids.
 */
export function formatChangeValue(
  field: string | null,
  value: string | null,
  lang: Lang,
  ctx: ValueContext & { usccOf?: (pid: string) => string | null } = {},
): string {
  if (value === null) return '';
  if (field === 'BE_INVEST') return formatHolder(value, lang, ctx.usccOf);
  if (field === null) return value;
  return formatField(field, value, lang, ctx);
}

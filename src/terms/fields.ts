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

export interface FieldSpec {
  zh: string;
  en: string;
  kind: FieldKind;
  /** The unit of a count, in each language. */
  unit?: { zh: string; en: string };
}

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
  participants: f('参保人数', 'Insured employees', 'count', { zh: '人', en: 'people' }),
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

/** The columns daybook stores or derives, by name, as the analytics views and the console have them. */
export const ENTERPRISE_COLUMNS: Readonly<Record<string, FieldSpec>> = {
  pid: ENTERPRISE_FIELDS.PID as FieldSpec,
  ent_name: ENTERPRISE_FIELDS.ENTNAME as FieldSpec,
  history_name: ENTERPRISE_FIELDS.HISTORYNAME as FieldSpec,
  uncid: ENTERPRISE_FIELDS.UNCID as FieldSpec,
  reg_no: ENTERPRISE_FIELDS.REGNO as FieldSpec,
  legal_person: ENTERPRISE_FIELDS.LEGALPERSON as FieldSpec,
  legal_person_desc: ENTERPRISE_FIELDS.LEGALPERSONDESC as FieldSpec,
  ent_type: ENTERPRISE_FIELDS.ENTTYPE as FieldSpec,
  ent_type_code: ENTERPRISE_FIELDS.ENTTYPECODE as FieldSpec,
  ent_status: ENTERPRISE_FIELDS.ENTSTATUS as FieldSpec,
  reg_cap: f('注册资本（登记数额）', 'Registered capital (as registered)', 'text'),
  capital_unit: f('注册资本单位', 'Capital unit', 'text'),
  capital_currency: ENTERPRISE_FIELDS.REGCAPCUR as FieldSpec,
  capital_amount: ENTERPRISE_FIELDS.REGCAP as FieldSpec,
  capital_text: f('注册资本币种（原文）', 'Capital currency (as written)', 'text'),
  province: ENTERPRISE_FIELDS.PROVINCE as FieldSpec,
  es_date: ENTERPRISE_FIELDS.ESDATE as FieldSpec,
  op_from: ENTERPRISE_FIELDS.OPFROM as FieldSpec,
  operating_to: ENTERPRISE_FIELDS.OPTO as FieldSpec,
  operating_perpetual: f('长期经营', 'Perpetual', 'flag'),
  operating_to_text: f('营业期限至（原文）', 'Operating until (as written)', 'text'),
  reg_org: ENTERPRISE_FIELDS.REGORG as FieldSpec,
  appr_date: ENTERPRISE_FIELDS.APPRDATE as FieldSpec,
  revoke_date: ENTERPRISE_FIELDS.REVOKEDATE as FieldSpec,
  revoke_reason: ENTERPRISE_FIELDS.REVOKEREASON as FieldSpec,
  op_loc: ENTERPRISE_FIELDS.OPLOC as FieldSpec,
  op_scope: ENTERPRISE_FIELDS.OPSCOPE as FieldSpec,
  participants: f('参保人数（原文）', 'Insured employees (as written)', 'text'),
  participants_count: ENTERPRISE_FIELDS.participants as FieldSpec,
  industry_phy: ENTERPRISE_FIELDS.INDUSTRYPHY as FieldSpec,
  industry_big: ENTERPRISE_FIELDS.INDUSTRYBIG as FieldSpec,
  industry_middle: ENTERPRISE_FIELDS.industry_middle as FieldSpec,
  is_listed: ENTERPRISE_FIELDS.IS_LISTED as FieldSpec,
  sconform: ENTERPRISE_FIELDS.SCONFORM as FieldSpec,
  persons: ENTERPRISE_FIELDS.PERSONS as FieldSpec,
  shareholders: ENTERPRISE_FIELDS.BE_INVEST as FieldSpec,
  clearing_members: ENTERPRISE_FIELDS['CLEARINGINFO.member'] as FieldSpec,
  persons_count: f('主要人员数', 'Key personnel', 'count', { zh: '人', en: 'people' }),
  shareholders_count: f('股东数', 'Shareholders', 'count', { zh: '名', en: 'holders' }),
  clearing_members_count: f('清算组人数', 'Committee members', 'count', { zh: '人', en: 'people' }),
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
  pid: ENTERPRISE_FIELDS.PID as FieldSpec,
  ent_name: ENTERPRISE_FIELDS.ENTNAME as FieldSpec,
  uncid: ENTERPRISE_FIELDS.UNCID as FieldSpec,
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
  votes_count: f('投票数', 'Votes', 'count', { zh: '票', en: 'votes' }),
  comments_count: f('评论数', 'Comments', 'count', { zh: '条', en: 'comments' }),
  created_at: f('创建时间', 'Created', 'time'),
  featured_at: f('推荐时间', 'Featured', 'time'),
  topics: f('话题', 'Topics', 'list'),
  media: f('媒体', 'Media', 'list'),
  thumbnail: f('缩略图', 'Thumbnail', 'text'),
  product_links: f('产品链接', 'Links', 'list'),
  comments: f('评论', 'Comments', 'list'),
  updated_at: f('更新时间', 'Updated', 'time'),
  position: f('排名', 'Rank', 'count', { zh: '名', en: '' }),
  list_date: f('榜单日期', 'List date', 'date'),
  fetched_at: f('抓取时间', 'Fetched', 'time'),
};

/** The words of each enumerated token, by the group it belongs to. */
export const TOKENS = {
  severity: {
    high: { zh: '高', en: 'high' },
    medium: { zh: '中', en: 'medium' },
    low: { zh: '低', en: 'low' },
  },
  kind: {
    added: { zh: '新增', en: 'added' },
    removed: { zh: '移除', en: 'removed' },
    modified: { zh: '变更', en: 'changed' },
  },
  detail: {
    increase: { zh: '增资', en: 'increase' },
    decrease: { zh: '减资', en: 'decrease' },
    to_bad: { zh: '转为异常状态', en: 'moved to a bad status' },
    revoked: { zh: '被吊销', en: 'revoked' },
    opened: { zh: '进入清算', en: 'liquidation opened' },
    closed: { zh: '清算组撤销', en: 'liquidation closed' },
    position_changed: { zh: '职务变更', en: 'position changed' },
    extra_changed: { zh: '其他信息变更', en: 'other details changed' },
    renamed: { zh: '名称变更', en: 'renamed' },
    type_changed: { zh: '类型变更', en: 'type changed' },
    pid_changed: { zh: '企业关联变更', en: 'linked company changed' },
  },
  category: {
    name: { zh: '名称', en: 'Name' },
    legal_representative: { zh: '法定代表人', en: 'Legal representative' },
    registered_capital: { zh: '注册资本', en: 'Registered capital' },
    status: { zh: '登记状态', en: 'Status' },
    address: { zh: '住所', en: 'Address' },
    business_scope: { zh: '经营范围', en: 'Business scope' },
    enterprise_type: { zh: '企业类型', en: 'Company type' },
    operating_period: { zh: '营业期限', en: 'Operating period' },
    revocation: { zh: '吊销信息', en: 'Revocation' },
    listing: { zh: '上市状态', en: 'Listing' },
    industry: { zh: '行业', en: 'Industry' },
    key_personnel: { zh: '主要人员', en: 'Key personnel' },
    shareholders: { zh: '股东', en: 'Shareholders' },
    liquidation: { zh: '清算信息', en: 'Liquidation' },
    insured_employees: { zh: '参保人数', en: 'Insured employees' },
    registration: { zh: '登记信息', en: 'Registration' },
    other: { zh: '其他', en: 'Other' },
    extra: { zh: '未列明字段', en: 'Undocumented field' },
    // Product categories not named above.
    identity: { zh: '标识', en: 'Identity' },
    tagline: { zh: '标语', en: 'Tagline' },
    description: { zh: '简介', en: 'Description' },
    url: { zh: '产品页面', en: 'Product page' },
    timing: { zh: '时间', en: 'Timing' },
    topics: { zh: '话题', en: 'Topics' },
    media: { zh: '媒体', en: 'Media' },
    links: { zh: '产品链接', en: 'Links' },
    thumbnail: { zh: '缩略图', en: 'Thumbnail' },
  },
  presence: {
    present: { zh: '可查询', en: 'found' },
    disappeared: { zh: '查询不到', en: 'not found' },
  },
  /** Where a watch entry stands in a cycle (`cycle_fetches.status`), as `daybook status` counts it. */
  fetch_status: {
    planned: { zh: '待查询', en: 'planned' },
    deferred: { zh: '推迟', en: 'deferred' },
    skipped: { zh: '跳过', en: 'skipped' },
    fetching: { zh: '查询中', en: 'being fetched' },
    retrying: { zh: '等待重试', en: 'waiting to retry' },
    succeeded: { zh: '已查询', en: 'fetched' },
    duplicate: { zh: '与其他条目为同一企业', en: "another entry's company" },
    failed: { zh: '失败', en: 'failed' },
  },
  /**
   * Why an entry was deferred, skipped or failed, or a run failed (`cycle_fetches.error_code`,
   * `runs.error_code`): the planner's reasons, the upstream's documented error codes and daybook's own.
   */
  reason: {
    success: { zh: '成功', en: 'success' },
    credit_budget: { zh: '积分预算不足', en: 'credit budget reached' },
    rate_window: { zh: '调用频率限制内排不下', en: 'no room left in the rate limit' },
    max_entries: { zh: '达到每周期条目上限', en: 'entries per cycle cap reached' },
    related_share: { zh: '股东份额已用完', en: "shareholders' share of the cycle used" },
    added_after_plan: { zh: '计划后新加入', en: 'added after the plan' },
    unknown: { zh: '原因不明', en: 'reason unknown' },
    already_fetched_this_cycle: { zh: '本周期已查询', en: 'already fetched this cycle' },
    duplicate_pid: { zh: '与其他条目为同一企业', en: "another entry's company" },
    permanent_error_recent: { zh: '近期已永久失败', en: 'failed for good recently' },
    inactive: { zh: '监控条目已移除', en: 'watch entry removed' },
    paused: { zh: '周期已暂停', en: 'cycle paused' },
    not_found: { zh: '查无结果', en: 'not found' },
    invalid_parameter: { zh: '参数无效', en: 'invalid parameter' },
    invalid_request: { zh: '请求无效', en: 'invalid request' },
    invalid_date: { zh: '日期无效', en: 'invalid date' },
    invalid_product_name: { zh: '产品名称无效', en: 'invalid product name' },
    missing_parameters: { zh: '缺少参数', en: 'missing parameters' },
    unauthorized: { zh: '未授权', en: 'unauthorized' },
    forbidden: { zh: '禁止访问', en: 'forbidden' },
    invalid_api_key: { zh: 'API 密钥无效', en: 'invalid API key' },
    missing_api_key: { zh: '缺少 API 密钥', en: 'missing API key' },
    insufficient_credits: { zh: '积分不足', en: 'insufficient credits' },
    budget_exhausted: { zh: '积分预算用完', en: 'credit budget used up' },
    rate_limit_exceeded: { zh: '超出调用频率限制', en: 'rate limit exceeded' },
    rate_limited: { zh: '调用频率受限', en: 'rate limited' },
    server_error: { zh: '上游服务器错误', en: 'upstream server error' },
    upstream_error: { zh: '上游错误', en: 'upstream error' },
    timeout: { zh: '超时', en: 'timed out' },
    network_error: { zh: '网络错误', en: 'network error' },
    unexpected_response: { zh: '应答格式不符', en: 'unexpected answer' },
    malformed_body: { zh: '应答无法解析', en: 'unreadable answer' },
    body_too_large: { zh: '应答过大', en: 'answer too large' },
    body_too_deep: { zh: '应答嵌套过深', en: 'answer nested too deep' },
    unusable_answer: { zh: '应答不可用', en: 'unusable answer' },
    resolution_mismatch: { zh: '统一社会信用代码不符', en: 'credit code does not match' },
    claim_lost: { zh: '条目已由其他进程接手', en: 'taken over by another worker' },
    worker_died: { zh: '工作进程多次中断', en: 'its worker died too often' },
    unanswered: { zh: '两次调用均无应答（可能已扣费）', en: 'no answer twice (may have been billed)' },
    bad_job_data: { zh: '任务数据无效', en: 'invalid job data' },
  },
  /** What kind of format drift an upstream answer showed (`format_drift.kind`). */
  drift_kind: {
    unknown_field: { zh: '未列明字段', en: 'unknown field' },
    missing_field: { zh: '缺失字段', en: 'missing field' },
    type_variant: { zh: '类型或格式不符', en: 'type or format variant' },
  },
} as const satisfies Record<string, Record<string, { zh: string; en: string }>>;

/** The words of each event type (src/events/catalogue.ts checks that every type has them). */
export const EVENT_TYPE_LABELS = {
  'company.status.changed': { zh: '登记状态变更', en: 'Status changed' },
  'company.liquidation.opened': { zh: '进入清算', en: 'Liquidation opened' },
  'company.liquidation.closed': { zh: '清算组撤销', en: 'Liquidation closed' },
  'company.liquidation.members.changed': { zh: '清算组成员变更', en: 'Liquidation committee changed' },
  'company.revoked': { zh: '被吊销', en: 'Revoked' },
  'company.revocation.changed': { zh: '吊销信息变更', en: 'Revocation details changed' },
  'company.name.changed': { zh: '名称变更', en: 'Name changed' },
  'company.legal_representative.changed': { zh: '法定代表人变更', en: 'Legal representative changed' },
  'company.capital.decreased': { zh: '注册资本减少', en: 'Registered capital decreased' },
  'company.capital.increased': { zh: '注册资本增加', en: 'Registered capital increased' },
  'company.capital.changed': { zh: '注册资本变更', en: 'Registered capital changed' },
  'company.shareholders.changed': { zh: '股东变更', en: 'Shareholders changed' },
  'company.key_personnel.changed': { zh: '主要人员变更', en: 'Key personnel changed' },
  'company.address.changed': { zh: '地址变更', en: 'Address changed' },
  'company.business_scope.changed': { zh: '经营范围变更', en: 'Business scope changed' },
  'company.type.changed': { zh: '企业类型变更', en: 'Company type changed' },
  'company.operating_period.changed': { zh: '营业期限变更', en: 'Operating period changed' },
  'company.listing.changed': { zh: '上市状态变更', en: 'Listing changed' },
  'company.industry.changed': { zh: '行业变更', en: 'Industry changed' },
  'company.insured_employees.changed': { zh: '参保人数变更', en: 'Insured employees changed' },
  'company.registration.changed': { zh: '登记信息变更', en: 'Registration details changed' },
  'company.other.changed': { zh: '其他信息变更', en: 'Other details changed' },
  'company.extra.changed': { zh: '未列明字段变更', en: 'Undocumented field changed' },
  'related.status.changed': { zh: '股东登记状态异常', en: 'Shareholder status changed' },
  'related.revoked': { zh: '股东被吊销', en: 'Shareholder revoked' },
  'related.liquidation.opened': { zh: '股东进入清算', en: 'Shareholder in liquidation' },
  'related.liquidation.closed': { zh: '股东清算组撤销', en: 'Shareholder liquidation closed' },
  'related.legal_representative.changed': {
    zh: '股东法定代表人变更',
    en: 'Shareholder legal representative changed',
  },
  'related.capital.decreased': { zh: '股东减少注册资本', en: 'Shareholder capital decreased' },
  'company.first_seen': { zh: '首次记录', en: 'First recorded' },
  'company.disappeared': { zh: '查询不到该企业', en: 'No longer found' },
  'company.reappeared': { zh: '企业重新出现', en: 'Found again' },
  'company.stale_answer.ignored': { zh: '忽略过期的应答', en: 'Outdated answer ignored' },
  'company.resolution.changed': { zh: '关键词指向另一家企业', en: 'Keyword now finds another company' },
  'company.resolution.mismatch': { zh: '统一社会信用代码不符', en: 'Credit code does not match' },
  'cycle.completed': { zh: '周期完成', en: 'Cycle completed' },
  'cycle.paused': { zh: '周期暂停', en: 'Cycle paused' },
  'upstream.refusing': { zh: '上游持续拒绝', en: 'Upstream keeps refusing' },
  'entry.failed': { zh: '监控条目失败', en: 'Watch entry failed' },
  'endpoint.disabled': { zh: '推送地址已停用', en: 'Endpoint disabled' },
  'endpoint.recovered': { zh: '推送地址已恢复', en: 'Endpoint recovered' },
  'digest.daily': { zh: '每日摘要', en: 'Daily digest' },
} as const satisfies Record<string, { zh: string; en: string }>;

/** What an event type is called in `lang`; a type nobody labelled is "another event". */
export function eventTypeLabel(type: string, lang: Lang): string {
  const words = (EVENT_TYPE_LABELS as Record<string, { zh: string; en: string }>)[type];
  if (words) return words[lang];
  return lang === 'zh' ? '其他事件' : 'Another event';
}

export type TokenGroup = keyof typeof TOKENS;

/** The words of `token` of `group` in `lang`; a token nobody labelled is shown as "other". */
export function tokenLabel(group: TokenGroup, token: string | null | undefined, lang: Lang): string {
  if (token === null || token === undefined || token === '') return '';
  const words = (TOKENS[group] as Record<string, { zh: string; en: string }>)[token];
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
    plan: { zh: '计划', en: 'plan' },
    enterprise: { zh: '企业查询', en: 'company lookups' },
    products: { zh: '产品榜单', en: 'product lists' },
    'product-detail': { zh: '产品详情', en: 'product detail' },
    'cycle-complete': { zh: '周期收尾', en: 'cycle completion' },
    cycle: { zh: '周期收尾', en: 'cycle completion' },
  },
  job_state: {
    waiting: { zh: '等待', en: 'waiting' },
    active: { zh: '运行中', en: 'running' },
    delayed: { zh: '延后', en: 'delayed' },
    failed: { zh: '失败', en: 'failed' },
  },
  operation: {
    'enterprise-search': { zh: '企业查询接口', en: 'company search' },
    'product-listing': { zh: '产品榜单接口', en: 'product list' },
  },
  export_kind: {
    full: { zh: '全量', en: 'full' },
    incremental: { zh: '增量', en: 'incremental' },
  },
  json_type: {
    string: { zh: '文本', en: 'text' },
    number: { zh: '数字', en: 'number' },
    integer: { zh: '整数', en: 'whole number' },
    boolean: { zh: '布尔值', en: 'yes/no' },
    object: { zh: '对象', en: 'object' },
    array: { zh: '列表', en: 'list' },
    null: { zh: '空值', en: 'null' },
    absent: { zh: '缺失', en: 'absent' },
    undocumented: { zh: '文档未列明', en: 'undocumented' },
    'non-finite number': { zh: '非有限数字', en: 'non-finite number' },
    'integer beyond 32 bits (stored as null)': {
      zh: '超出 32 位的整数（存为空值）',
      en: 'integer beyond 32 bits (stored as null)',
    },
    'a value Postgres stores': { zh: 'Postgres 可存储的值', en: 'a value Postgres stores' },
    'bytes that are not UTF-8 text (kept in body_bytes)': {
      zh: '不是 UTF-8 文本的字节（原样保存）',
      en: 'bytes that are not UTF-8 text (kept as received)',
    },
  },
} as const satisfies Record<string, Record<string, { zh: string; en: string }>>;

/**
 * The kinds of credits the reports show apart (`daybook status`, `daybook run`, the console's
 * overview): confirmed, the upstream answered and billed (ledger status `booked`); unconfirmed,
 * calls sent and never answered, or cut off by a process that died (`unconfirmed` and
 * `presumed`), which may have been billed; unpriced, product calls booked without an amount.
 */
export const CREDIT_LABELS = {
  confirmed: { zh: '已确认', en: 'confirmed' },
  unconfirmed: { zh: '未确认', en: 'unconfirmed' },
  unconfirmedNote: {
    zh: '调用已发出但未得到应答，或进程中断，可能已扣费',
    en: 'calls sent and never answered, or cut off by a process that died: they may have been billed',
  },
  unpriced: { zh: '未计价的产品调用', en: 'unpriced product calls' },
  unpricedNote: { zh: '上游未公布价格，不计入积分', en: 'no documented amount, not in the sums' },
} as const satisfies Record<string, { zh: string; en: string }>;

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
  return (OPERATION_WORDS[group] as Record<string, { zh: string; en: string }>)[name]?.[lang] ?? name;
}

/** The columns of the tables `daybook status` prints (watch entries, runs, format drift). */
export const STATUS_COLUMNS: Readonly<Record<string, { zh: string; en: string }>> = {
  keyword: { zh: '监控关键词', en: 'Watch keyword' },
  uscc: { zh: '统一社会信用代码', en: 'USCC' },
  reason: { zh: '原因', en: 'Reason' },
  detail: { zh: '说明', en: 'Detail' },
  attempts: { zh: '尝试次数', en: 'Attempts' },
  date: { zh: '榜单日期', en: 'List date' },
  pull: { zh: '拉取', en: 'Pull' },
  kind: { zh: '任务', en: 'Job' },
  entity: { zh: '对象', en: 'Subject' },
  finished_at: { zh: '结束时间（北京）', en: 'Finished (Beijing)' },
  operation: { zh: '接口', en: 'Operation' },
  field: { zh: '字段', en: 'Field' },
  drift: { zh: '类别', en: 'Kind' },
  seen: { zh: '实际', en: 'Seen' },
  expected: { zh: '应为', en: 'Expected' },
  responses: { zh: '应答数', en: 'Answers' },
  first_seen_at: { zh: '首次出现（北京）', en: 'First seen (Beijing)' },
  last_seen_at: { zh: '最近出现（北京）', en: 'Last seen (Beijing)' },
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
export const PROVINCES: Readonly<Record<string, { zh: string; en: string }>> = {
  '11': { zh: '北京市', en: 'Beijing' },
  '12': { zh: '天津市', en: 'Tianjin' },
  '13': { zh: '河北省', en: 'Hebei' },
  '14': { zh: '山西省', en: 'Shanxi' },
  '15': { zh: '内蒙古自治区', en: 'Inner Mongolia' },
  '21': { zh: '辽宁省', en: 'Liaoning' },
  '22': { zh: '吉林省', en: 'Jilin' },
  '23': { zh: '黑龙江省', en: 'Heilongjiang' },
  '31': { zh: '上海市', en: 'Shanghai' },
  '32': { zh: '江苏省', en: 'Jiangsu' },
  '33': { zh: '浙江省', en: 'Zhejiang' },
  '34': { zh: '安徽省', en: 'Anhui' },
  '35': { zh: '福建省', en: 'Fujian' },
  '36': { zh: '江西省', en: 'Jiangxi' },
  '37': { zh: '山东省', en: 'Shandong' },
  '41': { zh: '河南省', en: 'Henan' },
  '42': { zh: '湖北省', en: 'Hubei' },
  '43': { zh: '湖南省', en: 'Hunan' },
  '44': { zh: '广东省', en: 'Guangdong' },
  '45': { zh: '广西壮族自治区', en: 'Guangxi' },
  '46': { zh: '海南省', en: 'Hainan' },
  '50': { zh: '重庆市', en: 'Chongqing' },
  '51': { zh: '四川省', en: 'Sichuan' },
  '52': { zh: '贵州省', en: 'Guizhou' },
  '53': { zh: '云南省', en: 'Yunnan' },
  '54': { zh: '西藏自治区', en: 'Tibet' },
  '61': { zh: '陕西省', en: 'Shaanxi' },
  '62': { zh: '甘肃省', en: 'Gansu' },
  '63': { zh: '青海省', en: 'Qinghai' },
  '64': { zh: '宁夏回族自治区', en: 'Ningxia' },
  '65': { zh: '新疆维吾尔自治区', en: 'Xinjiang' },
  '71': { zh: '台湾省', en: 'Taiwan' },
  '81': { zh: '香港特别行政区', en: 'Hong Kong' },
  '82': { zh: '澳门特别行政区', en: 'Macao' },
};

/** The sections of GB/T 4754 by letter. */
export const INDUSTRY_SECTIONS: Readonly<Record<string, { zh: string; en: string }>> = {
  A: { zh: '农、林、牧、渔业', en: 'Agriculture' },
  B: { zh: '采矿业', en: 'Mining' },
  C: { zh: '制造业', en: 'Manufacturing' },
  D: { zh: '电力、热力、燃气及水生产和供应业', en: 'Utilities' },
  E: { zh: '建筑业', en: 'Construction' },
  F: { zh: '批发和零售业', en: 'Wholesale and retail' },
  G: { zh: '交通运输、仓储和邮政业', en: 'Transport and storage' },
  H: { zh: '住宿和餐饮业', en: 'Hotels and catering' },
  I: { zh: '信息传输、软件和信息技术服务业', en: 'Information and software' },
  J: { zh: '金融业', en: 'Finance' },
  K: { zh: '房地产业', en: 'Real estate' },
  L: { zh: '租赁和商务服务业', en: 'Leasing and business services' },
  M: { zh: '科学研究和技术服务业', en: 'Research and technical services' },
  N: { zh: '水利、环境和公共设施管理业', en: 'Water, environment and public facilities' },
  O: { zh: '居民服务、修理和其他服务业', en: "Residents' services" },
  P: { zh: '教育', en: 'Education' },
  Q: { zh: '卫生和社会工作', en: 'Health and social work' },
  R: { zh: '文化、体育和娱乐业', en: 'Culture, sports and entertainment' },
  S: { zh: '公共管理、社会保障和社会组织', en: 'Public administration' },
  T: { zh: '国际组织', en: 'International organisations' },
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

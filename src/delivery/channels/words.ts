/**
 * The words of chat and mail messages, in Chinese (zh, the default) and English (en): what an
 * event type means, the severity, and the labels of a message's lines. Pure.
 */
import { EVENT_TYPES, type EventType } from '../../events/catalogue.ts';
import type { Envelope } from '../../events/feed.ts';

export const LANGS = ['zh', 'en'] as const;
export type Lang = (typeof LANGS)[number];

/** Each event type in a few Chinese words (English comes from the catalogue). */
const ZH_TYPES: Record<EventType, string> = {
  'company.status.changed': '登记状态变更',
  'company.liquidation.opened': '进入清算',
  'company.liquidation.closed': '清算组撤销',
  'company.liquidation.members.changed': '清算组成员变更',
  'company.revoked': '被吊销',
  'company.revocation.changed': '吊销信息变更',
  'company.name.changed': '名称变更',
  'company.legal_representative.changed': '法定代表人变更',
  'company.capital.decreased': '注册资本减少',
  'company.capital.increased': '注册资本增加',
  'company.capital.changed': '注册资本变更',
  'company.shareholders.changed': '股东变更',
  'company.key_personnel.changed': '主要人员变更',
  'company.address.changed': '地址变更',
  'company.business_scope.changed': '经营范围变更',
  'company.type.changed': '企业类型变更',
  'company.operating_period.changed': '营业期限变更',
  'company.listing.changed': '上市状态变更',
  'company.industry.changed': '行业变更',
  'company.insured_employees.changed': '参保人数变更',
  'company.registration.changed': '登记信息变更',
  'company.other.changed': '其他信息变更',
  'company.extra.changed': '未列明字段变更',
  'company.first_seen': '首次记录',
  'company.disappeared': '查询不到该企业',
  'company.reappeared': '企业重新出现',
  'company.stale_answer.ignored': '忽略过期的应答',
  'company.resolution.changed': '关键词指向另一家企业',
  'company.resolution.mismatch': '统一社会信用代码不符',
  'cycle.completed': '周期完成',
  'cycle.paused': '周期暂停',
  'upstream.refusing': '上游持续拒绝',
  'entry.failed': '监控条目失败',
  'endpoint.disabled': '推送地址已停用',
  'endpoint.recovered': '推送地址已恢复',
  'digest.daily': '每日摘要',
};

/** What `type` means, in `lang`. */
export function typeLabel(type: string, lang: Lang): string {
  if (lang === 'zh') return ZH_TYPES[type as EventType] ?? type;
  const spec = EVENT_TYPES[type as EventType];
  return spec ? spec.description : type;
}

const SEVERITY: Record<Lang, Record<Envelope['severity'], string>> = {
  zh: { high: '高', medium: '中', low: '低' },
  en: { high: 'high', medium: 'medium', low: 'low' },
};

export function severityLabel(s: Envelope['severity'], lang: Lang): string {
  return SEVERITY[lang][s];
}

/** The fixed words of a message. */
export const WORDS = {
  zh: {
    company: '企业',
    change: '变更',
    severity: '严重程度',
    cycle: '周期',
    link: '查看',
    reason: '原因',
    digestTitle: (cycle: string) => `daybook 每日摘要 · 周期 ${cycle}`,
    digestSummary: (n: number, high: number, medium: number, low: number) =>
      `${n} 家企业有变化：高 ${high}，中 ${medium}，低 ${low}。`,
    noChanges: '本周期监控的企业没有变化。',
    leftOut: (n: number) => `另有 ${n} 项未列出。`,
    foldedTitle: (n: number) => `daybook：${n} 条事件（发送过于频繁，已合并）`,
    foldedPart: (i: number, of: number) => `（第 ${i}/${of} 部分）`,
    empty: '∅',
  },
  en: {
    company: 'Company',
    change: 'Change',
    severity: 'Severity',
    cycle: 'Cycle',
    link: 'Open',
    reason: 'Reason',
    digestTitle: (cycle: string) => `daybook digest, cycle ${cycle}`,
    digestSummary: (n: number, high: number, medium: number, low: number) =>
      `${n} ${n === 1 ? 'company' : 'companies'} changed: ${high} high, ${medium} medium, ${low} low.`,
    noChanges: 'No changes at the watched companies in this cycle.',
    leftOut: (n: number) => `${n} more ${n === 1 ? 'item' : 'items'} not shown.`,
    foldedTitle: (n: number) => `daybook: ${n} events (sent too fast for the channel, folded)`,
    foldedPart: (i: number, of: number) => ` (part ${i} of ${of})`,
    empty: '∅',
  },
} as const;

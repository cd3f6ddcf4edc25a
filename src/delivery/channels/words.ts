/**
 * The fixed words of chat and mail messages, in Chinese (zh, the default) and English (en). The
 * words of fields, tokens and event types come from the field catalogue (src/terms/fields.ts).
 * Pure.
 */
export { LANGS, type Lang } from '../../terms/fields.ts';

export const WORDS = {
  zh: {
    company: '企业',
    companyId: '企业 ID',
    usccOpen: '（统一社会信用代码 ',
    usccClose: '）',
    colon: '：',
    severity: '严重程度',
    cycle: '周期',
    link: '查看详情',
    reason: '原因',
    keyword: '监控关键词',
    credits: '积分',
    creditCount: (n: number) => `${n} 积分`,
    endpoint: '推送地址',
    andMore: (n: number) => ` 等 ${n} 项变更`,
    digestTitle: (cycle: string) => `daybook 每日摘要 · 周期 ${cycle}`,
    digestSummary: (n: number, high: number, medium: number, low: number) =>
      `${n} 家企业有变化：高 ${high} 项，中 ${medium} 项，低 ${low} 项。`,
    noChanges: '本周期监控的企业没有变化。',
    leftOut: (n: number) => `另有 ${n} 项未列出。`,
    foldedTitle: (n: number) => `daybook：${n} 家企业有变化（发送过于频繁，已合并）`,
    foldedPart: (i: number, of: number) => `（第 ${i}/${of} 部分）`,
    empty: '（无）',
    shareholder: '股东 ',
    heldThrough: '持股路径',
    directShareholder: '直接股东',
  },
  en: {
    company: 'Company',
    companyId: 'Company ID',
    usccOpen: ' (USCC ',
    usccClose: ')',
    colon: ': ',
    severity: 'Severity',
    cycle: 'Cycle',
    link: 'Open in the console',
    reason: 'Reason',
    keyword: 'Watch keyword',
    credits: 'Credits',
    creditCount: (n: number) => `${n} ${n === 1 ? 'credit' : 'credits'}`,
    endpoint: 'Endpoint',
    andMore: (n: number) => ` and ${n - 1} more ${n - 1 === 1 ? 'change' : 'changes'}`,
    digestTitle: (cycle: string) => `daybook digest, cycle ${cycle}`,
    digestSummary: (n: number, high: number, medium: number, low: number) =>
      `${n} ${n === 1 ? 'company' : 'companies'} changed: ${high} high, ${medium} medium, ${low} low.`,
    noChanges: 'No changes at the watched companies in this cycle.',
    leftOut: (n: number) => `${n} more ${n === 1 ? 'item' : 'items'} not shown.`,
    foldedTitle: (n: number) =>
      `daybook: ${n} ${n === 1 ? 'company' : 'companies'} changed (sent too fast for the channel, folded)`,
    foldedPart: (i: number, of: number) => ` (part ${i} of ${of})`,
    empty: '(none)',
    shareholder: 'Shareholder ',
    heldThrough: 'held through',
    directShareholder: 'a direct shareholder',
  },
} as const;

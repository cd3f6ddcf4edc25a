import type { Exchange } from '../../src/upstream/client.ts';
import { EnterpriseSuccess } from '../../src/upstream/schemas.ts';

/** A hand-made enterprise record as the upstream sends it (metadata.content), for unit tests. */
export function sampleEnterpriseRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    PID: 'p-1001',
    ENTNAME: '上海示例科技有限公司',
    HISTORYNAME: '',
    IS_LISTED: 0,
    LEGALPERSON: '张三',
    LEGALPERSONDESC: '法定代表人',
    ESDATE: '2008-05-12T00:00:00.000Z',
    SCONFORM: '货币',
    REGNO: '310141000157096',
    UNCID: '91310115342050446K',
    ENTTYPECODE: '1130',
    ENTTYPE: '有限责任公司',
    REGCAP: 500,
    REGCAPCUR: '万人民币',
    PROVINCE: 31,
    OPFROM: '2008-05-12T00:00:00.000Z',
    OPTO: '2038-05-11',
    REGORG: '上海市市场监督管理局',
    APPRDATE: '2021-03-04T00:00:00.000Z',
    REVOKEDATE: '',
    REVOKEREASON: '',
    ENTSTATUS: '存续',
    OPLOC: '上海市浦东新区张江路 1 号',
    OPSCOPE: '技术开发',
    PERSONS: [
      { NAME: '张三', POSITION: '执行董事' },
      { NAME: '李四', POSITION: '监事' },
    ],
    BE_INVEST: [
      { INV: '张三', INVTYPE: '自然人股东' },
      { PID: 'p-2002', INV: '示例控股有限公司', INVTYPE: '企业法人' },
    ],
    participants: 12,
    INDUSTRYPHY: 'I',
    INDUSTRYBIG: '软件和信息技术服务业',
    industry_middle: '6510',
    CLEARINGINFO: [],
    ...overrides,
  };
}

/** A hand-made product object as the upstream sends it (one item of a product list), for unit tests. */
export function sampleProductRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: '0b7d3c1e-4f7a-4a4e-9d2b-1c2d3e4f5a6b',
    product_id: '912345',
    name: 'Daybook',
    tagline: 'History for your data',
    description: 'Keeps every version.',
    url: 'https://example.com/posts/daybook',
    votes_count: 412,
    comments_count: 37,
    created_at: '2026-11-20T08:01:00',
    featured_at: '2026-11-20T08:01:00',
    topics: ['Developer Tools', 'Productivity'],
    media: [
      { url: 'https://img.example.com/1.png', type: 'image', videoUrl: null },
      { url: 'https://img.example.com/2.png', type: 'video', videoUrl: 'https://youtube.com/watch?v=x' },
    ],
    thumbnail: { url: 'https://img.example.com/t.png', type: 'image' },
    product_links: [{ url: 'https://daybook.dev', type: 'Website' }],
    comments: [{ body: 'Congrats on the launch!', created_at: '2026-11-20T09:00:00Z' }],
    updated_at: '2026-11-21T10:00:00',
    ...overrides,
  };
}

/**
 * An enterprise answer as the upstream sends it, about the sample record with `overrides`, landed
 * at `fetchedAt` (now unless told): what `ingestEnterpriseSuccess` takes.
 */
export function enterpriseAnswer(
  overrides: Record<string, unknown>,
  fetchedAt: Date = new Date(),
): { data: EnterpriseSuccess; exchange: Exchange } {
  const body = {
    status: 'success',
    markdown: '# x',
    metadata: { usage: { credits: 3, remark: 'enterprise' }, content: sampleEnterpriseRecord(overrides) },
  };
  const bodyText = JSON.stringify(body);
  return {
    data: EnterpriseSuccess.parse(body),
    exchange: {
      operation: 'enterprise-search',
      params: { ent_name: String(overrides.ENTNAME) },
      httpStatus: 200,
      bodyText,
      bodyJson: JSON.parse(bodyText),
      durationMs: 5,
      fetchedAt,
    },
  };
}

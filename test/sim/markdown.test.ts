import { describe, expect, it } from 'vitest';
import { commentPreview, renderEnterpriseMarkdown, renderProductMarkdown } from '../../src/sim/markdown.ts';
import type { SimEnterprise, SimProduct } from '../../src/sim/types.ts';
import { sampleEnterpriseRecord, sampleProductRecord } from '../support/records.ts';

/** The sample enterprise, with every value the rendered markdown below shows. */
function enterprise(overrides: Partial<SimEnterprise> = {}): SimEnterprise {
  return sampleEnterpriseRecord({
    ENTNAME: '上海星图信息科技有限公司',
    LEGALPERSON: '张伟',
    ENTTYPE: '有限责任公司(自然人投资或控股)',
    OPTO: '9999-12-31',
    REGORG: '上海市浦东新区市场监督管理局',
    APPRDATE: '2023-03-01T00:00:00.000Z',
    OPLOC: '上海市浦东新区张江路88号',
    OPSCOPE: '软件开发；信息技术咨询服务。',
    PERSONS: [
      { NAME: '张伟', POSITION: '执行董事' },
      { NAME: '李娜', POSITION: '监事' },
    ],
    BE_INVEST: [
      { INV: '张伟', INVTYPE: '自然人股东' },
      { PID: 'p-2', INV: '上海云帆投资有限公司', INVTYPE: '企业法人' },
    ],
    industry_middle: '软件开发',
    ...overrides,
  }) as unknown as SimEnterprise;
}

/** The sample product, with every value the rendered markdown below shows. */
function product(overrides: Partial<SimProduct> = {}): SimProduct {
  return sampleProductRecord({
    name: 'NovaDesk',
    tagline: 'Your AI copilot for customer support',
    description: 'NovaDesk helps support teams answer faster.',
    votes_count: 321,
    comments_count: 42,
    created_at: '2026-03-04T08:01:07',
    featured_at: '2026-03-04T08:01:30',
    topics: ['Artificial Intelligence', 'SaaS'],
    comments: [
      { body: 'Congrats on the launch! 🎉', created_at: '2026-03-04T10:00:00.000Z' },
      { body: 'Line one.\n\nLine **two**.', created_at: '2026-03-04T09:00:00.000Z' },
    ],
    updated_at: '2026-03-04T20:00:00',
    ...overrides,
  }) as unknown as SimProduct;
}

function headingOrder(md: string): string[] {
  return md.split('\n').filter((l) => l.startsWith('#'));
}

describe('renderEnterpriseMarkdown', () => {
  it('writes the sections in the documented order', () => {
    expect(headingOrder(renderEnterpriseMarkdown(enterprise()))).toEqual([
      '# 上海星图信息科技有限公司',
      '## Basic Information',
      '## Business Scope',
      '## Key Personnel',
      '## Shareholder Information',
      '## Industry Information',
      '## Number of Insured Employees',
    ]);
  });

  it('writes the basic information bullets in order, with plain dates', () => {
    const md = renderEnterpriseMarkdown(enterprise());
    const labels = md
      .split('## Business Scope')[0]
      ?.split('\n')
      .filter((l) => l.startsWith('- '));
    expect(labels).toEqual([
      '- **Listed**: No',
      '- **Legal Representative**: 张伟',
      '- **Establishment Date**: 2008-05-12',
      '- **Registration Number**: 310141000157096',
      '- **Unified Social Credit Code**: 91310115342050446K',
      '- **Enterprise Type**: 有限责任公司(自然人投资或控股)',
      '- **Registered Capital**: 500万人民币',
      '- **Operating Period**: 2008-05-12 to 9999-12-31',
      '- **Registration Authority**: 上海市浦东新区市场监督管理局',
      '- **Approval Date**: 2023-03-01',
      '- **Operating Status**: 存续',
      '- **Address**: 上海市浦东新区张江路88号',
    ]);
  });

  it('lists people, shareholders, industry and insured employees', () => {
    const md = renderEnterpriseMarkdown(enterprise({ IS_LISTED: 1 }));
    expect(md).toContain('- **Listed**: Yes');
    expect(md).toContain('## Business Scope\n\n软件开发；信息技术咨询服务。');
    expect(md).toContain('## Key Personnel\n\n- 张伟: 执行董事\n- 李娜: 监事');
    expect(md).toContain(
      '## Shareholder Information\n\n- 张伟: 自然人股东\n- 上海云帆投资有限公司: 企业法人',
    );
    expect(md).toContain(
      '## Industry Information\n\n- **Industry Category**: I\n- **Industry Class**: 软件和信息技术服务业\n- **Industry Subclass**: 软件开发',
    );
    expect(md.endsWith('## Number of Insured Employees\n\n12')).toBe(true);
  });

  it('keeps a textual operating period end as given', () => {
    const md = renderEnterpriseMarkdown(enterprise({ OPTO: '长期' }));
    expect(md).toContain('- **Operating Period**: 2008-05-12 to 长期');
  });

  it('writes Unknown for empty and missing values', () => {
    const odd = {
      ...enterprise({ LEGALPERSON: '', REGCAP: Number.NaN, OPTO: '', PERSONS: [], BE_INVEST: [] }),
      participants: undefined,
      industry_middle: null,
    } as unknown as SimEnterprise;
    const md = renderEnterpriseMarkdown(odd);
    expect(md).toContain('- **Legal Representative**: Unknown');
    expect(md).toContain('- **Registered Capital**: Unknown');
    expect(md).toContain('- **Operating Period**: 2008-05-12 to Unknown');
    expect(md).toContain('## Key Personnel\n\nUnknown');
    expect(md).toContain('## Shareholder Information\n\nUnknown');
    expect(md).toContain('- **Industry Subclass**: Unknown');
    expect(md.endsWith('## Number of Insured Employees\n\nUnknown')).toBe(true);
  });

  it('does not throw on a record with missing arrays and wrong types', () => {
    const broken = {
      ENTNAME: 'X',
      PERSONS: null,
      BE_INVEST: 'none',
      IS_LISTED: 'maybe',
    } as unknown as SimEnterprise;
    const md = renderEnterpriseMarkdown(broken);
    expect(md).toContain('# X');
    expect(md).toContain('- **Listed**: Unknown');
  });
});

describe('renderProductMarkdown', () => {
  it('writes the parts in the documented order', () => {
    const md = renderProductMarkdown(product());
    expect(md.split('\n\n')).toEqual([
      '# NovaDesk',
      '**Your AI copilot for customer support**',
      'NovaDesk helps support teams answer faster.',
      [
        '- **Votes**: 321',
        '- **Comments**: 42',
        '- **Created at**: 2026-03-04 08:01:07',
        '- **Featured at**: 2026-03-04 08:01:30',
      ].join('\n'),
      '## Topics',
      'Artificial Intelligence, SaaS',
      '## Comments',
      '- Congrats on the launch! 🎉\n- Line one. Line **two**.',
      'Last updated: 2026-03-04 20:00:00',
    ]);
  });

  it('ends with a Last updated line', () => {
    const lines = renderProductMarkdown(product()).split('\n');
    expect(lines[lines.length - 1]).toMatch(/^Last updated: \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  it('cuts long comments to 120 characters and ends them with an ellipsis', () => {
    const long = `${'word '.repeat(60)}end`;
    const md = renderProductMarkdown(
      product({ comments: [{ body: long, created_at: '2026-03-04T10:00:00.000Z' }] }),
    );
    const bullet = md.split('\n').find((l) => l.startsWith('- word')) ?? '';
    expect(bullet.endsWith('...')).toBe(true);
    expect(bullet.length).toBeLessThanOrEqual(2 + 120 + 3);
  });

  it('never splits an emoji when cutting a comment', () => {
    const preview = commentPreview(`${'a'.repeat(119)}👋🏽 and more text after the cut`);
    expect(preview).toBe(`${'a'.repeat(119)}👋🏽...`);
  });

  it('leaves short comments whole, with line breaks flattened', () => {
    expect(commentPreview('Nice!\nReally nice.')).toBe('Nice! Really nice.');
  });

  it('writes Unknown for empty topics, empty comments and missing values', () => {
    const odd = {
      ...product({ topics: [], comments: [], tagline: '' }),
      votes_count: null,
    } as unknown as SimProduct;
    const md = renderProductMarkdown(odd);
    expect(md).toContain('**Unknown**');
    expect(md).toContain('- **Votes**: Unknown');
    expect(md).toContain('## Topics\n\nUnknown');
    expect(md).toContain('## Comments\n\nUnknown');
  });

  it('does not throw on a product with missing arrays', () => {
    const broken = { name: 'Y', comments: null, topics: 'AI' } as unknown as SimProduct;
    expect(() => renderProductMarkdown(broken)).not.toThrow();
    expect(renderProductMarkdown(broken)).toContain('Last updated: Unknown');
  });
});

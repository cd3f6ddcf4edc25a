import { describe, expect, it } from 'vitest';
import { escapeText, html, safeHttpUrl } from '../../src/console/html.ts';
import { chooseLang } from '../../src/console/i18n.ts';
import { csvField } from '../../src/console/routes.ts';

describe('escaping for the console', () => {
  it('turns markup, quotes and backticks into entities', () => {
    expect(escapeText(`<img src=x onerror="alert('1')">\``)).toBe(
      '&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&#96;',
    );
  });

  it('shows bidi controls, ANSI escapes and other invisible characters as visible text', () => {
    expect(escapeText('a\u202Eb\u2066c\u200Bd\u001b[31me\u0000f\u2028g')).toBe(
      'a\\u202eb\\u2066c\\u200bd\\u001b[31me\\u0000f\\u2028g',
    );
    expect(escapeText('tab\tand\nnewline')).toBe('tab\tand\nnewline');
  });

  it('escapes every value given to the html tag, but not what the tag made', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${'"x"'}">${inner}${['<', '>']}${null}${false}</p>`.text).toBe(
      '<p title="&quot;x&quot;"><b>&lt;i&gt;</b>&lt;&gt;</p>',
    );
  });

  it('links only http and https addresses', () => {
    expect(safeHttpUrl('https://example.com/a?b=1')).toBe('https://example.com/a?b=1');
    for (const bad of [
      'javascript:alert(1)',
      ' JavaScript:alert(1)',
      'data:text/html,x',
      '/ui/',
      '//evil.example',
      '',
    ])
      expect(safeHttpUrl(bad), bad).toBeNull();
  });

  it('keeps a CSV cell a spreadsheet would run as a formula as text', () => {
    expect(csvField('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`);
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField(null)).toBe('');
  });
});

describe('the language of a page', () => {
  it('follows ?lang=, then the cookie, then the best of Accept-Language, else English', () => {
    expect(chooseLang('zh', 'en', 'en')).toBe('zh');
    expect(chooseLang(undefined, 'zh', 'en-US')).toBe('zh');
    expect(chooseLang(undefined, undefined, 'fr;q=1, zh-TW;q=0.8, en;q=0.5')).toBe('zh');
    expect(chooseLang(undefined, undefined, 'en-GB, zh;q=0.9')).toBe('en');
    expect(chooseLang(undefined, undefined, 'zh;q=0, en;q=0.1')).toBe('en');
    expect(chooseLang('xx', 'yy', undefined)).toBe('en');
  });
});

import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/log/redact.ts';

const KEY = 'sk-live-Abc123/xyz+Q9';

const jsonEscaped = (s: string, every = 2) =>
  [...s]
    .map((c, i) => (i % every === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c))
    .join('');

describe('redacting a secret by value', () => {
  it.each([
    ['as is', KEY],
    ['upper case', KEY.toUpperCase()],
    ['lower case', KEY.toLowerCase()],
    ['with JSON escapes', jsonEscaped(KEY)],
    ['with every character a JSON escape', jsonEscaped(KEY, 1)],
    [
      'with upper-case hex in its escapes',
      jsonEscaped(KEY).replace(/\\u00([0-9a-f]{2})/g, (_m, h: string) => `\\u00${h.toUpperCase()}`),
    ],
    ['with its slash escaped', KEY.replace('/', '\\/')],
    ['URL-encoded', encodeURIComponent(KEY)],
    ['fully percent-encoded', [...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')],
    ['in base64', Buffer.from(`Bearer ${KEY}`).toString('base64')],
    ['in base64 at another alignment', Buffer.from(`x${KEY}yz`).toString('base64')],
    ['in base64url', Buffer.from(`ab${KEY}`).toString('base64url')],
  ])('finds it %s, inside other text', (_how, form) => {
    const text = `{"error":{"message":"bad key ${form} given"}}`;
    const out = redactSecrets(text, [KEY]);
    expect(out).toContain('[redacted]');
    expect(out.toLowerCase()).not.toContain(KEY.toLowerCase());
    // Nothing that decodes back to the key is left.
    const decoded = decodeURIComponent(
      out.replace(/\\u([0-9a-f]{4})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
    );
    expect(decoded.toLowerCase()).not.toContain(KEY.toLowerCase());
    for (const chunk of out.split(/[^A-Za-z0-9+/_-]+/)) {
      const b = Buffer.from(
        chunk,
        chunk.includes('-') || chunk.includes('_') ? 'base64url' : 'base64',
      ).toString('latin1');
      expect(b).not.toContain(KEY.slice(2, -2));
    }
  });

  it('leaves text without the secret alone', () => {
    const text = '{"status":"success","metadata":{"content":{"ENTNAME":"上海示例科技有限公司"}}}';
    expect(redactSecrets(text, [KEY])).toBe(text);
  });
});

/**
 * daybook appends /v1/<operation> to DAYBOOK_API_BASE_URL, so a base that ends in /v1 could only
 * ever call /v1/v1/…: it is refused, with the base to set instead.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';

const load = (base: string) => loadConfig({ DAYBOOK_API_BASE_URL: base }, '/nonexistent/.env');
const problems = (base: string): string[] => {
  try {
    load(base);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('DAYBOOK_API_BASE_URL', () => {
  it('is taken without /v1, with any path before it', () => {
    for (const base of [
      'https://api.example.com',
      'https://api.example.com/',
      'https://gw.example.com/upstream',
      'https://gw.example.com/v1beta',
      'https://gw.example.com/api/v10',
      'https://gw.example.com/v1/tenant',
    ])
      expect(load(base).DAYBOOK_API_BASE_URL, base).toBe(base);
  });

  it('ending in /v1 is refused, naming the base to use, its password masked', () => {
    const cases: [string, string][] = [
      ['https://api.example.com/v1', 'https://api.example.com'],
      ['https://api.example.com/v1/', 'https://api.example.com'],
      ['https://api.example.com/V1//', 'https://api.example.com'],
      ['http://127.0.0.1:8787/proxy/v1?x=1', 'http://127.0.0.1:8787/proxy'],
      ['https://u:hunter2@api.example.com/v1', 'https://u:***@api.example.com'],
    ];
    for (const [base, suggested] of cases) {
      const found = problems(base);
      expect(found, base).toHaveLength(1);
      expect(found[0]).toMatch(/^DAYBOOK_API_BASE_URL ends in \/v1, but daybook adds \/v1\/<operation>/);
      expect(found[0]?.endsWith(`set it without /v1, to ${suggested}`), found[0]).toBe(true);
      expect(found[0]).not.toContain('hunter2');
    }
  });

  it('is where the client puts /v1/<operation>: the base it accepts gives one /v1', () => {
    const client = new UpstreamClient({
      baseUrl: load('https://api.example.com/').DAYBOOK_API_BASE_URL as string,
      apiKey: 'k',
    });
    expect(client.baseUrl).toBe('https://api.example.com');
  });

  it('a malformed URL gets the one message it always got', () => {
    expect(problems('htp:/v1')).toEqual([
      'DAYBOOK_API_BASE_URL must be a URL starting with http:// or https://',
    ]);
  });
});

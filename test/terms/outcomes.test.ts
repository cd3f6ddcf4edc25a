/**
 * The permanent outcomes of a watch entry: the upstream's permanent verdicts on the entry itself,
 * each with words in the catalogue, and no passing fault or budget stop among them (those must
 * be asked again soon, not rested for a week).
 */
import { describe, expect, it } from 'vitest';
import { TOKENS } from '../../src/terms/fields.ts';
import { PERMANENT_OUTCOMES } from '../../src/terms/outcomes.ts';
import { errorForCode, type ResponseContext } from '../../src/upstream/errors.ts';

const request = { operation: 'enterprise-search', params: { keyword: 'x' } } as const;
const response: ResponseContext = { httpStatus: 400, bodyText: null, durationMs: 1, fetchedAt: new Date(0) };

describe('PERMANENT_OUTCOMES', () => {
  it.each([
    ['not_found', true],
    ['invalid_parameter', true],
    ['success', false],
    ['rate_limit_exceeded', false],
    ['insufficient_credits', false],
    ['server_error', false],
    ['timeout', false],
    ['network_error', false],
    ['unexpected_response', false],
    ['', false],
  ] as const)('%j is permanent: %s', (outcome, permanent) => {
    expect(PERMANENT_OUTCOMES.has(outcome)).toBe(permanent);
  });

  it('holds only codes the upstream answers with a permanent error, each with words', () => {
    for (const code of PERMANENT_OUTCOMES) {
      expect(errorForCode(code, 'no', request, response, null).errorClass, code).toBe('permanent');
      expect(Object.hasOwn(TOKENS.reason, code), code).toBe(true);
    }
  });
});

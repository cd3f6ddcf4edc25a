import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiText } from '../../src/upstream/openapi.ts';
import { startTestSim } from '../support/sim.ts';

describe('the OpenAPI document', () => {
  it('the committed copy equals the one generated from the schemas (regenerate: npm run openapi)', () => {
    const committed = readFileSync(join(import.meta.dirname, '../../src/upstream/openapi.json'), 'utf8');
    expect(committed).toBe(openApiText());
  });

  it('the simulator serves it at /openapi.json', async () => {
    const sim = await startTestSim({ enterprises: 10 });
    try {
      const doc = (await (await fetch(`${sim.url}/openapi.json`)).json()) as Record<string, unknown>;
      expect(doc.openapi).toBe('3.1.0');
      expect(Object.keys(doc.paths as object)).toEqual(['/v1/enterprise-search', '/v1/product-listing']);
      expect(JSON.stringify(doc)).toContain('"ENTNAME"');
    } finally {
      await sim.close();
    }
  });
});

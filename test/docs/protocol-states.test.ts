/**
 * The states of a buy drawn in docs/architecture.md, between `<!-- protocol-states:begin -->` and
 * `<!-- protocol-states:end -->`, are the table of src/purchase/states.ts drawn now
 * (scripts/protocol-states.ts): the page cannot drift from the code.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ARCHITECTURE_PATH,
  REDRAW,
  readBlock,
  statesBlock,
  writeBlock,
} from '../../scripts/protocol-states.ts';
import { BUY_STATES, FETCH_STATUSES, STORED_STATUS, TRANSITIONS } from '../../src/purchase/states.ts';

describe('the states of a buy in docs/architecture.md', () => {
  const page = readFileSync(ARCHITECTURE_PATH, 'utf8');

  it('are the table drawn now', () => {
    expect(
      readBlock(page),
      `docs/architecture.md: the states of a buy differ from src/purchase/states.ts; run ${REDRAW}`,
    ).toBe(statesBlock());
  });

  it('are redrawn in place, the rest of the page left as it is', () => {
    const stale = page.replace(statesBlock(), '\nstale\n');
    expect(writeBlock(stale)).toBe(page);
    expect(() => readBlock('no markers')).toThrow(/protocol-states:begin/);
  });

  it('draw every move, and every status of a cycle fetch as some state', () => {
    const block = statesBlock();
    for (const t of TRANSITIONS) expect(block).toContain(`: ${t.step}\n`);
    expect(block.split('\n').filter((l) => l.includes(' --> '))).toHaveLength(TRANSITIONS.length);
    const stored = new Set(BUY_STATES.map((s) => STORED_STATUS[s]));
    for (const status of FETCH_STATUSES) expect(stored.has(status), status).toBe(true);
  });
});

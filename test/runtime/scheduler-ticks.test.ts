import { createTask } from 'node-cron';
import { describe, expect, it } from 'vitest';
import { scheduledPulls } from '../../jobs/products.ts';
import { lastTickAtOrBefore } from '../../src/runtime/scheduler.ts';
import { cycleOf } from '../../src/time/cycles.ts';

function matcher(expression: string, timezone = 'Asia/Shanghai') {
  const task = createTask(expression, () => {}, { timezone });
  return (d: Date) => task.match(d);
}

describe('scheduler tick maths', () => {
  it('finds the latest 03:30 Beijing tick before a moment, in the Shanghai zone', () => {
    const m = matcher('30 3 * * *');
    expect(lastTickAtOrBefore(m, new Date('2026-11-22T00:00:00Z'))?.toISOString()).toBe(
      '2026-11-21T19:30:00.000Z',
    );
    expect(lastTickAtOrBefore(m, new Date('2026-11-21T19:29:00Z'))?.toISOString()).toBe(
      '2026-11-20T19:30:00.000Z',
    );
  });

  it('names the cycle of a tick by its scheduled time, across a date change and a leap day', () => {
    const m = matcher('30 3 * * *');
    const tick = lastTickAtOrBefore(m, new Date('2028-02-28T19:45:00Z'));
    expect(tick?.toISOString()).toBe('2028-02-28T19:30:00.000Z');
    expect(cycleOf(tick as Date)).toBe('2028-02-29');
  });

  it('pulls yesterday first and re-pulls the day before', () => {
    expect(scheduledPulls('2026-11-22', 2)).toEqual([
      { date: '2026-11-21', pull: 'd1' },
      { date: '2026-11-20', pull: 'd2' },
    ]);
  });
});

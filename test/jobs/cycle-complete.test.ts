/**
 * Completing a cycle is a step of its own: a refresh job that settles the last entry only asks for
 * it, under an id made of the cycle and the settled state; the step writes `cycle.completed` and
 * the digest once, however often it runs; the inline runner runs it once after its entries.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cycleCompleteJobId, processCycleComplete } from '../../jobs/cycle-complete.ts';
import type { JobDeps } from '../../jobs/deps.ts';
import { processEnterprise } from '../../jobs/enterprise.ts';
import { processPlan } from '../../jobs/plan.ts';
import { runInline } from '../../src/runtime/inline.ts';
import { keywordKey } from '../../src/watch/keyword.ts';
import { freshDatabase, type TestDatabase } from '../support/db.ts';
import { jobDepsAgainst } from '../support/job-deps.ts';
import { listenLocal } from '../support/net.ts';
import { sampleEnterpriseRecord } from '../support/records.ts';

const KEYWORDS = ['alpha', 'beta', 'gamma'];

describe('the cycle-complete step', () => {
  let t: TestDatabase;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    t = await freshDatabase();
    server = createServer((req, res) => {
      const keyword = new URL(req.url ?? '/', 'http://x').searchParams.get('ent_name') ?? '';
      res.setHeader('content-type', 'application/json');
      const content = sampleEnterpriseRecord({ PID: `pid-${keyword}`, ENTNAME: `${keyword} 有限公司` });
      res.end(
        JSON.stringify({ status: 'success', markdown: '# x', metadata: { usage: { credits: 3 }, content } }),
      );
    });
    url = await listenLocal(server);
    await t.sql`insert into watchlist ${t.sql(KEYWORDS.map((k) => ({ keyword: k, keyword_key: keywordKey(k) })))}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.drop();
  });

  function deps(asked: { cycle: string; mark: string }[], planned: number[]): JobDeps {
    return jobDepsAgainst(t, url, 'sk-cycle', {
      enterprises: async (_c, ids) => {
        planned.push(...ids);
        return ids.length;
      },
      cycleComplete: async (cycle, mark) => {
        asked.push({ cycle, mark });
      },
    });
  }

  const completions = async (cycle: string) =>
    (
      await t.sql<{ type: string }[]>`
        select type from events where cycle = ${cycle} and type in ('cycle.completed', 'digest.daily') order by seq`
    ).map((e) => e.type);

  it('is only asked for by the job that settles the last entry, and writes the completion once', async () => {
    const cycle = '2026-11-20';
    const asked: { cycle: string; mark: string }[] = [];
    const planned: number[] = [];
    const d = deps(asked, planned);
    await processPlan(d, { cycle }, 'plan-test');
    expect(planned).toHaveLength(KEYWORDS.length);
    for (const [i, watchId] of planned.entries()) {
      await processEnterprise(d, { cycle, watchId }, `enterprise-test-${watchId}`);
      // Before the last entry settles, nobody asks; settling writes no digest.
      if (i < planned.length - 1) expect(asked).toEqual([]);
    }
    expect(await completions(cycle)).toEqual([]);
    expect(asked).toHaveLength(1);
    const [ask] = asked;
    expect(ask?.cycle).toBe(cycle);
    expect(ask?.mark).toMatch(/^[0-9]+$/);
    // The same settled state gives the same id: a job asking again adds nothing new.
    await processEnterprise(d, { cycle, watchId: planned[0] ?? 0 }, 'enterprise-test-again');
    expect(asked.map((a) => cycleCompleteJobId(a.cycle, a.mark))).toEqual([
      cycleCompleteJobId(cycle, ask?.mark ?? ''),
      cycleCompleteJobId(cycle, ask?.mark ?? ''),
    ]);

    const first = await processCycleComplete(d, { cycle });
    const second = await processCycleComplete(d, { cycle });
    expect(first.outcome).toBe('succeeded');
    expect(second.outcome).toBe('skipped');
    expect(await completions(cycle)).toEqual(['cycle.completed', 'digest.daily']);
  });

  it('does nothing while the cycle still has work', async () => {
    const cycle = '2026-11-21';
    const d = deps([], []);
    await processPlan(d, { cycle }, 'plan-test-open');
    expect((await processCycleComplete(d, { cycle })).outcome).toBe('skipped');
    expect(await completions(cycle)).toEqual([]);
  });

  it('runs once at the end of an inline run', async () => {
    const cycle = '2026-11-22';
    const { enqueue: _ignored, ...inline } = deps([], []);
    const summary = await runInline(inline, { cycle, only: 'enterprises', concurrency: 2 });
    expect(summary.enterprises).toEqual({ succeeded: KEYWORDS.length });
    expect(await completions(cycle)).toEqual(['cycle.completed', 'digest.daily']);
  });
});
